"""Measurement of tile recognition on rendered domino tables: the card figures, for tiles.

The same :class:`vision.evaluate.Report` as for card scenes, so the same figures come out: % of
tiles found with the right code, false tiles (detections that match no tile), per-class
accuracy, confusion pairs and the rate of tables read with no error at all (every tile found
and right, nothing extra). A label is matched to the unused detection whose quad is nearest,
corner by corner (any starting corner: a tile lying across the view has no clear "top"), within
30% of a tile's width. Confidence calibration is measured too (:mod:`vision.calibration`, as
for cards: a detection is right when it is a tile with its code). So is the speed: the median
wall-clock time to find and read the tiles of one frame (rendering and scoring left out).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from vision.evaluate import MISSED, EvalError, Report, format_report
from vision.geometry import GeometryError
from vision.recognise import Detection
from vision.synth.tile_scenes import TILE_EVAL_SEED_BASE, render_tile_scene
from vision.tile_detect import detect_tiles


def quad_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean corner distance of two quads, over the four ways to pair their corners in order."""
    return min(float(np.linalg.norm(np.roll(a, k, axis=0) - b, axis=1).mean()) for k in range(4))


def match(truth: list[np.ndarray], dets: list[Detection], tolerance: float
          ) -> list[int | None]:
    """For each true quad, the index of its detection (nearest first, each used once)."""
    pairs = sorted((quad_distance(d.quad, q), i, j) for i, q in enumerate(truth)
                   for j, d in enumerate(dets))
    out: list[int | None] = [None] * len(truth)
    used: set[int] = set()
    for dist, i, j in pairs:
        if dist >= tolerance:
            break
        if out[i] is None and j not in used:
            out[i] = j
            used.add(j)
    return out


class TileReport(Report):
    """A :class:`Report` that also keeps the seconds each frame took."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.frame_seconds: list[float] = []

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        if self.frame_seconds:
            out["median_ms_per_frame"] = round(1000 * float(np.median(self.frame_seconds)), 1)
        return out


def evaluate_tile_scenes(count: int, seed: int = TILE_EVAL_SEED_BASE,
                         size: tuple[int, int] = (1280, 720),
                         progress: Callable[[str], None] | None = None) -> TileReport:
    """Render ``count`` tile scenes from ``seed`` on, find and read their tiles, score them."""
    if count < 1:
        raise EvalError("count must be at least 1")
    if seed < TILE_EVAL_SEED_BASE:
        raise EvalError(f"tile measurement seeds start at {TILE_EVAL_SEED_BASE} "
                        "(below are for tuning and calibration)")
    return score_tile_scenes(range(seed, seed + count), size, progress)


def score_tile_scenes(seeds: range, size: tuple[int, int] = (1280, 720),
                      progress: Callable[[str], None] | None = None) -> TileReport:
    """Score the tile scenes numbered ``seeds`` (any: tuning uses those below measurement)."""
    rep = TileReport(f"rendered tile scenes ({size[0]}x{size[1]}, seeds {seeds.start}+)")
    for k, number in enumerate(seeds):
        scene = render_tile_scene(number, size=size)
        rep.images += 1
        rep.layouts += 1
        start = time.perf_counter()
        try:
            dets = list(detect_tiles(scene.image))
        except GeometryError as exc:
            rep.unreadable.append(f"scene {number}: {exc}")
            dets = []
        rep.frame_seconds.append(time.perf_counter() - start)
        rep.detections += len(dets)
        width = float(np.median([np.linalg.norm(t.quad[1] - t.quad[0]) for t in scene.tiles]))
        hits = match([t.quad for t in scene.tiles], dets, 0.3 * width)
        reads = [MISSED if j is None else dets[j].code for j in hits]
        rep.pairs.extend((t.code, r) for t, r in zip(scene.tiles, reads, strict=True))
        right = {j for t, j in zip(scene.tiles, hits, strict=True)
                 if j is not None and dets[j].code == t.code}
        rep.scored.extend((float(d.confidence), j in right) for j, d in enumerate(dets))
        false = len(dets) - sum(j is not None for j in hits)
        rep.false_cards += false
        rep.layouts_right += false == 0 and all(t.code == r for t, r in
                                                zip(scene.tiles, reads, strict=True))
        if progress and (k + 1) % 10 == 0:
            progress(f"{k + 1}/{len(seeds)} scenes")
    return rep


def format_tile_report(summary: dict[str, Any]) -> str:
    """The card report's text, in the words of tiles, with the speed added."""
    text = format_report(summary)
    for card, tile in (("labelled cards", "labelled tiles"), ("per-card", "per-tile"),
                       ("false cards", "false tiles"), ("layouts read", "tables read")):
        text = text.replace(card, tile)
    lines = [text]
    if "median_ms_per_frame" in summary:
        lines.append(f"  speed: median {summary['median_ms_per_frame']:.0f} ms per frame "
                     "(finding and reading the tiles)")
    return "\n".join(lines)
