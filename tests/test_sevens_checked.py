"""Sevens at a real table, checked from observations: a whole game from a script with virtual
players, and planted mistakes in the selection protocol's reveals and in a human's play caught."""

import re
from pathlib import Path

import pytest

from protocol_runner.games.checked import CheckedGame
from protocol_runner.games.script import ScriptTable
from protocol_runner.observations import read_records

PLAYERS = [("Ann", False), ("V1", True), ("V2", True)]


def test_whole_game_from_an_observations_file(tmp_path: Path) -> None:
    players = [("Ann", False), ("V1", True), ("Bob", False), ("Cy", False)]
    script = ScriptTable("sevens", players, seed=2).play()
    assert script.protocol_runs >= 5 and script.result.endswith("wins")
    path = tmp_path / "sevens.jsonl"
    script.write(path)
    game = CheckedGame()
    verdicts = [game.feed(record) for _, record in read_records(path)]
    assert all(v.kind == "accepted" for v in verdicts)
    assert game.over and game.result() == script.result


CAUGHT = {  # fault → what the deviation must say
    "sel_5": r"7R shows 1 times|7R cannot appear",
    "sel_9": r"θ\d \(\w+\) shows \d+ times",
    "sel_and": r"the pair reads (αα|ββ)",
    "sel_lottery": r"2 pairs read βα",
    "invalid_play": r"cannot play \w+",
    "wrong_hand": r"hands: V\d holds \d+ cards face down; expected \d+",
}


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_planted_mistake_is_caught_and_the_game_goes_on(fault: str) -> None:
    script = ScriptTable("sevens", PLAYERS, seed=3, faults=[fault]).play(stop_when_planted=True)
    assert script.planted == [fault]
    assert re.search(CAUGHT[fault], script.caught[fault]), script.caught[fault]
