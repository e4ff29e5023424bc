"""Hearts at a real table, checked from observations: whole games from a script with a virtual
player choosing through the selection protocol with the original lottery, and planted mistakes
caught (the protocol's reveals, and a human's revoke)."""

import re
from pathlib import Path

import pytest

from protocol_runner.games.checked import CheckedGame
from protocol_runner.games.script import ScriptTable
from protocol_runner.observations import read_records

PLAYERS = [("Ann", False), ("V1", True), ("Bob", False), ("Cy", False)]


def test_whole_game_from_an_observations_file(tmp_path: Path) -> None:
    """A game agreed to end at 20 points (the rules' 100 takes ~10 rounds; the pure game
    simulation plays those, see test_hearts.py): rounds, tricks, points, a winner."""
    script = ScriptTable("hearts", PLAYERS, seed=2, hearts_target=20).play()
    assert script.protocol_runs >= 13 and "win" in script.result
    path = tmp_path / "hearts.jsonl"
    script.write(path)
    game = CheckedGame(hearts_target=20)
    verdicts = [game.feed(record) for _, record in read_records(path)]
    assert all(v.kind == "accepted" for v in verdicts)
    assert game.over and game.result() == script.result
    assert "original lottery" in " ".join(game.log)


CAUGHT = {
    "sel_5": r"7R",
    "sel_9": r"θ\d \(\w+\) shows \d+ times",
    "sel_and": r"the pair reads (αα|ββ)",
    "sel_lottery": r"2 pairs read βα",
    "revoke": r"a revoke",
}


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_planted_mistake_is_caught(fault: str) -> None:
    script = ScriptTable("hearts", PLAYERS, seed=6, faults=[fault]).play(stop_when_planted=True)
    assert script.planted == [fault]
    assert re.search(CAUGHT[fault], script.caught[fault]), script.caught[fault]
