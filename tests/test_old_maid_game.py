"""Old Maid rules (Old Maid paper Section 3): dealing, pair removal, drawing, winners, loser."""

import numpy as np
import pytest

from protocol_runner.cards import parse_cards
from protocol_runner.games.common import GameRuleError
from protocol_runner.games.old_maid import (
    OldMaidState,
    old_maid_deck,
    play_old_maid,
    remove_by_rule,
    remove_pairs,
)
from protocol_runner.protocols.old_maid import RemovalPlayer


@pytest.mark.parametrize(
    ("hand", "kept", "removed"),
    [("AS,AH,3D,3C,JK,5S", "JK,5S", "AS,AH,3D,3C"), ("5S,5H,5D", "5D", "5S,5H"),
     ("5D,5C,5H", "5H", "5D,5C"), ("5S,5C,5D,5H", "", "5S,5H,5D,5C"), ("5S,5C", "", "5S,5C"),
     ("5H,5D", "", "5H,5D"), ("JK", "JK", ""), ("", "", ""), ("2S,3S,4S", "2S,3S,4S", "")])
def test_remove_pairs_follows_the_protocols_loops(hand: str, kept: str, removed: str) -> None:
    got_kept, got_removed = remove_pairs(parse_cards(hand))
    assert got_kept == parse_cards(kept) and sorted(got_removed) == sorted(parse_cards(removed))


def test_remove_pairs_rejects_duplicate_cards() -> None:
    with pytest.raises(GameRuleError, match="twice"):
        remove_pairs(parse_cards("5S,5S"))


def test_deal_sizes() -> None:
    assert len(old_maid_deck()) == 53
    assert OldMaidState.start([True] * 3).sizes == (18, 18, 17)
    with pytest.raises(GameRuleError, match="2 to 53 players"):
        OldMaidState.start([True])


@pytest.mark.parametrize(("removed", "error"),
                         [("AS,2S", "odd number"), ("JK,AS", "joker never pairs"),
                          ("AS,AH,AS,AH", "not all still in play")])
def test_bad_removals(removed: str, error: str) -> None:
    with pytest.raises(GameRuleError, match=error):
        OldMaidState.start([True, False]).after_removal(0, removed)


def test_phases_and_turns() -> None:
    state = OldMaidState.start([True, False])
    with pytest.raises(GameRuleError, match="once every player has laid down"):
        state.after_draw(0)
    state = state.after_removal(0, "AS,AH").after_removal(1, "")
    assert state.phase == "playing" and state.turn == 0 and state.sizes == (25, 26)
    with pytest.raises(GameRuleError, match="no pairs to lay down"):
        state.after_removal(0, "2S,2H")
    state = state.after_draw(0)
    assert state.sizes == (26, 25)
    with pytest.raises(GameRuleError, match="lay down pairs"):
        state.after_draw(1)
    state = state.after_removal(0, "")
    assert state.turn == 1


@pytest.mark.parametrize(("seats", "seed"), [([True, True], 1), ([False, True, False], 2),
                                             ([True] * 5, 3), ([False, True], 4)])
def test_whole_games_end_with_the_joker(seats: list[bool], seed: int) -> None:
    rng = np.random.default_rng(seed)
    record = play_old_maid(seats, rng, remove_by_rule)
    assert len(record.winners) == len(seats) - 1 == len(set(record.winners))
    laid = [c for m in record.moves if ":remove" in m for c in m.split("remove")[1].split()]
    assert len(laid) == 52 and "JK" not in laid


@pytest.mark.parametrize(("seats", "seed"), [([True, False, True], 5), ([True, True, True], 6),
                                             ([False, True], 7)])
def test_whole_game_with_the_removal_protocol(seats: list[bool], seed: int) -> None:
    """Virtual seats lay down pairs through the removal protocol on the machine (any mix of
    humans and virtual players, none included): the game ends with the loser on the joker."""
    rng = np.random.default_rng(seed)
    player = RemovalPlayer(rng)
    record = play_old_maid(seats, rng, player)
    assert len(record.winners) == len(seats) - 1
    assert player.runs == record.protocol_runs and player.pile_scramble == 7 * player.runs
