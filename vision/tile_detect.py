"""Tile localisation and reading: every domino tile lying in a zone of the mat, with its code.

WHY classical, like the card localiser (:mod:`vision.detect`, whose felt mask it reuses): on the
rectified mat a tile is a rectangle of known proportions (1 : 2) on violet felt, so "not felt"
blobs are tiles or rows of touching tiles. A row is cut along its long axis: where the blob is
one tile wide the tiles lie end to end (the line of play), where it is two tile-widths wide they
stand side by side (a hand, a doublet set crosswise); each stretch is cut into whole tiles at
the gaps nearest their evenly spaced places. Each tile is then warped upright from the camera
image and read from its pip grid (:func:`vision.tiles.read_tile`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.detect import Located, _contours, _fill_holes, _kernel, card_mask, topdown_zones
from vision.geometry import TableGeometry
from vision.recognise import Detection
from vision.synth.scenes import canonical_quad
from vision.tiles import read_tile, rectify

TOPDOWN_PX_PER_MM = 3.0
TILE_SIZE_MM = (24.0, 48.0)
"""A common tile's size; the size seen in the frame (from lone tiles) replaces it."""
SHORT_MM = (15.0, 32.0)
LONG_MM = (32.0, 64.0)
EDGE_MIN = 25.0
"""Gradient (Sobel, strongest colour channel, top-down view) below which a quad's outline is
too soft for a tile: on tuning scenes glare patches stay below 17, tiles above 33."""
SMOOTH_MAX = 12.0
"""Gradient (Sobel, strongest colour channel, top-down view blurred by 1 px) below which felt
under glare counts as smooth: glare changes far more slowly, a tile's outline far faster."""
LINE_MIN = 2.0
"""How many times the row's typical line contrast a cut between two tiles shows (a line across
in some colour channel): on tuning scenes a cut through the middle of two backs side by side
shows 1.0–1.3, the seam between them 2.5 and more."""
SNAP_MM = 3.0
"""How far a cut between touching tiles may move from its evenly spaced place to a gap."""


@dataclass(frozen=True, slots=True)
class _Piece:
    """A stretch of a row: ``start``/``end`` along the row (px), ``wide`` when tiles stand
    across the row there."""

    start: float
    end: float
    wide: bool


def _column_medians(image: np.ndarray, on: np.ndarray) -> np.ndarray:
    """Per column, the median of ``image`` where ``on`` (0 where a column has none)."""
    out = np.zeros(image.shape[1], np.float32)
    cols = on.any(axis=0)
    if cols.any():
        values = np.where(on[:, cols], image[:, cols].astype(np.float32), np.nan)
        out[cols] = np.nanmedian(values, axis=0)
    return out


def _runs(width: np.ndarray, wide_at: float, min_len: float) -> list[_Piece]:
    """Stretches of a width profile that are one or two tile-widths wide; stretches shorter
    than ``min_len`` (a rounded corner, a gap) join their neighbour."""
    present = width > 0.25 * wide_at
    xs = np.flatnonzero(present)
    if xs.size == 0:
        return []
    wide = width > wide_at
    pieces: list[_Piece] = []
    start = int(xs[0])
    for x in range(int(xs[0]) + 1, int(xs[-1]) + 2):
        if x > xs[-1] or wide[x] != wide[start]:
            pieces.append(_Piece(float(start), float(x), bool(wide[start])))
            start = x
    merged: list[_Piece] = []
    for piece in pieces:
        if merged and (piece.end - piece.start < min_len
                       or merged[-1].end - merged[-1].start < min_len):
            keep = merged[-1] if merged[-1].end - merged[-1].start >= piece.end - piece.start \
                else piece
            merged[-1] = _Piece(merged[-1].start, piece.end, keep.wide)
        else:
            merged.append(piece)
    return merged


def _cuts(piece: _Piece, pitch: float, gap_profile: np.ndarray, snap: float) -> list[float]:
    """Where to cut a stretch into whole tiles: evenly, each cut moved to the nearest gap."""
    length = piece.end - piece.start
    k = max(1, round(length / pitch))
    cuts = [piece.start]
    for i in range(1, k):
        t = piece.start + i * length / k
        lo, hi = int(max(piece.start, t - snap)), int(min(piece.end, t + snap + 1))
        window = gap_profile[lo:hi]
        if window.size and window.max() > 0:
            weights = window * np.exp(-0.5 * ((np.arange(lo, hi) - t) / snap) ** 2)
            t = float(lo + int(np.argmax(weights)))
        cuts.append(t)
    return cuts + [piece.end]


def _split_row(cnt: np.ndarray, axis: int, mask: np.ndarray, top: np.ndarray, p: float,
               size: tuple[float, float]) -> tuple[list[np.ndarray], float]:
    """Cut a blob into tiles along one axis of its rectangle (0: the rect's width side).
    Returns the tile quads (top-down px) and how badly they fit (lower is better): their
    shape against the tile's, and cuts where the outline does not narrow or no line crosses."""
    (cx, cy), (w, h), ang = cv2.minAreaRect(cnt)
    a = np.deg2rad(ang)
    u = np.array([np.cos(a), np.sin(a)])
    v = np.array([-np.sin(a), np.cos(a)])
    if axis == 1:
        u, v, w, h = v, -u, h, w
    m = int(4 * p)
    length, across = int(np.ceil(w)) + 2 * m, int(np.ceil(h)) + 2 * m
    origin = np.array([cx, cy]) - u * (w / 2 + m) - v * (h / 2 + m)
    A = np.array([[u[0], u[1], -float(u @ origin)], [v[0], v[1], -float(v @ origin)]])
    blob = np.zeros_like(mask)
    cv2.drawContours(blob, [cnt], -1, 255, -1)
    strip = cv2.warpAffine(blob, A, (length, across), flags=cv2.INTER_NEAREST)
    colour = cv2.warpAffine(top, A, (length, across), flags=cv2.INTER_LINEAR)
    shade = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    on = strip > 0
    width = on.sum(axis=0).astype(np.float32)
    tw, th = size[0] * p, size[1] * p
    # a gap between touching tiles: the blob narrows (rounded corners, felt showing through)
    # and the image darkens (the edge and the shadow of the tile beside it)
    across_line = np.ones((1, int(2 * p) | 1), np.uint8)
    dark_prof = _column_medians(cv2.morphologyEx(shade, cv2.MORPH_BLACKHAT, across_line), on)
    # and, in some colour channel, a line across: the felt showing through between two dark
    # backs differs in hue rather than in grey; in the middle of a back nothing crosses it
    lines_seen = np.max([cv2.max(cv2.morphologyEx(ch, cv2.MORPH_BLACKHAT, across_line),
                                 cv2.morphologyEx(ch, cv2.MORPH_TOPHAT, across_line))
                         for ch in cv2.split(colour)], axis=0)
    line_prof = _column_medians(lines_seen, on)
    line_base = float(np.median(line_prof[on.any(axis=0)])) if on.any() else 0.0
    narrow = np.clip(np.convolve(width, np.ones(5) / 5, "same").max() - width, 0, None)
    gap = dark_prof / (dark_prof.max() + 1e-6) + narrow / (narrow.max() + 1e-6)
    dip = cv2.dilate(width.reshape(1, -1), np.ones((1, int(6 * p) | 1), np.uint8)).ravel() - width
    quads: list[np.ndarray] = []
    dips: list[float] = []
    lines: list[float] = []
    misfit = 0.0
    for piece in _runs(width, 1.5 * tw, 0.6 * tw):
        pitch = tw if piece.wide else th
        cuts = _cuts(piece, pitch + 0.5 * p, gap, SNAP_MM * p)
        # two tiles side by side and a tile's own divider look alike (a dark line across);
        # only between tiles does the outline narrow (rounded corners, a gap)
        for t in cuts[1:-1]:
            lo_x, hi_x = max(0, int(t - p)), int(t + p) + 1
            dips.append(float(dip[lo_x:hi_x].max()) / p)
            lines.append(float(line_prof[lo_x:hi_x].max()) / max(line_base, 1.0))
        for t0, t1 in zip(cuts[:-1], cuts[1:], strict=True):
            # across the row the tile's centre is the middle of the blob there, read in the
            # piece's central columns (its ends may reach a crosswise neighbour)
            a0, a1 = int(t0 + 0.2 * (t1 - t0)), int(t1 - 0.2 * (t1 - t0))
            spans = [(float(r[0]), float(r[-1])) for x in range(a0, max(a1, a0 + 1))
                     if (r := np.flatnonzero(on[:, x])).size]
            if not spans:
                misfit += 1.0
                continue
            lo, hi = np.median(np.array(spans), axis=0)
            along, side = (tw, th) if piece.wide else (th, tw)
            misfit += abs((t1 - t0) - along) / along + abs((hi - lo) - side) / side
            # the set's own size around the piece's centre: a shadow or a neighbour's rounded
            # corner moves the piece's ends by a pixel or two, but not its centre
            centre = origin + u * (t0 + t1) / 2 + v * (lo + hi) / 2
            rect = ((float(centre[0]), float(centre[1])), (float(along), float(side)),
                    float(np.rad2deg(np.arctan2(u[1], u[0]))))
            quads.append(cv2.boxPoints(rect).astype(np.float32))
    misfit += 0.2 * sum(max(0.0, 1.5 - d) for d in dips)
    misfit += 0.1 * sum(max(0.0, LINE_MIN - v) for v in lines)
    return quads, misfit / max(len(quads), 1)


def edge_strength(quad: np.ndarray, grad: np.ndarray, p: float) -> float:
    """How sharply the top-down view changes across the quad's outline: the second strongest
    of its four sides (each the median, along its middle, of the strongest gradient within
    1.5 mm of it). A tile has a hard edge on at least two sides, even in a row of touching
    tiles; a patch of glare on the felt has soft edges all round."""
    sides = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        along = b - a
        normal = np.array([-along[1], along[0]]) / max(float(np.linalg.norm(along)), 1e-6)
        ts = np.linspace(0.2, 0.8, 9, dtype=np.float32)
        offs = np.linspace(-1.5, 1.5, 7, dtype=np.float32) * p
        pts = a + ts[:, None, None] * along + offs[None, :, None] * normal
        vals = cv2.remap(grad, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32),
                         cv2.INTER_LINEAR)
        sides.append(float(np.median(vals.max(axis=1))))
    return sorted(sides)[-2]


def colour_gradient(image: np.ndarray) -> np.ndarray:
    """Per pixel, the strongest Sobel gradient magnitude over the colour channels: a dark green
    back on violet felt differs in hue more than in grey."""
    return np.max([cv2.magnitude(cv2.Sobel(ch, cv2.CV_32F, 1, 0), cv2.Sobel(ch, cv2.CV_32F, 0, 1))
                   for ch in cv2.split(image)], axis=0)


def _edge_strength_at(quad: np.ndarray, top: np.ndarray, p: float) -> float:
    """:func:`edge_strength` of ``quad`` with the gradient worked out around it only: its
    samples reach 1.5 mm past the outline, the gradient one pixel more."""
    reach = int(np.ceil(2 * p)) + 2
    h, w = top.shape[:2]
    x0, y0 = (max(0, int(np.floor(v)) - reach) for v in quad.min(axis=0))
    x1, y1 = (int(np.ceil(v)) + reach + 1 for v in quad.max(axis=0))
    crop = top[y0:min(h, y1), x0:min(w, x1)]
    if crop.size == 0:
        return 0.0
    return edge_strength(quad - np.array([x0, y0], np.float32), colour_gradient(crop), p)


def tile_region(top: np.ndarray) -> np.ndarray:
    """255 where the top-down view is tile: the card mask (not felt), less felt that glare
    made look like a card.

    WHY: a tile is a twentieth of the mat's light, so a glare patch next to it is as big as
    the tile, joins it into one blob and spoils its outline. Felt stays felt under glare in
    ways a tile does not: it stays violet-ish, glare only brightens it, and it changes only
    smoothly. Such pixels connected to the felt are felt; a tile's sharp outline keeps the
    flood out of a tile, even a pinkish one, and a dark tile is never bright enough.

    The gradient is worked out only in blocks of the view where the flood could go (violet-ish
    card mask), each grown by the blur's and the gradient's reach so that it is exactly what
    the whole view's would be there, at a fraction of the cost (most of the view is felt)."""
    mask = card_mask(top)
    hsv = cv2.cvtColor(top, cv2.COLOR_BGR2HSV)
    hist = cv2.calcHist([hsv], [2], cv2.bitwise_not(mask), [256], [0, 256]).ravel()
    typical = _median_of_histogram(hist)
    violetish = cv2.inRange(hsv, (115, 40, int(typical)), (175, 255, 255))
    felt = cv2.bitwise_not(mask)
    # the gradient is needed only where the flood could go, in blocks of the view that hold
    # violet-ish card mask (the rest is felt, or no glare)
    reach, block = 8, 96  # the blur's (4 px) and the gradient's (1 px) reach, with room
    h, w = mask.shape
    maybe = mask & violetish
    smooth = np.zeros_like(mask)
    for y in range(0, h, block):
        for x in range(0, w, block):
            if not maybe[y:y + block, x:x + block].any():
                continue
            y0, x0 = max(0, y - reach), max(0, x - reach)
            soft = cv2.GaussianBlur(top[y0:y + block + reach, x0:x + block + reach], (0, 0), 1.0)
            grad = colour_gradient(soft)[y - y0:y - y0 + block, x - x0:x - x0 + block]
            smooth[y:y + block, x:x + block] = (grad < SMOOTH_MAX).astype(np.uint8) * 255
    candidate = (maybe & smooth) | felt
    n, labels = cv2.connectedComponents(candidate, connectivity=4)
    flooded = np.zeros(n, bool)
    flooded[labels[felt > 0]] = True
    flooded[0] = False
    return mask & np.where(flooded[labels], 0, 255).astype(np.uint8)


def _median_of_histogram(hist: np.ndarray) -> float:
    """The median of the values a histogram counts (0 when it is empty), as ``np.median`` of
    the values gives it, without sorting millions of pixels."""
    cum = np.cumsum(np.round(hist).astype(np.int64))  # counts: exact past float32's 2**24
    total = int(cum[-1]) if cum.size else 0
    if total == 0:
        return 0.0

    def value_at(rank: int) -> int:  # the rank-th smallest value, from 1
        return int(np.searchsorted(cum, rank))

    if total % 2:
        return float(value_at((total + 1) // 2))
    return 0.5 * (value_at(total // 2) + value_at(total // 2 + 1))


def locate_tiles(image: np.ndarray, geometry: TableGeometry, p: float = TOPDOWN_PX_PER_MM
                 ) -> tuple[Located, ...]:
    """Every tile lying in a zone of the mat: whole-tile quads in image px and mm."""
    mat = geometry.mat
    top, zones = topdown_zones(image, geometry, p)
    mask = tile_region(top) & zones
    mask = _fill_holes(cv2.morphologyEx(mask, cv2.MORPH_OPEN, _kernel(1.5, p)))
    singles: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    for cnt in _contours(mask):
        if cv2.contourArea(cnt) < 0.3 * TILE_SIZE_MM[0] * TILE_SIZE_MM[1] * p * p:
            continue
        _, (w, h), _ = cv2.minAreaRect(cnt)
        short, long_ = sorted((w / p, h / p))
        if SHORT_MM[0] <= short <= SHORT_MM[1] and LONG_MM[0] <= long_ <= LONG_MM[1] \
                and 1.6 <= long_ / short <= 2.5:
            singles.append(cv2.boxPoints(cv2.minAreaRect(cnt)).astype(np.float32))
        else:
            rows.append(cnt)
    size = TILE_SIZE_MM
    if len(singles) >= 3:  # the set's own size; a shadow or glare only ever adds to a blob
        dims = np.array([sorted((np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])))
                         for q in singles]) / p
        size = (float(np.percentile(dims[:, 0], 30)), float(np.percentile(dims[:, 1], 30)))
    found = list(singles)
    for cnt in rows:
        fits = [_split_row(cnt, axis, mask, top, p, size) for axis in (0, 1)]
        found.extend(min(fits, key=lambda f: f[1])[0])
    out = []
    for q in found:
        if _edge_strength_at(q, top, p) < EDGE_MIN:
            continue  # soft all round: glare on the felt, not a tile
        piece = np.zeros_like(mask)
        cv2.fillConvexPoly(piece, np.round(q).astype(np.int32), 255)
        if cv2.countNonZero(piece & mask) < 0.8 * max(cv2.countNonZero(piece), 1):
            continue  # mostly felt: not a tile
        q_mm = q / p
        zone = mat.zone_of(q_mm.mean(axis=0))
        if zone is None:
            continue
        out.append(Located(canonical_quad(geometry.to_image(q_mm)), canonical_quad(q_mm), zone))
    return tuple(out)


def read_tiles(image: np.ndarray, tiles: tuple[Located, ...]) -> tuple[Detection, ...]:
    """Each located tile read from the camera image: code (``Dab`` or ``BACK``), confidence."""
    out = []
    for t in tiles:
        reading = read_tile(rectify(image, t.quad))
        out.append(Detection(reading.code, reading.confidence, t.quad, t.quad_mm, t.zone))
    out.sort(key=lambda d: -d.confidence)
    return tuple(out)


def detect_tiles(image: np.ndarray, geometry: TableGeometry | None = None
                 ) -> tuple[Detection, ...]:
    """All tiles of one image on the mat (found by its markers unless ``geometry`` is given)."""
    geometry = geometry or TableGeometry.from_markers(image)
    return read_tiles(image, locate_tiles(image, geometry))
