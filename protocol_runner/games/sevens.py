"""Sevens (UNO paper, Section 5.1): 52 cards dealt out, runs built outwards from the sevens.

There is no unplayed deck. The ``7H`` opens the game; then a seven of a suit not yet opened, or a
card that extends its suit's run by one rank at either end, may be played. A player with no valid
card passes. The first player to empty their hand wins.

Who holds ``7H`` is not public when virtual players sit at the table, so the opening is played
like every other turn: from the first seat on, only ``7H`` is valid until it is down, and seats
without it pass. A virtual seat finds out by running the card selection protocol with that
validity, which reveals nothing more than whether it holds the card — what the table learns anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from protocol_runner.cards import RANKS, SUITS, Card, parse_card
from protocol_runner.games.common import (
    Chooser,
    GameRecord,
    GameRuleError,
    check_seats,
    deal,
    uniform_chooser,
)

OPENING_CARD = Card("7H")
SEVEN = RANKS.index("7") + 1  # ranks counted A = 1 … K = 13


def rank_value(card: Card) -> int:
    """A = 1, 2–10 as printed, J = 11, Q = 12, K = 13; only standard non-joker cards."""
    if card.rank is None:
        raise GameRuleError(f"{card} is not a card of the 52-card deck Sevens is played with")
    return RANKS.index(card.rank) + 1


def sevens_deck() -> tuple[Card, ...]:
    """The 52 cards Sevens uses (a standard deck without its jokers)."""
    return tuple(Card(rank + suit) for suit in SUITS for rank in RANKS)


@dataclass(frozen=True, slots=True)
class SevensTable:
    """The cards laid out: per suit (in ``SUITS`` order) the run's lowest and highest rank."""

    runs: tuple[tuple[int, int] | None, ...] = (None, None, None, None)

    def valid(self, card: Card) -> bool:
        """May ``card`` be played now? This is the card selection protocol's validity."""
        if card.rank is None:
            return False
        if all(run is None for run in self.runs):
            return card == OPENING_CARD
        value, run = rank_value(card), self.runs[SUITS.index(card.suit or "")]
        if run is None:
            return value == SEVEN
        return value in (run[0] - 1, run[1] + 1)

    def play(self, card: Card) -> SevensTable:
        if not self.valid(card):
            raise GameRuleError(f"{card} cannot be played on {self.describe()}: "
                                f"valid now are {', '.join(map(str, self.playable())) or 'none'}")
        index, value = SUITS.index(card.suit or ""), rank_value(card)
        run = self.runs[index]
        new = (value, value) if run is None else (min(run[0], value), max(run[1], value))
        return SevensTable(self.runs[:index] + (new,) + self.runs[index + 1:])

    def playable(self) -> list[Card]:
        """Every card that would be valid now."""
        return [card for card in sevens_deck() if self.valid(card)]

    def played(self) -> list[Card]:
        return [Card(RANKS[v - 1] + suit) for suit, run in zip(SUITS, self.runs, strict=True)
                if run is not None for v in range(run[0], run[1] + 1)]

    def describe(self) -> str:
        parts = [f"{RANKS[run[0] - 1]}{suit}–{RANKS[run[1] - 1]}{suit}"
                 for suit, run in zip(SUITS, self.runs, strict=True) if run is not None]
        return "the table " + (", ".join(parts) if parts else "(empty)")


def sevens_valid(card: Card, table: SevensTable) -> bool:
    """Card + public state → valid? (the function the selection protocol is given)."""
    return table.valid(card)


@dataclass(frozen=True, slots=True)
class SevensState:
    """Everything public in a game of Sevens: the table, hand sizes, whose turn, the winner."""

    sizes: tuple[int, ...]
    virtual: tuple[bool, ...]
    table: SevensTable = SevensTable()
    turn: int = 0
    winner: int | None = None
    passes_in_a_row: int = 0

    @classmethod
    def start(cls, virtual: Sequence[bool]) -> SevensState:
        """All 52 cards dealt to ``len(virtual)`` seats, seat 0 first (2 to 8 players)."""
        players = len(virtual)
        check_seats(players, virtual, 2, 8, "Sevens")
        sizes = tuple(52 // players + (1 if i < 52 % players else 0) for i in range(players))
        return cls(sizes=sizes, virtual=tuple(virtual))

    @property
    def over(self) -> bool:
        return self.winner is not None

    def _check_turn(self, player: int) -> None:
        if self.over:
            raise GameRuleError(f"the game is over: player {self.winner} has won")
        if player != self.turn:
            raise GameRuleError(f"it is player {self.turn}'s turn, not player {player}'s")

    def after_play(self, player: int, card: Card | str) -> SevensState:
        """``player`` lays ``card``; the rules are checked, the turn passes on."""
        self._check_turn(player)
        card = parse_card(card) if isinstance(card, str) else card
        table = self.table.play(card)
        sizes = list(self.sizes)
        sizes[player] -= 1
        winner = player if sizes[player] == 0 else None
        return replace(self, table=table, sizes=tuple(sizes), winner=winner,
                       turn=(player + 1) % len(sizes), passes_in_a_row=0)

    def after_pass(self, player: int) -> SevensState:
        """``player`` has no valid card. (Whether that is true only their hand knows; a seat that
        passes every round while cards are still to be laid is reported by ``stuck``.)"""
        self._check_turn(player)
        return replace(self, turn=(player + 1) % len(self.sizes),
                       passes_in_a_row=self.passes_in_a_row + 1)

    @property
    def stuck(self) -> bool:
        """Everyone passed a whole round although cards remain: someone passed with a valid card
        (every card is in some hand, so some card is always playable)."""
        return self.passes_in_a_row >= len(self.sizes)


def play_sevens(virtual: Sequence[bool], rng: np.random.Generator, virtual_player: Chooser,
                human: Chooser | None = None) -> GameRecord:
    """Deal and play a whole game; virtual seats choose with ``virtual_player`` (the card
    selection protocol), humans with ``human`` (uniform among valid cards by default)."""
    state = SevensState.start(virtual)
    hands, _ = deal(sevens_deck(), len(virtual), rng)
    human = human or uniform_chooser(rng)
    moves: list[str] = []
    runs = 0
    while not state.over:
        if state.stuck:
            raise GameRuleError("every seat passed a whole round: a chooser passed with a valid "
                                "card")
        seat, hand = state.turn, hands[state.turn]
        valid = [state.table.valid(card) for card in hand]
        runs += bool(virtual[seat])
        others = [h for i, h in enumerate(hands) if i != seat]
        pick = (virtual_player if virtual[seat] else human)(hand, state.table.valid,
                                                            always=False, others=others)
        if pick is None:
            if any(valid):
                raise GameRuleError(f"seat {seat} passed holding a valid card")
            state = state.after_pass(seat)
            moves.append(f"{seat}:pass")
        else:
            card = hand.pop(pick)
            state = state.after_play(seat, card)
            moves.append(f"{seat}:{card}")
    assert state.winner is not None
    return GameRecord("sevens", tuple(moves), (state.winner,), protocol_runs=runs)
