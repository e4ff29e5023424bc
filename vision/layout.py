"""Detections → the runner's observation: cards assigned to zones, columns and rows.

The runner (``protocol_runner/observations.py``) counts the work area as columns, left to right,
each top to bottom, band after band when the matrix wraps. People never lay cards on a perfect
grid, so grouping works in the mat's millimetres on the layout's own axes: the rows' skew and
the columns' lean are measured from neighbouring cards and taken out, rows are gaps in y,
columns are gaps in x, and bands are the large gaps between rows (or every ``rows_per_column``
rows when the runner says how tall a column is, which a layout of whole, evenly spaced cards
cannot show by itself).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from protocol_runner.observations import EMPTY, Cell, View
from vision.geometry import DEFAULT_MAT, MatSpec
from vision.recognise import Detection

CARD_W, CARD_H = 57.0, 88.0
ROW_GAP_MM = 12.0
"""Two cards whose centres differ by more than this in y (after de-skewing) lie in two rows."""
COLUMN_GAP_MM = 0.5 * CARD_W
FANNED_JITTER_MM = 5.0
"""Largest x offset between cards of one column (hand jitter), smaller than any fanned step."""


def layout_skew(centres: np.ndarray) -> float:
    """The layout's rotation (radians): median angle from each card to its right neighbour."""
    dx, dy = _offsets(centres)
    ok = (dx > 0.6 * CARD_W) & (dx < 2.2 * CARD_W) & (np.abs(dy) < 0.35 * dx)
    # the right neighbour is the one most level with this card (in a fanned column the cards
    # below lie about as near to the right but lower)
    angles = _to_nearest(ok, np.abs(dy) + 0.1 * dx, dy, dx)
    return float(np.median(angles)) if len(angles) else 0.0


def column_lean(centres: np.ndarray, skew: float) -> float:
    """The columns' lean from the mat's vertical (radians, positive: leaning right going down):
    median angle from each card to the card below it; ``skew`` when no card has one below.

    WHY apart from the skew: a layout turned as a whole leans its columns as much as its rows,
    but people often drift rows up or down across the table while every column stays upright
    (a shear). Taking out a rotation there moves each column's lower cards sideways by
    ``sin(skew)`` of their depth, which in a four-row layout is wider than the gap that tells
    columns apart.
    """
    dx, dy = _offsets(centres)
    ok = (dy > ROW_GAP_MM) & (dy < 2.2 * CARD_H) & (np.abs(dx) < 0.35 * dy)
    angles = _to_nearest(ok, np.abs(dx) + 0.1 * dy, dx, dy)
    return float(np.median(angles)) if len(angles) else skew


def _offsets(centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y offsets from every card to every card: ``dx[i, j]`` from card i to card j."""
    return (centres[None, :, 0] - centres[:, None, 0],
            centres[None, :, 1] - centres[:, None, 1])


def _to_nearest(ok: np.ndarray, cost: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each card with a neighbour where ``ok`` (a card never its own), the angle
    ``arctan2(a, b)`` to the one of least ``cost`` among them."""
    np.fill_diagonal(ok, False)
    rows = np.flatnonzero(ok.any(axis=1))
    if not len(rows):
        return np.zeros(0)
    j = np.argmin(np.where(ok[rows], cost[rows], np.inf), axis=1)
    return np.arctan2(a[rows, j], b[rows, j])


def layout_axes(centres: np.ndarray) -> np.ndarray:
    """Centres (mm) in the layout's own axes: x along its rows, y down its columns."""
    skew = layout_skew(centres)
    lean = column_lean(centres, skew)
    basis = np.array([[np.cos(skew), np.sin(lean)], [np.sin(skew), np.cos(lean)]])
    return centres @ np.linalg.inv(basis).T


def _clusters(values: np.ndarray, gap: float) -> list[np.ndarray]:
    """Indices of ``values`` grouped where consecutive sorted values differ by more than gap."""
    order = np.argsort(values)
    groups: list[list[int]] = [[int(order[0])]] if len(order) else []
    for a, b in zip(order[:-1], order[1:], strict=True):
        if values[b] - values[a] > gap:
            groups.append([])
        groups[-1].append(int(b))
    return [np.array(g) for g in groups]


def column_gap(xs: np.ndarray) -> float:
    """The x gap (mm) that separates two columns of one band.

    Side by side, columns stand a card apart; fanned sideways (the card selection layout), they
    may be only 13 mm apart while the cards of one column differ by a hand's jitter (a mm or
    two). Half the typical step between distinct columns separates both.
    """
    steps = np.diff(np.sort(xs))
    apart = steps[steps > FANNED_JITTER_MM]
    if not len(apart):
        return COLUMN_GAP_MM
    return float(np.clip(0.5 * np.median(apart), FANNED_JITTER_MM, COLUMN_GAP_MM))


def _cell(d: Detection) -> Cell:
    return Cell(d.code, float(np.clip(d.confidence, 0.0, 1.0)))


def zone_columns(detections: Sequence[Detection], rows_per_column: int | None = None
                 ) -> list[list[Detection | None]]:
    """The detections of one zone as columns (left→right, band after band) of rows (top→down)."""
    if not detections:
        return []
    centres = np.array([d.quad_mm.mean(axis=0) for d in detections])  # type: ignore[union-attr]
    xy = layout_axes(centres)
    rows = _clusters(xy[:, 1], ROW_GAP_MM)
    row_y = np.array([xy[r, 1].mean() for r in rows])
    # bands: a gap between rows much larger than the usual step, or a fixed column height
    bands: list[list[int]] = [[0]]
    if rows_per_column:
        # a band ends after the rows the runner expects, unless the next row overlaps the
        # row above (less than a card lower): bands never overlap, so that is a row too many
        # in the same band (a mistake the runner must see as such, not as another band)
        bands = [[0]]
        for k in range(1, len(rows)):
            if len(bands[-1]) >= rows_per_column and row_y[k] - row_y[k - 1] > 0.8 * CARD_H:
                bands.append([])
            bands[-1].append(k)
    else:
        steps = np.diff(row_y)
        typical = float(np.median(steps)) if len(steps) else 0.0
        for k, step in enumerate(steps, start=1):
            if step > 1.6 * typical and step > 0.8 * CARD_H:
                bands.append([])
            bands[-1].append(k)
    out: list[list[Detection | None]] = []
    for band in bands:
        members = np.concatenate([rows[k] for k in band])
        row_of = {int(i): pos for pos, k in enumerate(band) for i in rows[k]}
        for col in _clusters(xy[members, 0], column_gap(xy[members, 0])):
            cells: list[Detection | None] = [None] * len(band)
            for i in members[col]:
                r = row_of[int(i)]
                if cells[r] is None or detections[i].confidence > cells[r].confidence:  # type: ignore[union-attr]
                    cells[r] = detections[i]
            out.append(cells)
    return out


def build_view(detections: Sequence[Detection], mat: MatSpec = DEFAULT_MAT,
               rows_per_column: int | None = None, seq: int | None = None,
               t: float | None = None) -> View:
    """The observation (:class:`protocol_runner.observations.View`) of one frame's detections."""
    by_zone: dict[str, list[Detection]] = {}
    for d in detections:
        if d.zone is not None and d.quad_mm is not None:
            by_zone.setdefault(d.zone, []).append(d)

    def columns(zone: str, rpc: int | None) -> tuple[tuple[Cell, ...], ...]:
        return tuple(tuple(EMPTY if d is None else _cell(d) for d in col)
                     for col in zone_columns(by_zone.get(zone, []), rpc))

    pile = by_zone.get("discard", [])
    discard = _cell(max(pile, key=lambda d: d.confidence)) if pile else EMPTY
    return View(work=columns("work", rows_per_column), side=columns("side", None),
                discard=discard, seq=seq, t=t)
