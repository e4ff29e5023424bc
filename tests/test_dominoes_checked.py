"""Muggins at a real table, checked from observations: a whole game from a script (opening by
the selection protocol, draws, scores), and planted mistakes caught."""

import re
from pathlib import Path

import pytest

from protocol_runner.games.checked import CheckedGame
from protocol_runner.games.script import ScriptTable
from protocol_runner.observations import read_records


@pytest.mark.parametrize(("players", "seed"), [([("Ann", False), ("V1", True)], 1),
                                               ([("V1", True), ("Bob", False), ("V2", True)], 2)])
def test_whole_game_from_an_observations_file(players: list[tuple[str, bool]], seed: int,
                                              tmp_path: Path) -> None:
    script = ScriptTable("muggins", players, seed=seed).play()
    assert script.protocol_runs >= 2 and "win" in script.result
    path = tmp_path / "muggins.jsonl"
    script.write(path)
    game = CheckedGame()
    verdicts = [game.feed(record) for _, record in read_records(path)]
    assert all(v.kind == "accepted" for v in verdicts)
    assert game.over and game.result() == script.result
    assert any(r.__class__.__name__ == "Event" and r.event == "drew"
               for _, r in read_records(path))


CAUGHT = {
    "sel_5": r"7R",
    "sel_9": r"θ\d \(\w+\) shows \d+ times",
    "no_fit": r"matches neither open end",
}


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_planted_mistake_is_caught(fault: str) -> None:
    script = ScriptTable("muggins", [("Ann", False), ("V1", True)], seed=4,
                         faults=[fault]).play(stop_when_planted=True)
    assert script.planted == [fault]
    assert re.search(CAUGHT[fault], script.caught[fault]), script.caught[fault]
