"""Bands of columns overlapping sideways (the card selection layout): split by the runner's prior.

Real frames: the table renderer (``vision.synth.video``) draws the layout the runner asks for, the
camera looks at it at an angle, and the localiser must find every cell at its place.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from protocol_runner.observations import from_json
from vision.detect import _across, _unstack, band_column_counts, locate_cards
from vision.geometry import DEFAULT_MAT, TableGeometry
from vision.layout import build_view, column_gap, zone_columns
from vision.recognise import Detection
from vision.synth.video import Camera, place_view, render_world

HELPERS = ("1B", "2G", "1R", "5B")


def selection_view(columns: int, rows: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    faces = ["7R", "+4", "SG", "0Y", "RB", "W", "9G", "+2Y"]
    work = [[str(rng.choice(faces)) if r == 0 else ("BACK" if r == 1 else HELPERS[r])
             for r in range(rows)] for _ in range(columns)]
    return from_json({"v": 1, "kind": "view", "work": work, "discard": "8B"})


@pytest.mark.parametrize(("widths", "columns", "card_w", "expected"), [
    ([1600.0], 53, 114.0, [53]),
    ([1570.0, 1570.0], 105, 114.0, [53, 52]),
    ([1570.0, 758.0], 77, 114.0, [53, 24]),
    ([1570.0, 1570.0], 2, 114.0, [1, 1]),
    ([500.0, 500.0], 1, 114.0, [1, 1]),  # fewer columns than bands: one each, never zero
    ([], 10, 114.0, []),
])
def test_band_column_counts(widths, columns, card_w, expected):
    counts = band_column_counts(widths, columns, card_w)
    assert sorted(counts, reverse=True) == sorted(expected, reverse=True)


@pytest.mark.parametrize(("xs", "gap"), [
    (np.array([0.0, 0.5, 1.0, 66.0, 66.4, 132.0]), 28.5),  # side by side: half a card
    (np.array([0.0, 0.8, 15.0, 15.5, 30.2, 29.6]), 7.5),  # fanned at 15 mm
    (np.array([3.0, 3.2]), 28.5),  # one column: nothing to measure
])
def test_column_gap(xs, gap):
    assert column_gap(xs) == pytest.approx(gap, abs=0.6)


@pytest.mark.parametrize(("columns", "rows", "whole"), [
    (105, 4, 2),  # two bands, rows fanned downwards: one whole card per band
    (105, 1, 2),
    (60, 4, 4),  # one band whose rows lie apart: the last card of every row is whole
])
def test_rendered_selection_layout_is_split_into_every_cell(columns, rows, whole):
    view = selection_view(columns, rows)
    image = Camera().shoot(render_world(view, seed=3))
    geometry = TableGeometry.from_markers(image, DEFAULT_MAT)
    loc = locate_cards(image, geometry, columns=columns, rows=rows)
    work = [c for c in loc.cards if c.zone == "work"]
    assert len(work) == columns * rows
    # each found card is named after the true cell nearest to it; the layout must put every
    # one back at that cell
    truth = [p for p in place_view(view, seed=3) if p.zone == "work"]
    centres = np.array([p.centre for p in truth])
    dets, off = [], 0
    for c in work:
        near = int(np.argmin(np.linalg.norm(centres - c.centre_mm, axis=1)))
        error = np.linalg.norm(centres[near] - c.centre_mm)
        assert error < 10.0
        off += error > 4.0
        dets.append(Detection(f"{truth[near].column}/{truth[near].row}", 0.9, c.quad, c.quad_mm,
                              "work", c.covered))
    assert off <= 0.05 * len(work)
    read = build_view(dets, rows_per_column=rows)
    assert len(read.work) == columns
    right = sum(cell.code == f"{ci}/{ri}" for ci, col in enumerate(read.work, start=1)
                for ri, cell in enumerate(col, start=1))
    # a card turned by a few degrees lies a few mm from where its visible corner says: one in
    # a hundred may be named after its neighbour here
    assert right >= 0.99 * columns * rows
    assert sum(not c.covered for c in work) == whole


@pytest.mark.parametrize(("bridges", "widths"), [
    # band 1's cards touch band 2's here and there, its last column too (past band 2's end):
    # the cut leaves those card bottoms in band 2's part, which must not widen it
    (((300, 400), (1000, 1060), (1790, 1850)), (1700, 1670)),
    (((1790, 1850),), (1700, 1670)),  # only band 1's last column reaches down
])
def test_touching_bands_are_cut_to_their_own_width(bridges, widths):
    """Two bands of 105 fanned columns of 3 (53 + 52, top-down at 2 px/mm): band 1 reaches
    one column pitch further right. Each band's part must be as wide as its own cards."""
    mask = np.zeros((900, 2000), np.uint8)
    mask[20:420, 150:1850] = 255
    mask[428:826, 150:1820] = 255
    for x0, x1 in bridges:
        mask[420:433, x0:x1] = 255
    cnt = max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0],
              key=cv2.contourArea)
    bands = sorted(_unstack(cnt, 105, 3, 2.0, (57.0, 88.0)), key=lambda r: r[0][1])
    assert [_across(r) for r in bands] == pytest.approx(widths, abs=4)


def test_without_the_prior_the_band_is_not_split_into_columns():
    """The reason for the prior: 105 columns 15 mm apart are not found by edges alone."""
    view = selection_view(105, 4)
    image = Camera().shoot(render_world(view, seed=3))
    geometry = TableGeometry.from_markers(image, DEFAULT_MAT)
    found = [c for c in locate_cards(image, geometry, fanned=True).cards if c.zone == "work"]
    assert len(found) < 0.8 * 420


def test_fanned_side_columns_are_not_read_as_a_skewed_grid():
    """Two columns of three cards fanned downwards 23 mm apart, 66 mm between columns: the
    card to the right of a card is the level one, not the lower one at about the same x."""
    centres = [(628, 522), (563, 500), (564, 477), (562, 523), (627, 478), (628, 502)]
    box = np.array([[-28.5, -44], [28.5, -44], [28.5, 44], [-28.5, 44]], np.float32)
    dets = [Detection(f"{x}", 0.9, box + (x, y), box + (x, y), "side") for x, y in centres]
    columns = zone_columns(dets)
    assert [[d.code for d in col] for col in columns] == [["564", "563", "562"],
                                                          ["627", "628", "628"]]


@pytest.mark.parametrize(("extra", "lengths"), [
    (None, [4, 4, 4, 4, 4, 4]),
    ((1, 4), [4, 5, 4, 4, 4, 4]),  # a fifth card at column 2's foot: a row too many there
    ((4, 4), [4, 4, 4, 4, 5, 4]),  # ... in the second band
])
def test_a_row_too_many_stays_in_its_column(extra, lengths):
    """Two bands of three fanned columns of 4 (rows 25 mm apart, bands 100 mm apart), the
    runner expecting 4 rows: a card laid a row below a column's foot is a fifth card of that
    column (a mistake the runner reports), not the start of another band."""
    box = np.array([[-28.5, -44], [28.5, -44], [28.5, 44], [-28.5, 44]], np.float32)
    cells = [(c, r) for c in range(6) for r in range(4)] + ([extra] if extra else [])
    dets = [Detection(f"{c}/{r}", 0.9, box + (100 + 20 * (c % 3), 60 + 25 * r + 175 * (c // 3)),
                      box + (100 + 20 * (c % 3), 60 + 25 * r + 175 * (c // 3)), "work", True)
            for c, r in cells]
    columns = zone_columns(dets, 4)
    assert [sum(d is not None for d in col) for col in columns] == lengths


@pytest.mark.parametrize(("columns", "rows"), [(104, 4), (60, 4)])
def test_lone_card_in_column_one_is_found_alone(columns, rows):
    """The selected card left alone in column 1 (the demo's card selection, 104 columns): its
    left edge shows only in the band's first card height, and its lower part must not be taken
    for a card of row 2."""
    full = selection_view(columns - 1, rows).to_json()["work"]
    view = from_json({"v": 1, "kind": "view", "work": [["BACK"]] + full, "discard": "8B"})
    image = Camera().shoot(render_world(view, seed=3))
    geometry = TableGeometry.from_markers(image, DEFAULT_MAT)
    loc = locate_cards(image, geometry, columns=columns, rows=rows)
    work = [c for c in loc.cards if c.zone == "work"]
    assert len(work) == (columns - 1) * rows + 1
    lone = [p.centre for p in place_view(view, seed=3) if (p.zone, p.column) == ("work", 1)]
    near = [c for c in work if np.linalg.norm(c.centre_mm - lone[0]) < 4.0]
    assert len(near) == 1
    dets = [Detection("BACK", 0.9, c.quad, c.quad_mm, "work", c.covered) for c in work]
    read = zone_columns(dets, rows)
    assert len(read) == columns
    assert [sum(d is not None for d in col) for col in read[:2]] == [1, rows]


def _gradients(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    gray = cv2.GaussianBlur(np.random.default_rng(seed).integers(0, 256, (120, 160), np.uint8),
                            (5, 5), 0)
    return cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)


@pytest.mark.parametrize(("box", "xs", "ys"), [
    ((40, 30, 120, 90), (50.3, 100.7), (40.2, 80.9)),     # well inside the part
    ((40, 30, 120, 90), (41.9, 110.0), (40.0, 80.0)),     # too near its left edge: the whole
    ((40, 30, 120, 90), (50.0, 118.5), (40.0, 80.0)),     # too near its right edge: the whole
    ((-20, -20, 60, 50), (-3.5, 40.25), (-2.0, 30.0)),    # the part's edge is the view's
    ((100, 60, 200, 150), (110.5, 163.0), (70.0, 125.0)),  # and beyond it
    ((40, 30, 120, 90), (0.0, 159.0), (0.0, 119.0)),      # the whole view
])
def test_a_part_of_the_derivative_reads_as_the_whole(box: tuple[int, int, int, int],
                                                      xs: tuple[float, float],
                                                      ys: tuple[float, float]) -> None:
    """split_band's samples of a band's derivative are exactly those of the whole view's,
    whether they fall in the part made for the band or (read from the whole) outside it."""
    from vision.detect import _Toward

    gx, gy = _gradients()
    u = np.array([np.cos(0.3), np.sin(0.3)])
    qx, qy = np.meshgrid(np.linspace(*xs, 37, dtype=np.float32),
                         np.linspace(*ys, 23, dtype=np.float32))
    whole = cv2.remap(np.maximum(gx * u[0] + gy * u[1], 0), qx, qy, cv2.INTER_LINEAR)
    assert np.array_equal(_Toward(gx, gy, u, box).remap(qx, qy), whole)
