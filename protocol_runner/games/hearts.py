"""Hearts (UNO paper, Section 5.2): four players, 13 tricks a round, rounds until someone has 100.

Rules as the paper states them: the first player of a trick may play any card; the others must
follow the suit led if they can, else play anything; the highest card of the suit led (ace high)
wins the trick and its points, and leads the next one. Every heart is worth 1 point and the
queen of spades 13. When a round ends and someone has reached 100 points, the game is over: that
player loses, the lowest score wins. The paper says nothing on who leads a round's first trick;
here seat ``round % 4`` does (the lead goes round the table). Passing cards, "hearts broken" and
shooting the moon are not part of the paper's rules and are not played.

A virtual seat chooses with the card selection protocol run with the *original* covert lottery,
which always selects a card: a valid one (same suit as the lead) if there is any, otherwise any.
The validity the protocol needs is therefore "card + public trick → follows the lead?".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from protocol_runner.cards import Card, parse_card
from protocol_runner.games.common import (
    Chooser,
    GameRecord,
    GameRuleError,
    deal,
    uniform_chooser,
)
from protocol_runner.games.sevens import rank_value, sevens_deck

PLAYERS = 4
QUEEN_OF_SPADES = Card("QS")
GAME_OVER_AT = 100


def hearts_deck() -> tuple[Card, ...]:
    """The 52 cards (no jokers)."""
    return sevens_deck()


def points(card: Card) -> int:
    """1 for a heart, 13 for the queen of spades, 0 otherwise."""
    if card == QUEEN_OF_SPADES:
        return 13
    return 1 if card.suit == "H" else 0


def strength(card: Card) -> int:
    """Rank order within a suit, ace high: 2 = 2 … K = 13, A = 14."""
    return 14 if card.rank == "A" else rank_value(card)


def hearts_valid(card: Card, trick: tuple[Card, ...]) -> bool:
    """Card + the trick so far → does it follow the lead? (any card leads an empty trick)."""
    return not trick or card.suit == trick[0].suit


def trick_winner(trick: tuple[Card, ...], leader: int) -> int:
    """The seat that played the highest card of the suit led."""
    if len(trick) != PLAYERS:
        raise GameRuleError(f"a trick has {PLAYERS} cards, not {len(trick)}")
    led = trick[0].suit
    best = max((i for i in range(PLAYERS) if trick[i].suit == led),
               key=lambda i: strength(trick[i]))
    return (leader + best) % PLAYERS


@dataclass(frozen=True, slots=True)
class HeartsState:
    """Everything public: scores, this round's points, the trick on the table, who shows void."""

    virtual: tuple[bool, ...]
    scores: tuple[int, ...] = (0, 0, 0, 0)
    round_points: tuple[int, ...] = (0, 0, 0, 0)
    round: int = 0
    tricks_done: int = 0
    leader: int = 0
    trick: tuple[Card, ...] = ()
    played: frozenset[Card] = frozenset()
    void: frozenset[tuple[int, str]] = frozenset()
    target: int = GAME_OVER_AT

    @classmethod
    def start(cls, virtual: tuple[bool, ...] | list[bool],
              target: int = GAME_OVER_AT) -> HeartsState:
        """``target``: the score that ends the game (100 by the rules; a table may agree on a
        shorter game)."""
        if len(virtual) != PLAYERS:
            raise GameRuleError(f"Hearts is played by {PLAYERS} players, not {len(virtual)}")
        if target < 1:
            raise GameRuleError(f"a game of Hearts ends at a positive score, not {target}")
        return cls(virtual=tuple(virtual), target=target)

    @property
    def turn(self) -> int:
        return (self.leader + len(self.trick)) % PLAYERS

    @property
    def over(self) -> bool:
        return self.tricks_done == 0 and not self.trick and max(self.scores) >= self.target

    @property
    def loser(self) -> int | None:
        return max(range(PLAYERS), key=lambda i: self.scores[i]) if self.over else None

    @property
    def winners(self) -> list[int]:
        """The seats with the lowest score once the game is over."""
        if not self.over:
            return []
        low = min(self.scores)
        return [i for i in range(PLAYERS) if self.scores[i] == low]

    def sizes(self) -> tuple[int, ...]:
        """Cards in each hand (13 at a round's start)."""
        return tuple(13 - self.tricks_done - (1 if (i - self.leader) % PLAYERS < len(self.trick)
                                              else 0) for i in range(PLAYERS))

    def valid(self, card: Card) -> bool:
        return hearts_valid(card, self.trick)

    def after_play(self, player: int, card: Card | str) -> HeartsState:
        """``player`` plays ``card`` to the trick. Refused: out of turn, a card already played,
        and a *revoke* — a card of a suit this player earlier showed to be void in."""
        if self.over:
            raise GameRuleError(f"the game is over: player {self.loser} reached {self.target}")
        if player != self.turn:
            raise GameRuleError(f"it is player {self.turn}'s turn, not player {player}'s")
        card = parse_card(card) if isinstance(card, str) else card
        if card.rank is None:
            raise GameRuleError(f"{card} is not a card of the 52-card deck Hearts is played with")
        if card in self.played:
            raise GameRuleError(f"{card} was already played this round")
        if (player, card.suit) in self.void:
            raise GameRuleError(f"player {player} did not follow {card.suit} earlier this round "
                                f"but now plays {card}: a revoke")
        void = self.void
        if self.trick and not self.valid(card):
            void = void | {(player, self.trick[0].suit or "")}
        state = replace(self, trick=self.trick + (card,), played=self.played | {card}, void=void)
        return state._close_trick() if len(state.trick) == PLAYERS else state

    def _close_trick(self) -> HeartsState:
        winner = trick_winner(self.trick, self.leader)
        won = list(self.round_points)
        won[winner] += sum(points(c) for c in self.trick)
        done = self.tricks_done + 1
        if done < 13:
            return replace(self, trick=(), leader=winner, tricks_done=done,
                           round_points=tuple(won))
        scores = tuple(s + p for s, p in zip(self.scores, won, strict=True))
        nxt = self.round + 1
        return replace(self, scores=scores, round_points=(0, 0, 0, 0), round=nxt, tricks_done=0,
                       leader=nxt % PLAYERS, trick=(), played=frozenset(), void=frozenset())

    def describe_trick(self) -> str:
        if not self.trick:
            return f"player {self.leader} leads"
        return "trick " + " ".join(map(str, self.trick)) + f" (led {self.trick[0].suit})"



def play_hearts(virtual: Sequence[bool], rng: np.random.Generator, virtual_player: Chooser,
                human: Chooser | None = None, max_rounds: int = 1000) -> GameRecord:
    """Play rounds until someone has 100 points; virtual seats choose with ``virtual_player``
    (the selection protocol with the original lottery: ``always=True``)."""
    state = HeartsState.start(list(virtual))
    human = human or uniform_chooser(rng)
    moves: list[str] = []
    runs = 0
    while not state.over:
        if state.round >= max_rounds:
            raise GameRuleError(f"no one reached {GAME_OVER_AT} points in {max_rounds} rounds")
        hands, _ = deal(hearts_deck(), PLAYERS, rng)
        this_round = state.round
        while state.round == this_round:
            seat, hand = state.turn, hands[state.turn]
            valid = [state.valid(card) for card in hand]
            runs += bool(virtual[seat])
            others = [h for i, h in enumerate(hands) if i != seat]
            pick = (virtual_player if virtual[seat] else human)(hand, state.valid, always=True,
                                                                others=others)
            if pick is None:
                raise GameRuleError(f"seat {seat} played nothing; in Hearts a card is always "
                                    "played")
            if any(valid) and not valid[pick]:
                raise GameRuleError(f"seat {seat} did not follow suit with {hand[pick]}")
            card = hand.pop(pick)
            state = state.after_play(seat, card)
            moves.append(f"{seat}:{card}")
    return GameRecord("hearts", tuple(moves), tuple(state.winners), state.scores, runs)
