"""Hearts rules (UNO paper Section 5.2): following suit, trick winners, points, games to 100."""

import numpy as np
import pytest

from protocol_runner.cards import parse_card, parse_cards
from protocol_runner.games.common import GameRuleError, SelectionPlayer, uniform_chooser
from protocol_runner.games.hearts import (
    HeartsState,
    hearts_valid,
    play_hearts,
    points,
    trick_winner,
)


@pytest.mark.parametrize(("trick", "card", "ok"),
                         [("", "QS", True), ("5C", "2C", True), ("5C", "AH", False),
                          ("5C,KD", "AC", True), ("JH", "QS", False)])
def test_follow_suit_validity(trick: str, card: str, ok: bool) -> None:
    assert hearts_valid(parse_card(card), tuple(parse_cards(trick))) is ok


@pytest.mark.parametrize(("card", "value"), [("QS", 13), ("2H", 1), ("AH", 1), ("KS", 0),
                                             ("QC", 0)])
def test_points(card: str, value: int) -> None:
    assert points(parse_card(card)) == value


@pytest.mark.parametrize(("trick", "leader", "winner"),
                         [("5C,KC,AH,2C", 0, 1), ("5C,KD,AH,2C", 0, 0), ("2S,AS,QS,3S", 2, 3),
                          ("10D,JD,2D,AD", 3, 2)])
def test_trick_winner_ace_high_of_suit_led(trick: str, leader: int, winner: int) -> None:
    assert trick_winner(tuple(parse_cards(trick)), leader) == winner


def test_points_go_to_trick_winner_who_leads_next() -> None:
    state = HeartsState.start([True] * 4)
    for seat, card in enumerate(["5C", "KC", "QS", "2H"]):
        state = state.after_play(seat, card)
    assert state.round_points == (0, 14, 0, 0) and state.leader == 1 and state.tricks_done == 1
    assert state.turn == 1 and state.sizes() == (12, 12, 12, 12)
    with pytest.raises(GameRuleError, match="already played"):
        state.after_play(1, "QS")


@pytest.mark.parametrize(("moves", "error"),
                         [([(1, "5C")], "player 0's turn"), ([(0, "JK")], "52-card deck"),
                          ([(0, "5C"), (1, "AH"), (2, "2C"), (3, "3C"), (0, "6C"), (1, "7C")],
                           "revoke")])
def test_bad_moves(moves: list[tuple[int, str]], error: str) -> None:
    state = HeartsState.start([False, True, False, True])
    with pytest.raises(GameRuleError, match=error):
        for seat, card in moves:
            state = state.after_play(seat, card)


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_game_to_100(seed: int) -> None:
    rng = np.random.default_rng(seed)
    record = play_hearts([True, False, True, True], rng, uniform_chooser(rng))
    assert max(record.scores) >= 100
    assert sum(record.scores) == 26 * (len(record.moves) // 52)
    assert len(record.moves) % 52 == 0
    assert record.winners == tuple(i for i in range(4) if record.scores[i] == min(record.scores))


def test_whole_game_with_the_original_lottery() -> None:
    """One virtual seat plays through the card selection protocol with the ORIGINAL covert
    lottery (always a card: it follows suit when it can, since the game checks that)."""
    rng = np.random.default_rng(11)
    player = SelectionPlayer(rng, original=True)
    record = play_hearts([True, False, False, False], rng, player)
    assert max(record.scores) >= 100 and player.runs == record.protocol_runs > 13


def test_the_modified_lottery_is_refused_for_hearts() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(GameRuleError, match="original=True"):
        play_hearts([True, False, False, False], rng, SelectionPlayer(rng))
