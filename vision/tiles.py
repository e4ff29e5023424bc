"""Reading a domino tile: which cells of each half's 3 × 3 pip grid hold a pip.

WHY reading the grid and not a trained classifier: a tile's face is its pip counts, printed on a
fixed 3 × 3 grid per half, so looking at the nine places a pip can be is exact where a
classifier would have to learn 28 classes from renders; it needs no model file and works on any
set's colours (light or dark body, black, white or coloured pips) because a pip is a spot that
differs from the body colour. Looking at the grid cells, rather than counting blobs, keeps
working when a small, blurred tile runs its pips together. The pattern found must be one that a
number prints: one that is not (a pip lost to glare) lowers the confidence. A back is a tile
with no divider line across its middle.

Input is what localisation gives for a card: the four corners of the object in the image
(``quad``, clockwise from the top-left corner as it lies). :func:`rectify` warps it to an upright
portrait tile (the long side vertical; which end is on top does not matter, since the code names
the tile with the smaller end first: ``docs/CONVENTIONS.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from protocol_runner.cards import BACK

TILE_SIZE = (120, 240)  # (W, H) of a rectified tile


class TileReadError(ValueError):
    """An image that cannot be a tile (empty, or not an image)."""


@dataclass(frozen=True, slots=True)
class TileReading:
    """What :func:`read_tile` saw: the code, the pips per half (top, bottom), a confidence."""

    code: str
    halves: tuple[int, int]
    confidence: float


PIP_GRID = (0.24, 0.5, 0.76)
"""Pip centres on a half's 3 × 3 grid, as fractions of the half's width and height."""
DIVIDER_MIN = 5.5
"""Line contrast (Lab, :func:`find_divider`) above which the middle is taken as a face's
divider (a back has none): on tuning scenes, with quads moved as a loose localisation leaves
them, backs stay below 4.5 and faces above 6.4 (D00 above 11); a face whose thin divider blurs
away still reads by its clean pip pattern."""
PIP_MIN = 15.0
"""Spot contrast (Lab, see :func:`cell_contrast`) below which a grid cell is empty, whatever
the other pips."""
FAINT_MIN = 8.0
"""Spot contrast above which a half's cells may still hold pips too faint for
:data:`PIP_MIN` (a set that colours its sixes yellow, on an ivory body in dim light: the pips
stand 9–14 above the body, the empty cells 0–2), if they form a printed number's layout exactly,
stand :data:`FAINT_RATIO` times above every empty cell, and the tile shows a face's divider."""
FAINT_RATIO = 3.0
CALIBRATION = np.array([6.561, -0.757, 0.558, 1.894, -2.46])
"""Logistic weights of :meth:`TileFeatures.vector`: a reading's confidence is the probability
that it is right, fitted on tile scenes 0–49 (below the measurement seeds; 2792 readings, 63
wrong, half of them from quads moved about 1.5 px): ``python -m vision.tile_calibrate 0 50``."""


def _templates() -> dict[int, list[frozenset[tuple[int, int]]]]:
    """Every number's pip cells on the 3 × 3 grid, in the layouts sets print: as drawn, mirrored
    (the other diagonal), and turned a quarter (a 6 in rows)."""
    from vision.synth.tiles import PIP_LAYOUT

    out: dict[int, list[frozenset[tuple[int, int]]]] = {}
    for n, cells in PIP_LAYOUT.items():
        variants = {frozenset(cells), frozenset((r, 2 - c) for r, c in cells),
                    frozenset((c, r) for r, c in cells), frozenset((c, 2 - r) for r, c in cells)}
        out[n] = sorted(variants, key=sorted)
    return out


TEMPLATES = _templates()


@dataclass(frozen=True, slots=True)
class HalfReading:
    """One half: the number read, the cells that hold a pip, how far that is from the number's
    printed layout (``misfit``: cells missing + cells extra) and from the next best number
    (``margin``)."""

    number: int
    cells: frozenset[tuple[int, int]]
    misfit: int
    margin: float


def read_half(cells: frozenset[tuple[int, int]]) -> HalfReading:
    """The number whose printed layout best explains the occupied ``cells`` (row, column)."""
    # a pip lost (to glare, or run into its neighbour by blur) is likelier than a spot where
    # none is printed, so a missing cell costs a little less than an extra one
    costs = sorted((min((0.9 * len(t - cells) + len(cells - t), len(cells ^ t))
                        for t in TEMPLATES[n]), n) for n in TEMPLATES)
    ((best, misfit), n), ((second, _), _) = costs[0], costs[1]
    return HalfReading(n, cells, misfit, round(second - best, 2))


@dataclass(frozen=True, slots=True)
class TileFeatures:
    """What a reading's confidence rests on: the halves' total ``misfit`` to a printed layout,
    the smaller ``margin`` to the next best number, ``separation`` (how clearly the weakest pip
    stands above the strongest empty cell, as a ratio) and the ``divider`` contrast."""

    misfit: int
    margin: float
    separation: float
    divider: float

    def vector(self, back: bool) -> np.ndarray:
        """[1, misfit, margin (at most 3), separation (log, clipped), evidence for face / back
        from the divider (log ratio to the threshold, clipped)]."""
        evidence = np.log(max(self.divider, 1.0) / DIVIDER_MIN) * (-1 if back else 1)
        return np.array([1.0, self.misfit, min(self.margin, 3),
                         float(np.clip(np.log(self.separation), -1, 2)),
                         float(np.clip(evidence, -2, 2))])

    def confidence(self, back: bool) -> float:
        z = float(self.vector(back) @ CALIBRATION)
        return round(1.0 / (1.0 + np.exp(-z)), 4)


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


def find_divider(lab: np.ndarray) -> tuple[int, float]:
    """The row of the divider line and how far it differs in colour from the body just above
    and below it (7 px away, which cancels a gradient of light across the tile): a face shows
    a line there, a back shows nothing. Searched within 5% of the tile's middle (a quad a
    pixel off moves it). A row counts what three quarters of the tile's middle 64% show: the
    divider runs across the whole tile, while a spinner pin or the arc of a back's printed
    mark crosses part of it only."""
    h, w = lab.shape[:2]
    reach, gap = h // 20, 7
    band = cv2.GaussianBlur(lab[h // 2 - reach - gap:h // 2 + reach + gap + 1,
                                int(0.18 * w):int(0.82 * w)], (0, 0), 1.5)
    line = np.linalg.norm(band[gap:-gap] - 0.5 * (band[:-2 * gap] + band[2 * gap:]), axis=2)
    per_row = np.percentile(line, 25, axis=1)
    k = int(np.argmax(per_row))
    return h // 2 - reach + k, float(per_row[k])


def cell_contrast(lab: np.ndarray, middle: int) -> np.ndarray:
    """2 × 3 × 3 array: for each half and grid cell, how far the spot there stands out from the
    body colour (Lab distance, as a difference of Gaussians; the best place near the cell)."""
    h, w = lab.shape[:2]
    inner = lab[int(0.12 * h):int(0.88 * h), int(0.12 * w):int(0.88 * w)].reshape(-1, 3)
    diff = np.linalg.norm(lab - np.median(inner, axis=0), axis=2)
    # the felt or table showing at a tile's rounded corners is no pip
    diff *= _INSIDE
    # a spot, not a slope: the difference at a pip's scale less most of it at three times
    # that scale, so a shade or the tile's edge leaking in from a loose quad does not count
    diff = cv2.GaussianBlur(diff, (0, 0), 0.04 * w) - 0.8 * cv2.GaussianBlur(diff, (0, 0), 0.1 * w)
    out = np.zeros((2, 3, 3), np.float32)
    reach = 0.08
    for k, (top, bottom) in enumerate(((0, middle), (middle, h))):
        height = bottom - top
        for r, gv in enumerate(PIP_GRID):
            y0, y1 = top + int((gv - reach) * height), top + int((gv + reach) * height) + 1
            for c, gu in enumerate(PIP_GRID):
                x0, x1 = int((gu - reach) * w), int((gu + reach) * w) + 1
                out[k, r, c] = diff[y0:y1, x0:x1].max()
    return out


def _inside(size: tuple[int, int]) -> np.ndarray:
    """1 inside a tile's outline inset by 5% (corners rounded as on the roundest sets)."""
    w, h = size
    inset, r = int(0.05 * w), int(0.25 * w)
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (inset + r, inset), (w - 1 - inset - r, h - 1 - inset), 1, -1)
    cv2.rectangle(mask, (inset, inset + r), (w - 1 - inset, h - 1 - inset - r), 1, -1)
    for cx, cy in ((inset + r, inset + r), (w - 1 - inset - r, inset + r),
                   (inset + r, h - 1 - inset - r), (w - 1 - inset - r, h - 1 - inset - r)):
        cv2.circle(mask, (cx, cy), r, 1, -1)
    return mask.astype(np.float32)


_INSIDE = _inside(TILE_SIZE)


def _pips(half: np.ndarray, floor: float, strongest: float) -> frozenset[tuple[int, int]]:
    """The cells of a half's 3 × 3 ``half`` contrast that hold a pip: a half's pips share a
    colour (some sets colour each number), so a pip stands out as much as the half's strongest
    one does, clearly from the body (``floor``) and not far below the tile's ``strongest``."""
    cut = max(floor, 0.5 * float(half.max()), 0.3 * strongest)
    return frozenset((r, c) for r in range(3) for c in range(3) if half[r, c] > cut)


def _read(tile: np.ndarray) -> tuple[TileReading, np.ndarray]:
    """The reading and the feature vector its confidence was computed from."""
    if not isinstance(tile, np.ndarray) or tile.ndim != 3 or tile.shape[2] != 3 \
            or min(tile.shape[:2]) < 8:
        raise TileReadError("a tile image is a BGR array of at least 8 × 8 pixels")
    tile = cv2.resize(tile, TILE_SIZE, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(tile, cv2.COLOR_BGR2LAB).astype(np.float32)
    middle, divider = find_divider(lab)
    contrast = cell_contrast(lab, middle)
    strongest = float(contrast.max())
    halves = []
    weakest_pip, strongest_empty = np.inf, 0.0
    for half in contrast:
        cells = _pips(half, PIP_MIN, strongest)
        reading = read_half(cells)
        if (reading.misfit > 0 or not cells) and divider >= DIVIDER_MIN:
            faint = _pips(half, FAINT_MIN, strongest)
            empty = max([float(half[r, c]) for r in range(3) for c in range(3)
                         if (r, c) not in faint] + [1.0])
            if faint and read_half(faint).misfit == 0 \
                    and min(float(half[rc]) for rc in faint) >= FAINT_RATIO * empty:
                cells, reading = faint, read_half(faint)
        halves.append(reading)
        weakest_pip = min([weakest_pip] + [float(half[rc]) for rc in cells])
        strongest_empty = max([strongest_empty] + [float(half[r, c]) for r in range(3)
                                                   for c in range(3) if (r, c) not in cells])
    if weakest_pip == np.inf:
        weakest_pip = PIP_MIN  # a blank face: how clearly nothing stands out
    separation = weakest_pip / max(strongest_empty, 1.0)
    misfit = sum(r.misfit for r in halves)
    pips = sum(len(r.cells) for r in halves)
    features = TileFeatures(misfit, min(r.margin for r in halves), separation, divider)
    # no divider: a back, unless a clean pip pattern shows (glare can bleach a divider line)
    if divider < DIVIDER_MIN and (misfit > 0 or pips < 2):
        return TileReading(BACK, (0, 0), features.confidence(back=True)), features.vector(True)
    low, high = sorted(r.number for r in halves)
    return (TileReading(f"D{low}{high}", (halves[0].number, halves[1].number),
                        features.confidence(back=False)), features.vector(False))


def read_tile(tile: np.ndarray) -> TileReading:
    """Read a rectified portrait tile image (any size; resized to :data:`TILE_SIZE`)."""
    return _read(tile)[0]


def features_of(tile: np.ndarray) -> tuple[str, np.ndarray]:
    """The code read and the feature vector its confidence rests on (for calibration)."""
    reading, vector = _read(tile)
    return reading.code, vector


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
