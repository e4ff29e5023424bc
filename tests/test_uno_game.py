"""The rules of UNO (Section 3.1) on public state: a table of moves and what they do."""

from __future__ import annotations

import pytest

from protocol_runner.cards import Card
from protocol_runner.games import uno

SEATS = tuple(uno.Seat(n, v) for n, v in (("A", False), ("B", True), ("C", False), ("D", True)))


def game(top: str = "7R", colour: str | None = None, turn: int = 0,
         hands: tuple[int, ...] = (7, 7, 7, 7)) -> uno.UnoState:
    state = uno.turn_first_card(uno.new_game(SEATS, turn), Card("5Y"))
    return uno.UnoState(SEATS, hands, state.deck_size, (Card("5Y"), Card(top)), colour,
                        turn=turn)


@pytest.mark.parametrize(("card", "colour", "turn", "direction", "hands", "deck_delta"), [
    ("3R", None, 1, 1, (6, 7, 7, 7), 0),          # same colour: next player
    ("7G", None, 1, 1, (6, 7, 7, 7), 0),          # same symbol
    ("SR", None, 2, 1, (6, 7, 7, 7), 0),          # skip: B misses the turn
    ("RR", None, 3, -1, (6, 7, 7, 7), 0),         # reverse: direction changes, D is next
    ("+2R", None, 2, 1, (6, 9, 7, 7), -2),        # +2: B draws two and misses the turn
    ("W", "G", 1, 1, (6, 7, 7, 7), 0),            # wild: colour chosen
    ("+4", "B", 2, 1, (6, 11, 7, 7), -4),         # +4: B draws four, misses the turn
])
def test_play_effects(card: str, colour: str | None, turn: int, direction: int,
                      hands: tuple[int, ...], deck_delta: int) -> None:
    before = game()
    after = uno.play(before, Card(card), colour)
    assert (after.turn, after.direction, after.hand_sizes) == (turn, direction, hands)
    assert after.deck_size - before.deck_size == deck_delta
    assert after.top == Card(card)
    assert after.colour_in_force == (colour or Card(card).colour)


@pytest.mark.parametrize(("top", "colour", "card", "ok"), [
    ("7R", None, "7B", True), ("7R", None, "2R", True), ("7R", None, "2B", False),
    ("W", "G", "3G", True), ("W", "G", "3R", False), ("+4", "Y", "W", True),
    ("SR", None, "SB", True), ("+2G", None, "+2R", True), ("RY", None, "+4", True),
])
def test_validity(top: str, colour: str | None, card: str, ok: bool) -> None:
    assert game(top, colour).playable(Card(card)) is ok


@pytest.mark.parametrize(("move", "message"), [
    (lambda g: uno.play(g, Card("2B")), "cannot be played on 7R"),
    (lambda g: uno.play(g, Card("W")), "needs a colour"),
    (lambda g: uno.play(g, Card("3R"), "G"), "no colour is designated"),
    (lambda g: uno.pass_turn(g), "only after drawing"),
    (lambda g: uno.draw_for_turn(uno.draw_for_turn(g)), "already drawn"),
    (lambda g: uno.turn_first_card(uno.new_game(SEATS), Card("+4")), "cannot start"),
    (lambda g: uno.new_game(SEATS[:1]), "at least two"),
])
def test_bad_moves(move, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(uno.UnoRuleError, match=message):
        move(game())


def test_draw_then_pass_and_winner() -> None:
    g = uno.draw_for_turn(game())
    assert g.drawn and g.hand_sizes[0] == 8
    g = uno.pass_turn(g)
    assert (g.turn, g.drawn) == (1, False)
    last = uno.play(game(hands=(1, 7, 7, 7)), Card("+2R"))
    assert last.winner == 0 and last.hand_sizes[1] == 7  # the game ends before the penalty


def test_two_player_reverse_and_refill() -> None:
    two = uno.UnoState(SEATS[:2], (3, 3), 1, (Card("5Y"), Card("7R"), Card("3R")))
    after = uno.play(two, Card("RR"))
    assert (after.turn, after.direction) == (1, -1)
    drawn = uno.draw(two, 0, 2)  # the deck runs out: the pile but its top is shuffled back
    assert (drawn.deck_size, drawn.discard, drawn.hand_sizes) == (1, (Card("3R"),), (5, 3))
