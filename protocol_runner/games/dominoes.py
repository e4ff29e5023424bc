"""Dominoes, the Muggins / All Fives game (UNO paper, Section 5.3), with a double-six set.

Each player draws five tiles; the rest is the boneyard. The holder of the highest doublet plays
it as the first tile. Then each player in turn lays a tile whose end matches one of the line's two
open ends; one who cannot must draw from the boneyard until a tile fits, and passes only when the
boneyard is empty. Laying a tile scores the sum of the open ends when it is a multiple of five (a
doublet lying at an end counts both its halves; the opening tile counts its two halves). The game
ends when a player lays their last tile or when every player passed in a row (blocked); the
highest score wins. The line has two ends (no spinner), as the paper describes it.

**The opening with virtual players** (NOTES item 7): doublets are called from ``D66`` down. For
each called doublet every seat in turn answers; a virtual seat answers by running the card
selection protocol with only the doublets at least as high as the called one valid. Higher ones
were already called and are known not to be in any hand, so the protocol selects the called
doublet if the seat holds it and reports none otherwise — nothing else is revealed. If no seat
holds any doublet the tiles are shuffled and dealt again (``redeal``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from protocol_runner.cards import Card, domino_set, parse_card
from protocol_runner.games.common import (
    Chooser,
    GameRecord,
    GameRuleError,
    check_seats,
    deal,
    uniform_chooser,
)

TILES_EACH = 5
End = Literal["L", "R"]


def tile_pips(tile: Card) -> tuple[int, int]:
    if tile.pips is None:
        raise GameRuleError(f"{tile} is not a domino tile (tiles are D00 … D66)")
    return tile.pips


def opening_valid(tile: Card, called: int) -> bool:
    """Tile + the called doublet's number → valid for the opening? (doublets ≥ the called one)."""
    return tile.is_doublet and tile_pips(tile)[0] >= called


def fits(tile: Card, value: int) -> bool:
    return value in tile_pips(tile)


@dataclass(frozen=True, slots=True)
class LineEnd:
    """One open end of the line: the number showing, and whether a doublet lies there."""

    value: int
    doublet: bool

    @property
    def count(self) -> int:
        return 2 * self.value if self.doublet else self.value


@dataclass(frozen=True, slots=True)
class DominoState:
    """Everything public in a game of Muggins."""

    sizes: tuple[int, ...]
    virtual: tuple[bool, ...]
    boneyard: int
    scores: tuple[int, ...]
    turn: int = 0
    called: int | None = 6  # the doublet being called in the opening; None once it is laid
    line: tuple[Card, ...] = ()
    left: LineEnd | None = None
    right: LineEnd | None = None
    passes_in_a_row: int = 0
    finished: bool = False

    @classmethod
    def start(cls, virtual: tuple[bool, ...] | list[bool]) -> DominoState:
        players = len(virtual)
        check_seats(players, virtual, 2, 4, "Muggins")
        return cls(sizes=(TILES_EACH,) * players, virtual=tuple(virtual),
                   boneyard=len(domino_set()) - TILES_EACH * players, scores=(0,) * players)

    @property
    def players(self) -> int:
        return len(self.sizes)

    @property
    def redeal(self) -> bool:
        """Every seat denied every doublet: shuffle all tiles and deal again."""
        return self.called is not None and self.called < 0

    @property
    def over(self) -> bool:
        return self.finished

    @property
    def winners(self) -> list[int]:
        if not self.finished:
            return []
        top = max(self.scores)
        return [i for i in range(self.players) if self.scores[i] == top]

    def open_count(self) -> int:
        """The sum of the open ends (what scores when it is a multiple of five)."""
        if len(self.line) == 1:
            return sum(tile_pips(self.line[0]))
        if self.left is None or self.right is None:
            return 0
        return self.left.count + self.right.count

    def valid(self, tile: Card) -> bool:
        """Tile + public state → may it be laid now? (the selection protocol's validity)."""
        if tile.pips is None:
            return False
        if self.called is not None:
            return opening_valid(tile, self.called)
        assert self.left is not None and self.right is not None
        return fits(tile, self.left.value) or fits(tile, self.right.value)

    def ends_for(self, tile: Card) -> list[End]:
        """The ends ``tile`` may be laid at."""
        if self.called is not None or self.left is None or self.right is None:
            return []
        ends: list[End] = []
        if fits(tile, self.left.value):
            ends.append("L")
        if fits(tile, self.right.value):
            ends.append("R")
        return ends

    def best_end(self, tile: Card) -> End:
        """Where a virtual player lays a tile that fits: the end that scores more, left on a tie
        (a fixed, public rule: the tile is face up by then, so this reveals nothing)."""
        ends = self.ends_for(tile)
        if not ends:
            raise GameRuleError(f"{tile} fits neither end")
        return max(ends, key=lambda end: (self._score_at(tile, end), end == "L"))

    def _check_turn(self, player: int) -> None:
        if self.finished:
            raise GameRuleError("the game is over")
        if self.redeal:
            raise GameRuleError("nobody holds a doublet: shuffle all tiles and deal again")
        if player != self.turn:
            raise GameRuleError(f"it is player {player}'s move only after player {self.turn}'s")

    def _next(self) -> int:
        return (self.turn + 1) % self.players

    def _attach(self, tile: Card, end: End) -> tuple[LineEnd, LineEnd]:
        assert self.left is not None and self.right is not None
        old = self.left if end == "L" else self.right
        low, high = tile_pips(tile)
        if old.value not in (low, high):
            raise GameRuleError(f"{tile} does not fit the {'left' if end == 'L' else 'right'} "
                                f"end, which shows {old.value}")
        new = LineEnd(high if low == old.value else low, tile.is_doublet)
        return (new, self.right) if end == "L" else (self.left, new)

    def _score_at(self, tile: Card, end: End) -> int:
        left, right = self._attach(tile, end)
        total = left.count + right.count
        return total if total % 5 == 0 else 0

    def after_play(self, player: int, tile: Card | str, end: End | None = None) -> DominoState:
        """``player`` lays ``tile`` (at ``end`` "L" or "R"; may be left out in the opening or when
        only one end fits); the score is added and the turn passes on."""
        self._check_turn(player)
        tile = parse_card(tile) if isinstance(tile, str) else tile
        tile_pips(tile)
        if tile in self.line:
            raise GameRuleError(f"{tile} is already in the line")
        sizes = list(self.sizes)
        if sizes[player] == 0:
            raise GameRuleError(f"player {player} has no tiles")
        sizes[player] -= 1
        scores = list(self.scores)
        if self.called is not None:
            if not tile.is_doublet or tile_pips(tile)[0] != self.called:
                raise GameRuleError(f"the opening calls D{self.called}{self.called}; {tile} "
                                    "cannot open (higher doublets were already denied)")
            count = 2 * self.called
            scores[player] += count if count % 5 == 0 else 0
            start = LineEnd(self.called, True)
            return replace(self, sizes=tuple(sizes), scores=tuple(scores), called=None,
                           line=(tile,), left=start, right=start, turn=self._next(),
                           passes_in_a_row=0, finished=sizes[player] == 0)
        ends = self.ends_for(tile)
        if not ends:
            assert self.left is not None and self.right is not None
            raise GameRuleError(f"{tile} matches neither open end ({self.left.value} and "
                                f"{self.right.value})")
        if end is None:
            if len(ends) > 1 and self.left != self.right:
                raise GameRuleError(f"{tile} fits both ends: say which (L or R)")
            end = ends[0]
        if end not in ends:
            raise GameRuleError(f"{tile} does not fit the {end} end")
        left, right = self._attach(tile, end)
        scores[player] += self._score_at(tile, end)
        line = (tile, *self.line) if end == "L" else (*self.line, tile)
        return replace(self, sizes=tuple(sizes), scores=tuple(scores), line=line, left=left,
                       right=right, turn=self._next(), passes_in_a_row=0,
                       finished=sizes[player] == 0)

    def after_draw(self, player: int) -> DominoState:
        """``player`` cannot lay a tile and draws one from the boneyard; it is still their turn."""
        self._check_turn(player)
        if self.called is not None:
            raise GameRuleError("nobody draws during the opening")
        if self.boneyard == 0:
            raise GameRuleError("the boneyard is empty: pass instead")
        sizes = list(self.sizes)
        sizes[player] += 1
        return replace(self, sizes=tuple(sizes), boneyard=self.boneyard - 1)

    def after_pass(self, player: int) -> DominoState:
        """In the opening: ``player`` does not hold the called doublet. Later: ``player`` cannot
        lay a tile and the boneyard is empty. Everyone passing in a row blocks the game."""
        self._check_turn(player)
        if self.called is not None:
            last = player == self.players - 1
            return replace(self, turn=0 if last else player + 1,
                           called=self.called - 1 if last else self.called)
        if self.boneyard > 0:
            raise GameRuleError(f"{self.boneyard} tiles are left in the boneyard: draw until "
                                "one fits")
        passes = self.passes_in_a_row + 1
        return replace(self, turn=self._next(), passes_in_a_row=passes,
                       finished=passes >= self.players)


def play_muggins(virtual: Sequence[bool], rng: np.random.Generator, virtual_player: Chooser,
                 human: Chooser | None = None, max_deals: int = 100) -> GameRecord:
    """Deal and play a whole game of Muggins. Virtual seats choose with ``virtual_player`` (the
    selection protocol) both in the opening and in play; a seat that draws runs it again."""
    human = human or uniform_chooser(rng)
    moves: list[str] = []
    runs = 0
    for _ in range(max_deals):
        state = DominoState.start(list(virtual))
        hands, boneyard = deal(domino_set(), len(virtual), rng, TILES_EACH)
        while not state.over and not state.redeal:
            seat, hand = state.turn, hands[state.turn]
            valid = [state.valid(tile) for tile in hand]
            runs += bool(virtual[seat])
            others = [h for i, h in enumerate(hands) if i != seat] + [boneyard]
            pick = (virtual_player if virtual[seat] else human)(hand, state.valid, always=False,
                                                                others=others)
            if pick is not None and not valid[pick]:
                raise GameRuleError(f"seat {seat} chose {hand[pick]}, which is not valid")
            if pick is not None:
                tile = hand.pop(pick)
                end = None if state.called is not None else state.best_end(tile)
                state = state.after_play(seat, tile, end)
                moves.append(f"{seat}:{tile}" + (f"@{end}" if end else ""))
            elif any(valid):
                raise GameRuleError(f"seat {seat} passed holding a valid tile")
            elif state.called is None and state.boneyard:
                hand.append(boneyard.pop())
                state = state.after_draw(seat)
                moves.append(f"{seat}:draw")
            else:
                state = state.after_pass(seat)
                moves.append(f"{seat}:pass")
        if state.over:
            return GameRecord("muggins", tuple(moves), tuple(state.winners), state.scores, runs)
        moves.append("redeal")
    raise GameRuleError(f"no doublet was dealt in {max_deals} deals")
