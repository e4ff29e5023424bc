"""Fit the tile reader's confidence (:data:`vision.tiles.CALIBRATION`) on tuning scenes.

WHY a fitted logistic: the reading's features (misfit to a printed layout, margin to the next
number, how clearly pips stand out, the divider's contrast) say how sure the reading is, but not
in probabilities; a logistic regression fitted on tiles whose truth is known turns them into
the probability of being right. Only scenes below :data:`TILE_EVAL_SEED_BASE` are used, so the
measurement (``cardtable eval tiles``) stays unseen. Run ``python -m vision.tile_calibrate
[FIRST COUNT]`` and copy the weights it prints into ``vision/tiles.py``.
"""

from __future__ import annotations

import numpy as np

from vision.synth.tile_scenes import TILE_EVAL_SEED_BASE, render_tile_scene
from vision.tile_detect import locate_tiles
from vision.tile_evaluate import match
from vision.tiles import features_of, rectify


def collect(seeds: range) -> tuple[np.ndarray, np.ndarray]:
    """Feature vectors and right/wrong of every located tile of the scenes ``seeds``, and of
    every tile read once more from its true quad moved by about 1.5 px."""
    from vision.geometry import TableGeometry
    from vision.recognise import Detection

    if seeds.stop > TILE_EVAL_SEED_BASE:
        raise ValueError(f"calibration uses tuning scenes only (below {TILE_EVAL_SEED_BASE})")
    xs, ys = [], []
    rng = np.random.default_rng(seeds.start)
    for number in seeds:
        scene = render_tile_scene(number)
        located = locate_tiles(scene.image, TableGeometry.from_markers(scene.image))
        found = [features_of(rectify(scene.image, t.quad)) for t in located]
        dets = [Detection(code, 0.0, t.quad) for t, (code, _) in zip(located, found, strict=True)]
        width = float(np.median([np.linalg.norm(t.quad[1] - t.quad[0]) for t in scene.tiles]))
        for t, j in zip(scene.tiles, match([t.quad for t in scene.tiles], dets, 0.3 * width),
                        strict=True):
            if j is not None:
                xs.append(found[j][1])
                ys.append(float(dets[j].code == t.code))
            # and as a looser localisation would leave it: the misreads the fit must learn from
            loose = t.quad + rng.normal(0, 1.5, 2) + rng.normal(0, 0.7, (4, 2))
            code, vector = features_of(rectify(scene.image, loose.astype(np.float32)))
            xs.append(vector)
            ys.append(float(code == t.code))
    return np.array(xs), np.array(ys)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> np.ndarray:
    """Logistic regression weights by Newton's method, lightly regularised."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


if __name__ == "__main__":
    import sys

    first, count = (int(a) for a in (sys.argv[1:3] if len(sys.argv) > 2 else ("0", "100")))
    x, y = collect(range(first, first + count))
    weights = fit(x, y)
    print(f"{len(y)} tiles, {int(len(y) - y.sum())} wrong; CALIBRATION = np.array("
          f"{[round(float(v), 3) for v in weights]})")
