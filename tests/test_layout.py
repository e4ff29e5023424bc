"""Detections → observation: columns, rows, bands, skew, gaps, zones; from labels and pixels."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from protocol_runner.observations import trim
from vision.detect import locate_cards
from vision.geometry import TableGeometry
from vision.layout import build_view, layout_skew
from vision.recognise import Detection
from vision.synth.scenes import Scene, render_scene


def _truth_detections(scene: Scene, drop: set[int] = frozenset()) -> list[Detection]:
    Hinv = np.linalg.inv(scene.H)
    out = []
    for i, c in enumerate(scene.cards):
        if i in drop:
            continue
        mm = cv2.perspectiveTransform(c.quad.reshape(-1, 1, 2), Hinv).reshape(4, 2)
        out.append(Detection(c.code, 0.9, c.quad, mm, c.zone, c.covered))
    return out


def _codes(columns) -> list[list[str | None]]:
    out = [[c.code for c in trim(col)] for col in columns]
    while out and not out[-1]:
        out.pop()
    return out


@pytest.mark.parametrize(
    ("seed", "n", "fanned", "deck"),
    [(31, 50, False, "uno"), (32, 50, False, "standard"), (33, 50, True, "uno"),
     (34, 30, True, "mixed"), (35, 9, False, "uno")],
)
def test_view_from_labels_matches_the_layout(seed: int, n: int, fanned: bool, deck: str) -> None:
    scene = render_scene(seed, n, fanned=fanned, deck=deck)
    view = build_view(_truth_detections(scene))
    assert _codes(view.work) == scene.columns("work")
    assert _codes(view.side) == scene.columns("side")
    assert view.discard.code == next(c.code for c in scene.cards if c.zone == "discard")
    assert view.discard.confidence == pytest.approx(0.9)


def test_a_missing_card_leaves_an_empty_cell_not_a_shift() -> None:
    scene = render_scene(36, 50)
    target = next(i for i, c in enumerate(scene.cards) if c.column == 3 and c.row == 1)
    view = build_view(_truth_detections(scene, {target}))
    want = scene.columns("work")
    want[3][1] = None
    assert _codes(view.work) == want


def test_rows_per_column_wraps_into_bands() -> None:
    # evenly spaced whole cards cannot show a band break; the runner's column height can
    scene = render_scene(37, 50)
    dets = _truth_detections(scene)
    truth = scene.columns("work")
    one = build_view(dets)
    assert len(one.work) == len(truth)
    two = build_view(dets, rows_per_column=2)
    assert _codes(two.work) == [col[:2] for col in truth] + [col[2:] for col in truth
                                                             if len(col) > 2]


@pytest.mark.parametrize("degrees", [-4.0, 0.0, 3.0])
def test_skew_is_measured(degrees: float) -> None:
    a = np.deg2rad(degrees)
    grid = np.array([[x * 66.0, y * 98.0] for y in range(4) for x in range(10)])
    rot = grid @ np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    assert np.rad2deg(layout_skew(rot)) == pytest.approx(degrees, abs=0.2)


@pytest.mark.parametrize("centres", [np.zeros((0, 2)), np.array([[100.0, 50.0]]),
                                     np.array([[100.0, 50.0], [100.0, 300.0]])])
def test_skew_without_neighbours_is_zero(centres: np.ndarray) -> None:
    # no card has a neighbour to its right: nothing to measure a turn by
    assert layout_skew(centres) == 0.0


def test_empty_table_gives_an_empty_view() -> None:
    view = build_view([])
    assert view.work == () and view.side == () and view.discard.code is None


def test_view_from_pixels_matches_the_layout() -> None:
    """Localisation + layout end to end (codes from the labels by position)."""
    scene = render_scene(38, 50)
    loc = locate_cards(scene.image, TableGeometry.from_markers(scene.image), fanned=False)
    dets = []
    for c in loc.cards:
        truth = min(scene.cards, key=lambda t: float(np.abs(t.quad - c.quad).sum()))
        dets.append(Detection(truth.code, 0.8, c.quad, c.quad_mm, c.zone))
    view = build_view(dets)
    assert _codes(view.work) == scene.columns("work")


@pytest.mark.parametrize(
    ("skew", "lean"),
    [(0.0, 0.0), (2.5, 0.0), (-2.5, 0.0), (3.0, -3.0), (-4.0, 4.0), (3.0, 3.0), (2.0, -1.0)],
)
def test_columns_survive_drifting_rows_and_leaning_columns(skew: float, lean: float) -> None:
    """Rows drifting across the table (columns upright), the whole layout turned (the lean is
    minus the skew), or a sheared grid: every card stays in its own column and row."""
    ts, tl = np.tan(np.deg2rad(skew)), np.tan(np.deg2rad(lean))
    dets, truth = [], []
    rng = np.random.default_rng(7)
    for col in range(12):
        column = []
        for row in range(4):
            x, y = 40.0 + col * 64.0, 50.0 + row * 97.0
            centre = np.array([x + (y - 50.0) * tl, y + (x - 40.0) * ts])
            centre += rng.uniform(-1.5, 1.5, 2)
            quad = centre + np.array([[-28, -43.5], [28, -43.5], [28, 43.5], [-28, 43.5]])
            code = f"{row + 1}{'RGBY'[col % 4]}"
            dets.append(Detection(code, 0.9, quad, quad, "work"))
            column.append(code)
        truth.append(column)
    assert _codes(build_view(dets).work) == truth
