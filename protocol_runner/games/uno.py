"""The rules of UNO (Section 3.1 of the virtual-players paper) as pure functions on public state.

Everything here is what every person at the table knows: seats, hand *sizes*, the discard pile,
the colour in force, the direction, whose turn it is. Nobody's cards are in it, so the runner can
show it, journal it and export it. Each function returns a new :class:`UnoState` and raises
:class:`UnoRuleError` (a ``ValueError``) with a message that says what the rules allow instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from protocol_runner.cards import Card, uno_deck, uno_playable

COLOUR_NAMES = {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}


class UnoRuleError(ValueError):
    """A move the rules of Section 3.1 forbid."""


@dataclass(frozen=True, slots=True)
class Seat:
    name: str
    virtual: bool


@dataclass(frozen=True, slots=True)
class UnoState:
    """Public state of one game. ``direction`` is +1 clockwise (seat order), −1 counter-clockwise.

    ``drawn`` is set while the player to move has drawn (voluntarily or because nothing was
    valid) and may now only play that card or pass.
    """

    seats: tuple[Seat, ...]
    hand_sizes: tuple[int, ...]
    deck_size: int
    discard: tuple[Card, ...] = ()
    colour: str | None = None
    direction: int = 1
    turn: int = 0
    drawn: bool = False
    winner: int | None = None
    turns_played: int = 0

    @property
    def top(self) -> Card | None:
        return self.discard[-1] if self.discard else None

    @property
    def colour_in_force(self) -> str | None:
        """The colour a card must match: the top card's, or the one chosen for a black top."""
        top = self.top
        if top is None:
            return None
        return self.colour if top.is_black else top.colour

    def seat_after(self, seat: int, steps: int = 1) -> int:
        return (seat + self.direction * steps) % len(self.seats)

    def playable(self, card: Card) -> bool:
        top = self.top
        if top is None:
            raise UnoRuleError("no card lies on the discard pile yet")
        return uno_playable(card, top, self.colour if top.is_black else None)


def new_game(seats: tuple[Seat, ...], start: int = 0, hand_size: int = 7) -> UnoState:
    """Every seat has been dealt ``hand_size`` cards; the first discard is still to be turned."""
    if len(seats) < 2:
        raise UnoRuleError("UNO needs at least two players")
    dealt = hand_size * len(seats)
    if dealt >= len(uno_deck()):
        raise UnoRuleError(f"{len(seats)} hands of {hand_size} do not fit in one deck")
    return UnoState(seats=seats, hand_sizes=(hand_size,) * len(seats),
                    deck_size=len(uno_deck()) - dealt, turn=start)


def turn_first_card(state: UnoState, card: Card) -> UnoState:
    """The top card of the unplayed deck goes face up onto the empty discard pile.

    A black card cannot start (nobody has chosen its colour): the table puts it back into the
    middle of the unplayed deck and turns the next card.
    """
    if state.discard:
        raise UnoRuleError("the first card has already been turned")
    if card.deck != "uno":
        raise UnoRuleError(f"{card} is not an UNO card")
    if card.is_black:
        raise UnoRuleError(f"{card} cannot start the discard pile: put it back into the middle "
                           "of the unplayed deck and turn the next card")
    return replace(state, discard=(card,), deck_size=state.deck_size - 1)


def _with_hand(state: UnoState, seat: int, delta: int) -> tuple[int, ...]:
    sizes = list(state.hand_sizes)
    sizes[seat] += delta
    return tuple(sizes)


def draw(state: UnoState, seat: int | None = None, count: int = 1) -> UnoState:
    """``seat`` (default: the player to move) takes ``count`` cards from the unplayed deck.

    When the unplayed deck runs out, the discard pile except its top card is shuffled into a new
    one (:func:`refill`) first; if even that is too few, the player draws what there is.
    """
    seat = state.turn if seat is None else seat
    if state.deck_size < count:
        state = refill(state)
    count = min(count, state.deck_size)
    return replace(state, hand_sizes=_with_hand(state, seat, count),
                   deck_size=state.deck_size - count)


def refill(state: UnoState) -> UnoState:
    """The discard pile, except its top card, is shuffled face down into a new unplayed deck."""
    return replace(state, discard=state.discard[-1:],
                   deck_size=state.deck_size + len(state.discard) - 1)


def draw_for_turn(state: UnoState) -> UnoState:
    """The player to move draws one card instead of playing; they may then play it or pass."""
    if state.winner is not None:
        raise UnoRuleError("the game is over")
    if state.drawn:
        raise UnoRuleError(f"{state.seats[state.turn].name} has already drawn this turn: "
                           "play the drawn card or pass")
    return replace(draw(state), drawn=True)


def pass_turn(state: UnoState) -> UnoState:
    """After drawing, the player to move keeps the card and the turn goes on."""
    if not state.drawn:
        raise UnoRuleError("a player may pass only after drawing a card")
    return replace(state, turn=state.seat_after(state.turn), drawn=False,
                   turns_played=state.turns_played + 1)


def play(state: UnoState, card: Card, colour: str | None = None) -> UnoState:
    """The player to move discards ``card``; its action applies (Section 3.1).

    Skip: the next player misses a turn. Reverse: the direction changes. +2 / +4: the next player
    draws two / four and misses a turn. W / +4 need the ``colour`` their player designates.
    """
    if state.winner is not None:
        raise UnoRuleError("the game is over")
    name = state.seats[state.turn].name
    if state.hand_sizes[state.turn] < 1:
        raise UnoRuleError(f"{name} holds no card")
    if not state.playable(card):
        top, force = state.top, state.colour_in_force
        raise UnoRuleError(f"{card} cannot be played on {top} ({COLOUR_NAMES[force]} in force): "
                           "a card must match the colour or the symbol, or be W or +4"
                           if force else f"{card} cannot be played on {top}")
    if card.is_black:
        if colour not in COLOUR_NAMES:
            raise UnoRuleError(f"{card} needs a colour: R, Y, G or B")
    elif colour is not None:
        raise UnoRuleError(f"{card} is a colour card; no colour is designated for it")
    seat = state.turn
    sizes = _with_hand(state, seat, -1)
    state = replace(state, hand_sizes=sizes, discard=state.discard + (card,),
                    colour=colour if card.is_black else None, drawn=False,
                    turns_played=state.turns_played + 1)
    if sizes[seat] == 0:
        return replace(state, winner=seat)
    symbol = card.symbol
    if symbol == "R":
        state = replace(state, direction=-state.direction)
    victim = state.seat_after(seat)
    if symbol in ("+2", "+4"):
        state = draw(state, victim, 2 if symbol == "+2" else 4)
    skip = symbol in ("S", "+2", "+4")
    return replace(state, turn=state.seat_after(seat, 2 if skip else 1))


def state_to_json(state: UnoState) -> dict[str, object]:
    return {
        "players": [{"name": s.name, "type": "virtual" if s.virtual else "human",
                     "hand_size": n} for s, n in zip(state.seats, state.hand_sizes, strict=True)],
        "deck_size": state.deck_size,
        "discard": [c.code for c in state.discard],
        "top": state.top.code if state.top else None,
        "colour_in_force": state.colour_in_force,
        "direction": "clockwise" if state.direction == 1 else "counter-clockwise",
        "turn": state.seats[state.turn].name,
        "drawn": state.drawn,
        "winner": state.seats[state.winner].name if state.winner is not None else None,
        "turns_played": state.turns_played,
    }
