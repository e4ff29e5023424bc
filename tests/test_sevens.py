"""Sevens rules (UNO paper Section 5.1): validity, turns, passing, whole games."""

import numpy as np
import pytest

from protocol_runner.cards import parse_card, parse_cards
from protocol_runner.games.common import GameRuleError, SelectionPlayer, uniform_chooser
from protocol_runner.games.sevens import SevensState, SevensTable, play_sevens, sevens_valid


def table_after(codes: str) -> SevensTable:
    table = SevensTable()
    for card in parse_cards(codes):
        table = table.play(card)
    return table


@pytest.mark.parametrize(
    ("played", "card", "ok"),
    [("", "7H", True), ("", "7S", False), ("", "6H", False), ("", "JK", False),
     ("7H", "6H", True), ("7H", "8H", True), ("7H", "7C", True), ("7H", "9H", False),
     ("7H", "6S", False), ("7H,6H,5H,8H", "4H", True), ("7H,6H,5H,8H", "9H", True),
     ("7H,6H,5H,8H", "6H", False), ("7H,6H,5H,8H", "3H", False), ("7H,7S", "8S", True),
     ("7H,8H,9H,10H,JH,QH,KH", "AH", False), ("7H,6H,5H,4H,3H,2H", "AH", True),
     ("7H,6H,5H,4H,3H,2H,AH", "KH", False), ("7H", "AS", False)],
)
def test_validity(played: str, card: str, ok: bool) -> None:
    assert sevens_valid(parse_card(card), table_after(played)) is ok


@pytest.mark.parametrize(("played", "bad"), [("", "7S"), ("7H", "9H"), ("7H", "7H")])
def test_invalid_play_is_refused_with_what_is_valid(played: str, bad: str) -> None:
    with pytest.raises(GameRuleError, match="valid now are"):
        table_after(played).play(parse_card(bad))


def test_turns_passes_and_winner() -> None:
    state = SevensState.start([False, True])
    assert state.sizes == (26, 26)
    state = state.after_pass(0).after_play(1, "7H")
    assert state.turn == 0 and state.sizes == (26, 25)
    with pytest.raises(GameRuleError, match="player 0's turn"):
        state.after_play(1, "6H")
    state = state.after_pass(0).after_pass(1)
    assert state.stuck


@pytest.mark.parametrize("seats", [[], [True], [True] * 9])
def test_bad_seat_counts(seats: list[bool]) -> None:
    with pytest.raises(GameRuleError, match="2 to 8 players"):
        SevensState.start(seats)


@pytest.mark.parametrize(("seats", "seed"), [([True, True], 1), ([False, True, True], 2),
                                             ([True] * 5, 3), ([False, True, False, True], 4)])
def test_whole_games_end_with_a_winner(seats: list[bool], seed: int) -> None:
    rng = np.random.default_rng(seed)
    record = play_sevens(seats, rng, uniform_chooser(rng))
    winner = record.winners[0]
    laid = [m for m in record.moves if m.startswith(f"{winner}:") and not m.endswith("pass")]
    assert len(laid) == 52 // len(seats) + (1 if winner < 52 % len(seats) else 0)
    assert "7H" in next(m for m in record.moves if not m.endswith("pass"))
    assert record.protocol_runs == sum(1 for m in record.moves if seats[int(m.split(":")[0])])


@pytest.mark.parametrize(("seats", "seed"), [([True, False, True], 5), ([True, True], 6)])
def test_whole_game_with_the_card_selection_protocol(seats: list[bool], seed: int) -> None:
    """Virtual seats choose by running the card selection protocol on the machine (no unplayed
    deck): the game still ends, and every protocol choice was a valid card or a pass."""
    rng = np.random.default_rng(seed)
    player = SelectionPlayer(rng)
    record = play_sevens(seats, rng, player)
    assert record.winners and player.runs == record.protocol_runs > 0
    assert player.pile_scramble >= 4 * player.runs  # k1 + 4 per run, k1 ≥ 0
