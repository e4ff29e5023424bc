"""Old Maid (Old Maid paper, Section 3): 53 cards, pairs leave, the last holder of the joker loses.

Rules as in Section 3.1/3.2: all 53 cards (a standard deck less its second joker) are dealt; every
player removes all pairs (two cards of the same rank) from their hand — a virtual player through
the removal protocol; a player left without cards wins and leaves. Then, from the first seat on,
each player draws one card from the next player still in the game; a virtual player's draw is a
uniformly random card of that hand, picked after a shuffle, and is followed by the removal
protocol; anyone left without cards wins and leaves. The last player holding cards holds the
joker and loses. Any mix of humans and virtual players is allowed, including no humans.

The public state is what everyone at the table knows: hand sizes, and the multiset of cards still
in play (the deck minus the pairs laid down — the removal protocol's Step 6b shows exactly that).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

import numpy as np

from protocol_runner.cards import JOKER, Card, parse_cards, standard_deck
from protocol_runner.games.common import GameRecord, GameRuleError, deal

# The three loops of Step 6 of the removal protocol, (α, β, γ, δ): piles (α, β) and (γ, δ).
LOOPS: tuple[tuple[str, str, str, str], ...] = (
    ("S", "H", "D", "C"), ("S", "D", "H", "C"), ("S", "C", "H", "D"))

Phase = Literal["initial", "playing", "over"]


def old_maid_deck() -> tuple[Card, ...]:
    """The 53 cards the game is played with: 52 and one joker (the other joker helps the
    removal protocol)."""
    return standard_deck()[:-1]


def remove_pairs(hand: Sequence[Card]) -> tuple[list[Card], list[Card]]:
    """Split ``hand`` into (kept, removed) exactly as the removal protocol does: for each loop
    (α, β, γ, δ) in order, a rank held in both α and β leaves as a pair, then one in γ and δ.
    After the three loops every pair is gone (any two suits form a pile in one of the loops);
    of three cards of a rank the one left over is the one the protocol leaves."""
    held = Counter(hand)
    if any(count > 1 for count in held.values()):
        card = next(c for c, k in held.items() if k > 1)
        raise GameRuleError(f"{card} appears twice in one hand; the game has one of each card")
    removed: list[Card] = []
    for alpha, beta, gamma, delta in LOOPS:
        for first, second in ((alpha, beta), (gamma, delta)):
            for card in sorted(c for c in held if c.suit == first):
                mate = Card(f"{card.rank}{second}")
                if held[mate]:
                    del held[card], held[mate]
                    removed += [card, mate]
    return [c for c in hand if held[c]], removed


def check_pairs(cards: Sequence[Card]) -> None:
    """Raise unless ``cards`` can be split into pairs of one rank each."""
    counts = Counter(c.rank for c in cards)
    if None in counts:
        raise GameRuleError("the joker never pairs and cannot be laid down")
    odd = sorted(rank for rank, k in counts.items() if k % 2)
    if odd:
        raise GameRuleError(f"cards laid down must be pairs; rank {', '.join(map(str, odd))} is "
                            "laid down an odd number of times")


@dataclass(frozen=True, slots=True)
class OldMaidState:
    """The public state of a game of Old Maid."""

    virtual: tuple[bool, ...]
    sizes: tuple[int, ...]
    in_play: tuple[Card, ...]
    phase: Phase = "initial"
    turn: int = 0
    to_remove: frozenset[int] = frozenset()
    out: tuple[int, ...] = ()

    @classmethod
    def start(cls, virtual: Sequence[bool]) -> OldMaidState:
        """53 cards dealt to ``len(virtual)`` seats (2 to 53), the first seats get one more."""
        players = len(virtual)
        if not 2 <= players <= 53:
            raise GameRuleError(f"Old Maid is played by 2 to 53 players, not {players}")
        deck = old_maid_deck()
        sizes = tuple(len(deck) // players + (1 if i < len(deck) % players else 0)
                      for i in range(players))
        return cls(virtual=tuple(virtual), sizes=sizes, in_play=tuple(sorted(deck)),
                   to_remove=frozenset(range(players)))

    @property
    def players(self) -> int:
        return len(self.sizes)

    @property
    def loser(self) -> int | None:
        """The seat left holding the joker once the game is over."""
        if self.phase != "over":
            return None
        return next(i for i in range(self.players) if self.sizes[i] > 0)

    def next_in_game(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` that still holds cards."""
        for step in range(1, self.players):
            other = (seat + step) % self.players
            if self.sizes[other] > 0:
                return other
        raise GameRuleError("no other player holds cards")

    def after_removal(self, player: int, removed: Sequence[Card] | str) -> OldMaidState:
        """``player`` lays down ``removed`` (pairs; possibly none). In the initial phase every
        seat does this once; in play the player who just drew does it."""
        cards = parse_cards(removed) if isinstance(removed, str) else list(removed)
        if self.phase == "over":
            raise GameRuleError(f"the game is over: player {self.loser} holds the joker")
        if player not in self.to_remove:
            raise GameRuleError(f"player {player} has no pairs to lay down now")
        check_pairs(cards)
        left = Counter(self.in_play)
        left.subtract(cards)
        if any(k < 0 for k in left.values()):
            raise GameRuleError(f"{' '.join(map(str, cards))} are not all still in play")
        if len(cards) > self.sizes[player]:
            raise GameRuleError(f"player {player} holds {self.sizes[player]} cards, cannot lay "
                                f"down {len(cards)}")
        sizes = list(self.sizes)
        sizes[player] -= len(cards)
        state = replace(self, sizes=tuple(sizes), to_remove=self.to_remove - {player},
                        in_play=tuple(sorted((+left).elements())))
        return state._settle(player)

    def after_draw(self, player: int) -> OldMaidState:
        """``player`` draws one card from the next seat still in the game."""
        if self.phase != "playing":
            raise GameRuleError("drawing starts once every player has laid down their pairs"
                                if self.phase == "initial" else "the game is over")
        if player != self.turn or self.to_remove:
            raise GameRuleError(f"it is player {self.turn}'s turn to "
                                + ("lay down pairs" if self.to_remove else "draw"))
        source = self.next_in_game(player)
        sizes = list(self.sizes)
        sizes[source] -= 1
        sizes[player] += 1
        state = replace(self, sizes=tuple(sizes), to_remove=frozenset({player}))
        if sizes[source] == 0:
            state = replace(state, out=state.out + (source,))
        return state

    def _settle(self, player: int) -> OldMaidState:
        out = self.out
        if self.sizes[player] == 0 and player not in out:
            out = out + (player,)
        state = replace(self, out=out)
        if state.to_remove:
            return state
        holding = [i for i in range(self.players) if state.sizes[i] > 0]
        if len(holding) <= 1:
            if Counter(state.in_play) != Counter([Card(JOKER)]):
                raise GameRuleError("one player is left but cards other than the joker remain: "
                                    "a pair was not laid down")
            return replace(state, phase="over")
        if self.phase == "initial":
            return replace(state, phase="playing", turn=holding[0])
        return replace(state, turn=state.next_in_game(player))



class Remover(Protocol):
    """Runs the removal protocol for ``seat`` over all hands (the protocol lays out every hand):
    returns the hands afterwards and the cards laid down."""

    def __call__(self, hands: Sequence[Sequence[Card]], seat: int
                 ) -> tuple[list[list[Card]], list[Card]]:
        ...


def remove_by_rule(hands: Sequence[Sequence[Card]], seat: int
                   ) -> tuple[list[list[Card]], list[Card]]:
    """A human laying down their own pairs (what the removal protocol computes, in the open)."""
    kept, removed = remove_pairs(hands[seat])
    return [list(h) if i != seat else kept for i, h in enumerate(hands)], removed


def play_old_maid(virtual: Sequence[bool], rng: np.random.Generator, virtual_removal: Remover,
                  max_draws: int = 100_000) -> GameRecord:
    """Deal and play a whole game. Virtual seats lay down pairs with ``virtual_removal`` (the
    removal protocol); every draw takes a uniformly random card of the next hand (a virtual
    player's draw is made after a shuffle of that hand; a human's draw is blind too).
    ``winners`` lists the seats in the order they went out; the loser is the seat missing."""
    state = OldMaidState.start(virtual)
    hands, _ = deal(old_maid_deck(), len(virtual), rng)
    moves: list[str] = []
    runs = 0

    def lay_down(seat: int) -> None:
        nonlocal hands, state, runs
        remover = virtual_removal if virtual[seat] else remove_by_rule
        runs += bool(virtual[seat])
        hands, removed = remover(hands, seat)
        state = state.after_removal(seat, removed)
        moves.append(f"{seat}:remove " + " ".join(map(str, sorted(removed))))

    for seat in sorted(range(len(virtual)), key=lambda i: (virtual[i], i)):
        lay_down(seat)
    for _ in range(max_draws):
        if state.phase == "over":
            loser = state.loser
            assert loser is not None and hands[loser] == [Card(JOKER)]
            return GameRecord("old-maid", tuple(moves), state.out, protocol_runs=runs)
        seat = state.turn
        source = state.next_in_game(seat)
        hands[seat].append(hands[source].pop(int(rng.integers(len(hands[source])))))
        state = state.after_draw(seat)
        moves.append(f"{seat}:draw from {source}")
        lay_down(seat)
    raise GameRuleError(f"the game did not end within {max_draws} draws")
