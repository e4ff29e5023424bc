"""Reading a domino tile: count the pips in each half of a rectified tile image.

WHY counting and not a trained classifier: a tile's face is its pip counts, drawn on a fixed
3 × 3 grid per half, so a blob count is exact where a classifier would have to learn 28 classes
from renders; it needs no model file and works on any set's colours (light or dark body, black,
white or coloured pips) because pips are found as blobs that differ from the body colour.

Input is what localisation gives for a card: the four corners of the object in the image
(``quad``, clockwise from the top-left corner as it lies). :func:`rectify` warps it to an upright
portrait tile (the long side vertical; which end is on top does not matter, since the code names
the tile with the smaller end first: ``docs/CONVENTIONS.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

TILE_SIZE = (120, 240)  # (W, H) of a rectified tile


class TileReadError(ValueError):
    """An image that cannot be a tile (empty, or not an image)."""


@dataclass(frozen=True, slots=True)
class TileReading:
    """What :func:`read_tile` saw: the code, the pips per half (top, bottom), a confidence."""

    code: str
    halves: tuple[int, int]
    confidence: float


def rectify(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = TILE_SIZE
            ) -> np.ndarray:
    """Warp the tile at ``quad`` (4 × 2 image points, clockwise) to an upright portrait image
    of ``size``: the quad's longer sides become the vertical ones."""
    q = np.asarray(quad, dtype=np.float32).reshape(4, 2)
    side = [float(np.linalg.norm(q[(i + 1) % 4] - q[i])) for i in range(4)]
    if side[0] + side[2] > side[1] + side[3]:  # top/bottom edges are the long ones: turn it
        q = np.roll(q, -1, axis=0)
    w, h = size
    target = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float32)
    return cv2.warpPerspective(image, cv2.getPerspectiveTransform(q, target), (w, h),
                               flags=cv2.INTER_AREA)


def _pip_mask(tile: np.ndarray) -> np.ndarray:
    """Pixels that differ clearly from the body colour, away from the edges and the divider."""
    lab = cv2.cvtColor(tile, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    inner = lab[int(0.12 * h):int(0.88 * h), int(0.12 * w):int(0.88 * w)].reshape(-1, 3)
    body = np.median(inner, axis=0)
    diff = np.linalg.norm(lab - body, axis=2)
    threshold = max(30.0, float(cv2.threshold(np.clip(diff, 0, 255).astype(np.uint8), 0, 255,
                                              cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]))
    mask = (diff > threshold).astype(np.uint8)
    edge = int(0.11 * w)
    mask[:, :edge] = 0
    mask[:, w - edge:] = 0
    mask[:edge, :] = 0
    mask[h - edge:, :] = 0
    band = max(2, h // 20)
    mask[h // 2 - band: h // 2 + band + 1, :] = 0  # the divider line and a spinner pin
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def read_tile(tile: np.ndarray) -> TileReading:
    """Read a rectified portrait tile image (any size; resized to :data:`TILE_SIZE`)."""
    if not isinstance(tile, np.ndarray) or tile.ndim != 3 or tile.shape[2] != 3 \
            or min(tile.shape[:2]) < 8:
        raise TileReadError("a tile image is a BGR array of at least 8 × 8 pixels")
    tile = cv2.resize(tile, TILE_SIZE, interpolation=cv2.INTER_AREA)
    mask = _pip_mask(tile)
    w, h = TILE_SIZE
    found = []
    for part in (mask[: h // 2], mask[h // 2:]):
        n, _, stats, _ = cv2.connectedComponentsWithStats(part)
        found.append([int(stats[i, cv2.CC_STAT_AREA]) for i in range(1, n)
                      if stats[i, cv2.CC_STAT_AREA] >= 0.004 * w * w])
    every = [a for blobs in found for a in blobs]
    typical = float(np.median(every)) if every else 0.0
    # a pip is about as big as the others: slivers of an edge or of a spinner pin are not
    halves = [min(sum(1 for a in blobs if a >= 0.4 * typical), 6) for blobs in found]
    areas = [a for a in every if a >= 0.4 * typical]
    # pips of one set are one size: blobs that vary a lot in area mean a misread (glare, dirt)
    spread = float(np.std(areas) / np.mean(areas)) if len(areas) > 1 else 0.0
    confidence = float(np.clip(1.0 - spread, 0.05, 1.0))
    low, high = sorted(halves)
    return TileReading(f"D{low}{high}", (halves[0], halves[1]), round(confidence, 3))


def evaluate(tiles: int = 560, seed: int = 0) -> dict[str, float]:
    """Top-1 accuracy of :func:`read_tile` on rendered table scenes (every code equally often),
    the tile's corners given as a detector would give them (2 px of error, any start corner)."""
    from vision.synth.tiles import TILE_CODES, tile_scene

    rng = np.random.default_rng(seed)
    right = 0
    for i in range(tiles):
        code = TILE_CODES[i % len(TILE_CODES)]
        image, quad = tile_scene(code, rng)
        seen = np.roll(quad + rng.normal(0, 2, quad.shape).astype(np.float32),
                       int(rng.integers(4)), axis=0)
        right += read_tile(rectify(image, seen)).code == code
    return {"tiles": tiles, "seed": seed, "top1": round(right / tiles, 4)}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(evaluate(*(int(a) for a in sys.argv[1:3]))))
