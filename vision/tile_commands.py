"""The tile side of ``cardtable eval tiles`` and ``cardtable detect --tiles``.

WHY here and not in the command modules: the commands are shared with the card pipeline; they
hand over to these two functions when tiles are asked for, so the card code paths stay as they
were and the tile pipeline keeps its I/O in one place.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def eval_tiles(count: int, seed: int | None, as_json: bool) -> int:
    """Measure tile recognition on ``count`` rendered domino tables and print the report."""
    from vision.evaluate import report_json
    from vision.synth.tile_scenes import TILE_EVAL_SEED_BASE
    from vision.tile_evaluate import evaluate_tile_scenes, format_tile_report

    def progress(msg: str) -> None:
        print(f"cardtable eval: {msg}", file=sys.stderr)

    rep = evaluate_tile_scenes(count, TILE_EVAL_SEED_BASE if seed is None else seed,
                               progress=progress)
    print(report_json(rep) if as_json else format_tile_report(rep.summary()))
    return 0


def detect_tiles_in(paths: Sequence[Path], corners: np.ndarray | None) -> int:
    """One JSON line per image (``docs/CONVENTIONS.md``) with every tile seen on the mat.

    An image that cannot be read, or on which the mat cannot be found, gives an ``error`` line
    and the next image is read; the exit status is 1 only if no image could be read."""
    from vision.geometry import GeometryError, TableGeometry
    from vision.sources import FrameSourceError, read_image
    from vision.tile_detect import detect_tiles

    geometry = TableGeometry.from_corners(corners) if corners is not None else None
    readable = 0
    for path in paths:
        try:
            image = read_image(path)
        except FrameSourceError as exc:
            print(json.dumps({"image": str(path), "error": str(exc)}), flush=True)
            continue
        readable += 1
        h, w = image.shape[:2]
        try:
            dets = detect_tiles(image, geometry)
        except GeometryError as exc:
            print(json.dumps({"image": str(path), "error": str(exc)}), flush=True)
            continue
        print(json.dumps({"image": str(path), "width": w, "height": h,
                          "detections": [d.to_json(w, h) for d in dets]}), flush=True)
    if readable == 0:
        print("cardtable: error: no image could be read", file=sys.stderr)
        return 1
    return 0
