"""The table renderer: scripts become timed segments, frames look like a table, shuffles stay
covered, planted mistakes land where asked."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.observations import Cell, Event, PlayerSpec, Setup, View
from vision.synth.video import (
    Camera,
    RenderError,
    cell_centres,
    changed_cells,
    plan,
    plant_mistake,
    render_script,
    render_world,
)

SETUP = Setup(players=(PlayerSpec("Ann", False), PlayerSpec("V1", True)))


def view(*columns: str, discard: str | None = "5R") -> View:
    return View(work=tuple(tuple(Cell(c) for c in col.split()) for col in columns),
                discard=Cell(discard))


A = view("BACK BACK", "BACK BACK", "BACK BACK")
B = view("7R BACK", "SY BACK", "BACK BACK")


@pytest.mark.parametrize(("columns", "rows"), [(3, 2), (13, 4), (40, 4), (107, 4)])
def test_cells_fit_the_work_area_left_to_right(columns: int, rows: int) -> None:
    centres = cell_centres([rows] * columns, "work")
    assert len(centres) == columns * rows
    zone = Camera().mat.zone("work")
    for x, y in centres.values():
        assert zone.x < x < zone.x + zone.w and zone.y < y < zone.y + zone.h
    # within a band, later columns lie further right; lower rows further down
    assert centres[(2, 1)][0] > centres[(1, 1)][0]
    assert centres[(1, 2)][1] > centres[(1, 1)][1]


def test_too_many_columns_is_a_clear_error() -> None:
    with pytest.raises(RenderError, match="do not fit"):
        cell_centres([4] * 600, "work")


def test_plan_times_views_and_covers_shuffles() -> None:
    script = plan([SETUP, A, Event("shuffle_done"), A, B], hold=1.0, change=0.5, shuffle=2.0)
    kinds = [s.kind for s in script.segments]
    # the same table again after a shuffle is still reached by hand: face-down cards moved
    assert kinds == ["change", "hold", "blind", "change", "hold", "change", "hold"]
    assert [round(t, 2) for t, _ in script.views] == [0.5, 4.0, 5.5]
    assert [(round(t, 2), r.kind) for t, r in script.events] == [(0.0, "setup"), (3.5, "event")]


def test_no_views_is_an_error() -> None:
    with pytest.raises(RenderError, match="no view"):
        plan([SETUP])


def test_changed_cells() -> None:
    assert changed_cells(A, B) == [("work", 1, 1), ("work", 2, 1)]


def test_covered_table_shows_nothing_of_the_cards() -> None:
    """Two different layouts under the cloth give the same picture: no shuffle information."""
    a = render_world(view("7R 1R", "2G SY"), covered=True)
    b = render_world(view("2G SY", "7R 1R"), covered=True)
    assert np.array_equal(a, b)
    assert not np.array_equal(render_world(view("7R 1R", "2G SY")),
                              render_world(view("2G SY", "7R 1R")))


@pytest.mark.parametrize(("at", "column", "row", "code", "error"), [
    (1, 1, 1, "2G", None),
    (5, 1, 1, "2G", "has 2 views"),
    (1, 9, 1, "2G", "no column 9"),
])
def test_plant_mistake(at: int, column: int, row: int, code: str, error: str | None) -> None:
    records = [SETUP, A, B]
    if error:
        with pytest.raises(RenderError, match=error):
            plant_mistake(records, at, column, row, code)
        return
    out = plant_mistake(records, at, column, row, code)
    assert len(out) == 4 and out[2] == A and out[1].work[0][0].code == "2G"


def test_render_script_writes_a_replayable_recording(tmp_path: Path) -> None:
    out = render_script([SETUP, A, Event("shuffle_done"), B], tmp_path, fps=5, hold=0.6,
                        change=0.4, shuffle=0.4)
    cap = cv2.VideoCapture(str(tmp_path / "video.mp4"))
    frames = []
    while (frame := cap.read())[0]:
        frames.append(frame[1])
    assert len(frames) == out.frames > 0
    assert frames[0].shape == (720, 1280, 3)
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in events] == ["setup", "event"]
    assert events[1]["event"] == "shuffle_done" and events[1]["t"] > 0
    views = [json.loads(line) for line in (tmp_path / "script.jsonl").read_text().splitlines()]
    assert [v["work"][0][0] for v in views] == ["BACK", "7R"]
