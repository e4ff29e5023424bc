"""End to end: a virtual player's whole turn, rendered as a table video by the project's own
renderer, replayed through vision and the runner; the verdicts must be the script's verdicts.
The same turn with a planted table mistake must be caught at the step where it is visible."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol_runner.observations import Event, Record, Setup, View
from protocol_runner.pipeline import open_recording, page_verdict

MODEL = Path(__file__).resolve().parents[1] / "models" / "card_classifier.onnx"
pytestmark = pytest.mark.skipif(not MODEL.is_file(),
                                reason="no trained card classifier in models/ yet")
FPS, HOLD, CHANGE, SHUFFLE = 4.0, 1.5, 0.5, 0.5


def one_virtual_turn() -> list[Record]:
    """A simulated game's records from the setup to the end of the first virtual turn."""
    from protocol_runner.runner import Session
    from protocol_runner.tablesim import TableSimulator, simulated_setup

    game = TableSimulator(simulated_setup(2, 2, hand_size=2), seed=2).play()
    session = Session()
    started = False
    for n, record in enumerate(game.records):
        session.feed(record)
        player = (session.state().get("instruction") or {}).get("player", "")
        virtual = player.startswith("V")
        if virtual and not started:
            started = True
        elif started and not virtual:
            return strip_seq(game.records[:n + 1])
    raise AssertionError("the simulated game has no complete virtual turn")


def strip_seq(records: list[Record]) -> list[Record]:
    """Views from a camera carry no script numbers; events keep none either."""
    from dataclasses import replace

    return [r if isinstance(r, Setup) else replace(r, seq=None) for r in records]


def script_verdicts(records: list[Record]) -> list[dict]:
    """What the runner says to the script itself (no camera): the truth to compare with."""
    from protocol_runner.runner import Session

    session = Session()
    out = []
    for record in records:
        verdict = next(o for o in session.feed(record) if o.to_json()["type"] == "verdict")
        if not isinstance(record, Setup):
            out.append(page_verdict(verdict.to_json()))
    return out


def replay_verdicts(folder: Path) -> list[dict]:
    pipeline = open_recording(folder, speed=None)
    pipeline.run()
    assert pipeline.error is None, pipeline.error
    return [v for v in pipeline.timeline_log if "kind" in v]


def compare(got: list[dict], want: list[dict]) -> None:
    got_lines = [f"{v['kind']}: {v['text']}" for v in got]
    want_lines = [f"{v['kind']}: {v['text']}" for v in want]
    assert got_lines == want_lines


@pytest.fixture(scope="module")
def turn() -> list[Record]:
    return one_virtual_turn()


def test_a_virtual_turn_replayed_from_video_gives_the_script_verdicts(
        turn: list[Record], tmp_path: Path) -> None:
    from vision.synth.video import render_script

    render_script(turn, tmp_path, fps=FPS, hold=HOLD, change=CHANGE, shuffle=SHUFFLE, seed=1)
    want = script_verdicts(turn)
    assert all(v["ok"] for v in want)
    assert sum(isinstance(r, Event) and r.event == "shuffle_done" for r in turn) >= 2
    compare(replay_verdicts(tmp_path), want)


def test_a_planted_mistake_is_caught_at_its_step(turn: list[Record], tmp_path: Path) -> None:
    from vision.synth.video import plant_mistake, render_script

    views = [r for r in turn if isinstance(r, View)]
    # the first view with face-up cards in the work area: swap one of them for another face
    at, column, row, code = next(
        (i, c, r, cell.code) for i, v in enumerate(views, start=1)
        for c, col in enumerate(v.work, start=1) for r, cell in enumerate(col, start=1)
        if cell.code not in (None, "BACK"))
    wrong = "9G" if code != "9G" else "9Y"
    planted = plant_mistake(turn, at, column, row, wrong)
    want = script_verdicts(planted)
    deviations = [v for v in want if not v["ok"]]
    assert len(deviations) == 1 and f"column {column}" in deviations[0]["text"]
    render_script(planted, tmp_path, fps=FPS, hold=HOLD, change=CHANGE, shuffle=SHUFFLE, seed=2)
    compare(replay_verdicts(tmp_path), want)
