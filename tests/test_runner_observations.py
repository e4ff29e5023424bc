"""The observation format: round trips, and every kind of bad line refused with a clear message."""

from __future__ import annotations

import pytest

from protocol_runner.observations import (
    Cell,
    Event,
    ObservationError,
    PlayerSpec,
    Setup,
    View,
    dumps,
    parse_line,
    read_lines,
)

SETUP = Setup(players=(PlayerSpec("Ann", False), PlayerSpec("V1", True)), start=1, hand_size=5,
              helper_deck={"alpha": "1R", "beta": "2G", "theta1": "1B", "theta2": "2B",
                           "theta3": "3B"})


@pytest.mark.parametrize("record", [
    SETUP,
    View(work=((Cell("7R"), Cell("BACK", 0.9), Cell(None), Cell("2G")),), discard=Cell("SY"),
         hands={"V1": 4}, seq=3, t=1.5),
    View(side=((Cell("+2B", 0.5),),), seq=4),
    Event("shuffle_done", seq=5),
    Event("card_corrected", zone="work", column=3, row=1, code="7R", seq=6),
    Event("colour", colour="G", seq=7),
    Event("played", code="W", seq=8),
])
def test_round_trip(record: object) -> None:
    assert parse_line(dumps(record)) == record  # type: ignore[arg-type]


def test_short_forms_and_case() -> None:
    view = parse_line('{"v":1,"kind":"view","work":[["7r",["back",0.5],null]],"discard":null}')
    assert isinstance(view, View)
    assert view.work[0] == (Cell("7R"), Cell("BACK", 0.5), Cell(None))
    assert view.discard.empty


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"v": 2, "kind": "view"}', "version 2 is not supported"),
    ('{"v": 1, "kind": "frame"}', "unknown record kind"),
    ('{"v": 1, "kind": "view", "work": [["7Q"]]}', "work column 1 row 1: unknown card code"),
    ('{"v": 1, "kind": "view", "work": [["7R", ["2G", 1.5]]]}', "confidence must be"),
    ('{"v": 1, "kind": "view", "work": ["7R"]}', "work column 1: expected a list"),
    ('{"v": 1, "kind": "view", "seq": "3"}', "seq must be an integer"),
    ('{"v": 1, "kind": "view", "hands": {"V1": -1}}', "hands maps"),
    ('{"v": 1, "kind": "view", "cards": []}', "unknown field"),
    ('{"v": 1, "kind": "event", "event": "undo"}', "unknown event"),
    ('{"v": 1, "kind": "event", "event": "card_corrected", "zone": "work"}', "column and row"),
    ('{"v": 1, "kind": "event", "event": "colour", "colour": "P"}', "colour must be"),
    ('{"v": 1, "kind": "event", "event": "played"}', "code"),
    ('{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "human"}]}', "two players"),
    ('{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "human"}, '
     '{"name": "B", "type": "human"}]}', "1 to 9 virtual"),
    ('{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "virtual"}, '
     '{"name": "A", "type": "human"}]}', "names must differ"),
    ('{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "robot"}]}', "players is a"),
    ('{"v": 1, "kind": "setup", "game": "chess", "players": [{"name": "A", "type": "virtual"}, '
     '{"name": "B", "type": "human"}]}', "unknown game"),
])
def test_bad_lines(line: str, message: str) -> None:
    with pytest.raises(ObservationError, match=message):
        parse_line(line)


def test_read_lines_names_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "obs.jsonl"
    path.write_text(dumps(SETUP) + "\n# a comment\n\n{broken\n" + dumps(Event("pass")) + "\n")
    items = list(read_lines(path))
    assert [n for n, _ in items] == [1, 4, 5]
    assert isinstance(items[1][1], ObservationError) and "line 4" in str(items[1][1])
    with pytest.raises(OSError, match="cannot read observations file"):
        list(read_lines(tmp_path / "missing.jsonl"))


@pytest.mark.parametrize(("zone", "column", "row", "message"), [
    ("work", 3, 1, "no column 3"), ("work", 1, 9, "no row 9"),
])
def test_correction_out_of_range(zone: str, column: int, row: int, message: str) -> None:
    view = View(work=((Cell("7R"),), (Cell("BACK"),)))
    with pytest.raises(ObservationError, match=message):
        view.corrected(zone, column, row, "2G")
