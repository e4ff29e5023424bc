"""What the four extra games share: the rule-error type, dealing, and how a player chooses.

A *chooser* is how a seat picks a card in a whole-game simulation: given its hand and a validity
mask it returns the index it plays (or ``None`` to pass). Virtual players choose through the card
selection protocol of the UNO paper (the engine's machine); simulated humans choose uniformly
among valid cards, which is what a table of casual players looks like to the rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from protocol_runner.cards import Card


class GameRuleError(ValueError):
    """A move the rules forbid (wrong card, wrong player, a game already over)."""


class Chooser(Protocol):
    """Pick a card of ``hand``: an index, or ``None`` for "nothing to play".

    ``valid`` judges any card against the public state (the selection protocol checks every
    card on the table with it); ``others`` are the other owner groups' cards — the other players'
    hands and the unplayed deck or boneyard — which the selection protocol lays out too.
    ``always`` is Hearts' rule (the original covert lottery): some card is played even if none
    is valid. Without it a hand with no valid card returns ``None``.
    """

    def __call__(self, hand: Sequence[Card], valid: Callable[[Card], bool], *, always: bool,
                 others: Sequence[Sequence[Card]]) -> int | None:
        ...


def uniform_chooser(rng: np.random.Generator) -> Chooser:
    """A simulated human: a uniformly random valid card (any card if ``always`` and none valid)."""

    def choose(hand: Sequence[Card], valid: Callable[[Card], bool], *, always: bool,
               others: Sequence[Sequence[Card]]) -> int | None:
        options = [i for i, card in enumerate(hand) if valid(card)]
        if not options and always:
            options = list(range(len(hand)))
        return int(options[rng.integers(len(options))]) if options else None

    return choose


@dataclass
class SelectionPlayer:
    """A virtual player: every choice is one run of the UNO paper's card selection protocol on
    the engine's machine (R = 1, real shuffles from ``rng``), over every card not yet played —
    its hand (group θ1), then each other group. ``original`` picks the original covert lottery
    (Hearts). Counts what the table spent, for reports."""

    rng: np.random.Generator
    original: bool = False
    variant: str = "v2"
    runs: int = 0
    pile_scramble: int = 0
    helper_peak: int = 0

    def __call__(self, hand: Sequence[Card], valid: Callable[[Card], bool], *, always: bool,
                 others: Sequence[Sequence[Card]]) -> int | None:
        from protocol_runner.machine import VOCAB, Table, drive
        from protocol_runner.protocols.card_selection import Group, card_selection

        if always and not self.original:
            raise GameRuleError("a game where a card is always played needs original=True")
        groups = [Group("P1", len(hand))] + [Group(f"G{i + 2}", len(o))
                                             for i, o in enumerate(others)]
        areas = {"P1": VOCAB.tokens(hand)} | {f"G{i + 2}": VOCAB.tokens(o)
                                              for i, o in enumerate(others)}
        remaining = Counter(hand)
        for o in others:
            remaining += Counter(o)
        table = Table(1, areas, self.rng)
        drive(card_selection(groups, remaining, valid, self.variant,  # type: ignore[arg-type]
                             original=self.original), table)
        self.runs += 1
        self.pile_scramble += table.costs.pile_scramble
        self.helper_peak = max(self.helper_peak, table.costs.helper_total()[1])
        picked = table.area("selected")
        if picked.shape[1] == 0 or picked[0, 0] < 0:
            return None
        return list(hand).index(VOCAB.item(int(picked[0, 0])))  # type: ignore[arg-type]


def deal(cards: Sequence[Card], players: int, rng: np.random.Generator,
         per_player: int | None = None) -> tuple[list[list[Card]], list[Card]]:
    """Shuffle ``cards`` and deal them round-robin; return the hands and what is left undealt.

    Without ``per_player`` everything is dealt, so hands differ by at most one card (the first
    seats get the extra ones, as a dealer going round the table does).
    """
    if players < 1:
        raise GameRuleError(f"a game needs at least one player, not {players}")
    order = [cards[i] for i in rng.permutation(len(cards))]
    count = len(order) if per_player is None else per_player * players
    if count > len(order):
        raise GameRuleError(f"{players} players × {per_player} need {count} cards; "
                            f"there are only {len(order)}")
    hands: list[list[Card]] = [[] for _ in range(players)]
    for i, card in enumerate(order[:count]):
        hands[i % players].append(card)
    return hands, order[count:]


def check_seats(players: int, virtual: Sequence[bool], lo: int, hi: int, game: str) -> None:
    """Raise a clear error for a seat count the game cannot be played with."""
    if not lo <= players <= hi:
        raise GameRuleError(f"{game} is played by {lo} to {hi} players, not {players}")
    if len(virtual) != players:
        raise GameRuleError(f"{players} players but {len(virtual)} virtual/human flags")


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A whole simulated game: every public move in order (``"2:7H"``, ``"0:pass"``…) and who won.

    ``winners`` are seats; ``scores`` are the final scores where the game keeps any.
    """

    game: str
    moves: tuple[str, ...]
    winners: tuple[int, ...]
    scores: tuple[int, ...] = ()
    protocol_runs: int = 0
