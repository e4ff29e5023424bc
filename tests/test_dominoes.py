"""Domino codes and Muggins rules (UNO paper Section 5.3, NOTES item 7)."""

from collections.abc import Callable

import numpy as np
import pytest

from protocol_runner.cards import (
    Card,
    CardCodeError,
    DeckError,
    check_within_deck,
    domino_set,
    parse_card,
    parse_cards,
)
from protocol_runner.games.common import GameRuleError, SelectionPlayer, uniform_chooser
from protocol_runner.games.dominoes import DominoState, opening_valid, play_muggins


@pytest.mark.parametrize(("text", "code", "pips"),
                         [("D56", "D56", (5, 6)), ("d00", "D00", (0, 0)), (" d66 ", "D66", (6, 6)),
                          ("D06", "D06", (0, 6))])
def test_domino_codes(text: str, code: str, pips: tuple[int, int]) -> None:
    tile = parse_card(text)
    assert str(tile) == code and tile.pips == pips and tile.deck == "domino"
    assert tile.is_doublet is (pips[0] == pips[1])
    assert tile.rank is None and tile.suit is None and tile.colour is None


@pytest.mark.parametrize(("text", "message"),
                         [("D65", "write D56"), ("D7", "unknown"), ("D57", "unknown"),
                          ("D", "unknown"), ("D5", "unknown"), ("D566", "unknown"),
                          ("DD5", "unknown")])
def test_domino_codes_rejected(text: str, message: str) -> None:
    with pytest.raises(CardCodeError, match=message):
        parse_card(text)


def test_domino_set_and_cards_unchanged() -> None:
    tiles = domino_set()
    assert len(tiles) == 28 == len(set(tiles))
    assert sum(t.is_doublet for t in tiles) == 7
    assert parse_card("2D").deck == "standard" and parse_card("2D").pips is None
    check_within_deck(parse_cards("D56,D00"), "domino")
    with pytest.raises(DeckError, match="only 1"):
        check_within_deck(parse_cards("D56,D56"), "domino")
    with pytest.raises(CardCodeError):
        Card("D65")


@pytest.mark.parametrize(("tile", "called", "ok"),
                         [("D66", 6, True), ("D55", 6, False), ("D55", 5, True), ("D66", 5, True),
                          ("D56", 5, False), ("D00", 0, True)])
def test_opening_validity_only_higher_doublets(tile: str, called: int, ok: bool) -> None:
    assert opening_valid(parse_card(tile), called) is ok


def opened(called: int, players: int = 2) -> DominoState:
    state = DominoState.start([True] * players)
    for _ in range(6 - called):
        for seat in range(players):
            state = state.after_pass(seat)
    return state.after_play(0, f"D{called}{called}")


@pytest.mark.parametrize(("called", "moves", "scores", "count"),
                         [(5, [(1, "D05", None)], (10, 10), 10),
                          (5, [(1, "D56", None)], (10, 0), 16),
                          (0, [(1, "D05", None)], (0, 5), 5),
                          (6, [(1, "D46", None), (0, "D16", None)], (5, 0), 5),
                          (5, [(1, "D15", None), (0, "D16", "L"), (1, "D56", "L")], (10, 15), 15),
                          (4, [(1, "D46", None), (0, "D14", "R")], (0, 0), 7)])
def test_muggins_scores(called: int, moves: list[tuple[int, str, str | None]],
                        scores: tuple[int, ...], count: int) -> None:
    state = opened(called)
    for seat, tile, end in moves:
        state = state.after_play(seat, tile, end)  # type: ignore[arg-type]
    assert state.scores == scores and state.open_count() == count


@pytest.mark.parametrize(("action", "error"),
                         [(lambda s: s.after_play(1, "D12"), "neither open end"),
                          (lambda s: s.after_play(0, "D56"), "player 0's move only after"),
                          (lambda s: s.after_play(1, "D55"), "already in the line"),
                          (lambda s: s.after_play(1, "AS"), "not a domino tile"),
                          (lambda s: s.after_pass(1), "draw until one fits"),
                          (lambda s: s.after_play(1, "D15").after_play(0, "D16")
                           .after_play(1, "D56"), "fits both ends")])
def test_bad_moves(action: Callable[[DominoState], DominoState], error: str) -> None:
    with pytest.raises(GameRuleError, match=error):
        action(opened(5))


def test_opening_denied_doublet_cannot_open_later_and_redeal() -> None:
    state = DominoState.start([True, False])
    state = state.after_pass(0).after_pass(1)
    with pytest.raises(GameRuleError, match="higher doublets were already denied"):
        state.after_play(0, "D66")
    for _ in range(6):
        state = state.after_pass(0).after_pass(1)
    assert state.redeal
    with pytest.raises(GameRuleError, match="deal again"):
        state.after_pass(0)


@pytest.mark.parametrize("seats", [[True], [True] * 5, []])
def test_bad_seat_counts(seats: list[bool]) -> None:
    with pytest.raises(GameRuleError, match="2 to 4 players"):
        DominoState.start(seats)


@pytest.mark.parametrize(("seats", "seed"), [([True, True], 1), ([False, True, True], 2),
                                             ([True] * 4, 3), ([False, True, False, True], 4)])
def test_whole_games(seats: list[bool], seed: int) -> None:
    rng = np.random.default_rng(seed)
    record = play_muggins(seats, rng, uniform_chooser(rng))
    laid = [m.split(":")[1].split("@")[0] for m in record.moves if m[0].isdigit()
            and m.split(":")[1].startswith("D")]
    assert len(laid) == len(set(laid)) and all(s % 5 == 0 for s in record.scores)
    assert parse_card(laid[0]).is_doublet
    assert record.winners and all(record.scores[w] == max(record.scores) for w in record.winners)


@pytest.mark.parametrize(("seats", "seed"), [([True, False, True], 5), ([True, True], 8)])
def test_whole_game_with_the_card_selection_protocol(seats: list[bool], seed: int) -> None:
    """Virtual seats find the opening doublet and every tile through the selection protocol
    (tiles are tokens of the machine's vocabulary like cards); the game ends."""
    rng = np.random.default_rng(seed)
    player = SelectionPlayer(rng)
    record = play_muggins(seats, rng, player)
    assert record.winners and player.runs == record.protocol_runs > 0
