"""Old Maid at a real table, checked from observations: a whole game from a script, and every
reveal of the removal protocol caught when a planted mistake makes it wrong."""

from pathlib import Path

import pytest

from protocol_runner.games.checked import CheckedGame
from protocol_runner.games.script import ScriptTable
from protocol_runner.observations import Cell, Event, PlayerSpec, Setup, View, read_records

PLAYERS = [("Ann", False), ("Vic", True), ("Bob", False)]


@pytest.mark.parametrize(("players", "seed"), [(PLAYERS, 3), ([("V1", True), ("V2", True)], 4)])
def test_whole_game_from_an_observations_file(players: list[tuple[str, bool]], seed: int,
                                              tmp_path: Path) -> None:
    script = ScriptTable("old-maid", players, seed=seed).play()
    assert script.protocol_runs >= 1 and "loses" in script.result
    path = tmp_path / "old-maid.jsonl"
    script.write(path)
    game = CheckedGame()
    verdicts = [game.feed(record) for _, record in read_records(path)]
    assert all(v.kind == "accepted" for v in verdicts), [v for v in verdicts if not v.ok][:1]
    assert game.over and game.result() == script.result


CAUGHT = {  # fault → what the deviation must say
    "om_6b": r"7R shows 1 times",
    "om_6c": r"work column 1, row 1: expected \w+, saw JK",
    "om_6g": r"1-card|W shows",
    "om_6g_pair": r"the pair reads",
    "om_8": r"1R shows",
    "om_8_joker": r"AS cannot appear here; expected Jo̅",
    "om_pairs": r"not pairs",
    "wrong_hand": r"hands: Vic holds \d+ cards face down; expected \d+",
}


def test_planted_mistakes_are_caught_where_they_show() -> None:
    import re

    script = ScriptTable("old-maid", PLAYERS, seed=5, faults=list(CAUGHT)).play()
    assert sorted(script.planted) == sorted(CAUGHT)
    for fault, pattern in CAUGHT.items():
        assert re.search(pattern, script.caught[fault]), (fault, script.caught[fault])


def _setup(game: str = "old-maid") -> Setup:
    return Setup(players=tuple(PlayerSpec(n, v) for n, v in PLAYERS), game=game)


@pytest.mark.parametrize(("records", "kind", "message"), [
    ([Event("drew", seq=1)], "refused", "no setup record yet"),
    ([_setup(), _setup()], "refused", "already set up"),
    ([_setup("uno")], "refused", "this runner plays old-maid"),
    ([_setup(), Event("drew", seq=1)], "refused", "drew does not apply now"),
    ([_setup(), Event("pass", seq=2), Event("pass", seq=2)], "refused", "out of order"),
    ([_setup(), View(side=((Cell("AS"), Cell("2S")),), seq=1)], "deviation", "not pairs"),
    ([_setup(), View(side=((Cell("AS"), Cell("BACK")),), seq=1)], "deviation", "not pairs"),
    ([_setup(), View(discard=Cell("AS"), seq=1)], "deviation", "appeared on the table"),
    ([_setup(), View(hands={"Vic": 3}, seq=1)], "deviation", "Vic holds 3 cards"),
    ([_setup(), View(hands={"Zed": 3}, seq=1)], "deviation", "no player called 'Zed'"),
])
def test_bad_input_is_refused_and_changes_nothing(records: list, kind: str,
                                                  message: str) -> None:
    game = CheckedGame()
    for record in records[:-1]:
        game.feed(record)
    before = (game.phase, game.state, game.instruction)
    verdict = game.feed(records[-1])
    assert verdict.kind == kind and message in verdict.message + str(verdict.problems)
    if kind == "refused" or kind == "deviation":
        assert (game.phase, game.state) == before[:2]


def _command(argv: list[str]) -> int:
    """``cardtable game …`` through its own parser (the module the CLI registers)."""
    import argparse

    from protocol_runner.commands import game

    parser = argparse.ArgumentParser()
    game.register(parser.add_subparsers())
    args = parser.parse_args(["game", *argv])
    return int(args.handler(args))


def test_game_command_writes_and_checks_a_script(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "om.jsonl"
    assert _command(["--simulate", str(path), "--game", "old-maid", "--players",
                     "Ann,v:Vic", "--seed", "2", "--faults", "om_8"]) == 0
    assert "planted: om_8" in capsys.readouterr().out
    assert _command(["--observations", str(path)]) == 0
    out = capsys.readouterr().out
    assert "deviation: Old Maid removal step 8 of 9" in out and "1 deviations" in out


@pytest.mark.parametrize(("argv", "error"), [
    (["--observations", "/nonexistent/x.jsonl"], OSError),
    (["--simulate", "/tmp/never.jsonl"], ValueError),
])
def test_game_command_bad_input(argv: list[str], error: type) -> None:
    with pytest.raises(error):
        _command(argv)
