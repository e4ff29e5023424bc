"""Whole cards in photos without the mat: card outlines as convex quadrilaterals.

WHY outlines: a card lying on a table or held up to a webcam is a bright (white deck) or dark
(black deck) convex quadrilateral with straight edges, larger than anything else of that shape
in the photo. Found as such, it can be rectified and read where the index is printed on every
standard card (top-left, and bottom-right turned 180°), and its whole outline is the detection's
quad: it contains both indices, however small they are in the photo. Several binarisations are
tried (bright and dark by Otsu, brighter than the surroundings at two scales, white by low
saturation, regions closed by sharp, soft and thickened edges), because no single one separates
a white card from a white desk under uneven light *and* a black card from dark stone; every
convex four-sided outline of a plausible size from any of them is a candidate, and overlapping
candidates are reduced to the best-shaped one (:func:`card_quads`). Cards that touch each
other, or merge with a white wall or a hand, are one region with no card shape; cut at two of
its notches, a piece of it may be one (:func:`_pieces`, asked for with ``split``).

The photos of the CC BY set are stretched to 640×640 from 3:4 and 4:3 frames, so a card's sides
in the image may be anywhere from about 0.5 to 1.0 of each other: the shape test is loose, and
the reader (:mod:`vision.photo_detect`) rejects a quad whose corners do not read as an index.
The filters' sizes are pixels, chosen on photos of 640 to 1280 px: a larger photo is read
reduced to that size (:func:`vision.photo_size.read_at_photo_size`).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from dataclasses import dataclass

import cv2
import numpy as np

MIN_AREA = 0.004
"""Smallest card outline, as a fraction of the image area (a webcam card far from the lens)."""
MAX_AREA = 0.85
MIN_SIDES = 0.35
"""Least ratio of a quad's short to long side: a card is 0.72, but the shared photos are
squeezed to 640 × 640 and many are taken at a slant, which foreshortens a card lying on the
table along the line of sight. It was 0.42 until the eighty-first session (RULE 88): on the
training split 0.42 / 0.35 / 0.3 / 0.25 found 1,235 / 1,247 / 1,248 / 1,249 of its 1,414
labels with 17 / 17 / 18 / 18 false cards (validation groups 162 / 167 / 167 / 168, no false
card), the gain cards of the phone photos lying at a slant (models/HISTORY.md).
:data:`vision.train.corners.READER_SIDES` keeps 0.42 for the shipped reader's training crops."""
MIN_FILL = 0.80
"""Least ratio of the outline's area to its convex quad's: straight edges, no big bite."""

SPLIT_DEPTH = 0.12
"""Least depth of a notch (convexity defect) to cut a region at, as a fraction of the square
root of the region's area. Chosen on the training split (models/HISTORY.md): 0.05 / 0.08 /
0.12 / 0.16 / 0.2 found 791 / 790 / 790 / 788 / 783 of its 1,414 labels (one cut per
region), all with 14 false cards; the deeper the bound, the fewer pieces to read."""
SPLIT_AREA = 0.025
"""Least area of a region to cut and of a piece's quad, as a fraction of the image's: of the
training split's 4,969 pieces of at least :data:`MIN_AREA` (the bound at 0.004), 21 were read
as cards, none of them smaller than 0.028 of the photo (3.2 pieces in 10 are that large)."""
SPLIT_LEVELS = 2
"""Cut a piece that is no card once more (three cards in a row, a card between two others):
on the training split 790 → 796 found with the edge test below, no more false cards."""
SPLIT_MOST = 4
"""The deepest notches tried, in pairs: at most 6 cuts per region (6 notches: no more found)."""
EDGE_GAP = 2.0
"""A piece whose quad comes this close (px) to the photo's edge is no card: it is a fragment
of a card cut by the frame (on the training split the only piece read as a wrong card, a QD
in an 8D that fills the photo, and 6 right ones)."""

EDGE_MASKS = ("edges", "soft", "thick")
"""Masks of regions closed by edges: every region counts (not only the outermost)."""


@dataclass(frozen=True, slots=True)
class CardQuad:
    """A card outline: 4 corners (float32, clockwise on screen) and how card-like it is."""

    quad: np.ndarray
    fill: float
    piece: bool = False
    """The quad of a piece of a region cut at two of its concavities (:func:`_pieces`), not
    of a whole region."""

    @property
    def area(self) -> float:
        return float(cv2.contourArea(self.quad))


def _opened(name: str, mask: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """``mask`` opened at 5 and 15 px: the larger kernel cuts a card loose from a bright
    background or a hand it touches along a thin line."""
    out = []
    for size in (5, 15):
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
        out.append((f"{name}{size}", cv2.morphologyEx(mask, cv2.MORPH_OPEN, k)))
    return out


def _masks(image: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Binary images in which a card may be one connected region: bright and dark by Otsu,
    brighter than its surroundings (adaptive, at two scales), white (low saturation, by a fixed
    bound and by Otsu on the saturation), and the regions closed by edges (three edge maps:
    sharp, soft and thickened). Each threshold mask is also opened with a larger kernel
    (:func:`_opened`). A median filter first removes the salt-and-pepper noise some of the
    photos carry.

    WHY so many: a white card on a light table under a light gradient is split by every global
    threshold, and its faint edge leaves the sharp edge map open; each further map closes some
    of those outlines (on the training split the second adaptive scale, the saturation Otsu,
    the soft and the thickened edge maps together put 912 of the 1,375 labelled face indices in
    an outline's index square instead of 814, see models/HISTORY.md); outlines that are no card
    are rejected by the reader."""
    clean = cv2.medianBlur(image, 5)
    gray = cv2.cvtColor(clean, cv2.COLOR_BGR2GRAY)
    hsv = cv2.cvtColor(clean, cv2.COLOR_BGR2HSV)
    sat, val = hsv[..., 1], hsv[..., 2]
    _, bright = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = cv2.bitwise_not(bright)
    level = float(np.percentile(val, 60))
    white = ((sat < 60) & (val > max(level, 90))).astype(np.uint8) * 255
    _, grey = cv2.threshold(sat, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    side = max(3, (min(image.shape[:2]) // 6) | 1)
    local = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY,
                                  side, -8)
    wide = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY,
                                 2 * side + 1, -3)
    out = []
    for name, mask in (("bright", bright), ("dark", dark), ("white", white), ("grey", grey),
                       ("local", local), ("wide", wide)):
        out += _opened(name, mask)
    sharp = cv2.Canny(gray, 30, 90)
    soft = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), 10, 30)
    for name, edges, size in (("edges", sharp, 3), ("soft", soft, 3), ("thick", sharp, 7)):
        out.append((name, cv2.bitwise_not(cv2.dilate(edges, np.ones((size, size), np.uint8)))))
    return out


def _quad_of(contour: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The convex quadrilateral of a region's outline and the region's share of it, or None."""
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    quad = None
    for eps in (0.02, 0.035, 0.05):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            quad = approx.reshape(4, 2).astype(np.float32)
            break
    if quad is None:
        quad = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
    qa = float(cv2.contourArea(quad))
    if qa <= 1:
        return None
    return quad, float(cv2.contourArea(contour)) / qa


def _sides_ok(quad: np.ndarray, least: float = MIN_SIDES) -> bool:
    sides = np.linalg.norm(quad - np.roll(quad, -1, 0), axis=1)
    a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    if min(a, b) / max(a, b) < least:
        return False
    # opposite sides of a card seen from above differ little (mild perspective only)
    return bool(min(sides[0], sides[2]) / max(sides[0], sides[2]) > 0.6
                and min(sides[1], sides[3]) / max(sides[1], sides[3]) > 0.6)


def clockwise(quad: np.ndarray) -> np.ndarray:
    """The corners by angle about their centre (clockwise on screen), float32: the order of
    :func:`card_quads`' outlines, which :func:`index_squares` starts from."""
    c = quad.mean(0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    return quad[np.argsort(ang)].astype(np.float32)


def candidates(image: np.ndarray, masks: Collection[str] | None = None,
               split: bool = False, sides: float = MIN_SIDES) -> list[CardQuad]:
    """Every plausible card outline of every mask (overlapping ones included); ``masks``: only
    the masks of these names (:func:`_masks`), e.g. to cut a model's training crops exactly as
    when it was trained; ``split``: also the card-shaped pieces of regions that are no card
    (:func:`_pieces`, ``piece``); ``sides``: the least short-to-long side ratio
    (:data:`MIN_SIDES`)."""
    h, w = image.shape[:2]
    total = float(h * w)
    out: list[CardQuad] = []
    for name, mask in _masks(image):
        if masks is not None and name not in masks:
            continue
        mode = cv2.RETR_LIST if name in EDGE_MASKS else cv2.RETR_EXTERNAL
        contours, _ = cv2.findContours(mask, mode, cv2.CHAIN_APPROX_SIMPLE)
        for cnt in contours:
            area = cv2.contourArea(cnt)
            if not MIN_AREA * total <= area <= MAX_AREA * total:
                continue
            shape = _card_shape(cnt, sides)
            if shape is not None:
                out.append(CardQuad(*shape))
            elif split and area >= SPLIT_AREA * total:
                out += _split_cards(cnt, SPLIT_AREA * total, w, h, sides)
    return out


def _card_shape(cnt: np.ndarray, sides: float = MIN_SIDES
                ) -> tuple[np.ndarray, float] | None:
    """The clockwise quad of a contour and its fill (at most 1), when it has a card's shape
    (fill at least :data:`MIN_FILL`, sides as :func:`_sides_ok` wants); else None."""
    got = _quad_of(cnt)
    if got is None or got[1] < MIN_FILL or not _sides_ok(got[0], sides):
        return None
    return clockwise(got[0]), min(got[1], 1.0)


def _split_cards(cnt: np.ndarray, least: float, w: int, h: int,
                 sides: float = MIN_SIDES) -> list[CardQuad]:
    """Card-shaped pieces (``piece``) of a region that is no card: its :func:`_pieces`, each
    piece that is no card cut again, :data:`SPLIT_LEVELS` deep; a piece counts when its quad
    covers at least ``least`` px² and is clear of the photo's edge (:func:`clear_of_edge`)."""
    out: list[CardQuad] = []
    todo = _pieces(cnt, least)
    for level in range(SPLIT_LEVELS):
        again = []
        for piece in todo:
            shape = _card_shape(piece, sides)
            if shape is not None and cv2.contourArea(shape[0]) >= least \
                    and clear_of_edge(shape[0], w, h):
                out.append(CardQuad(*shape, piece=True))
            elif level + 1 < SPLIT_LEVELS:
                again += _pieces(piece, least)
        todo = again
    return out


def clear_of_edge(quad: np.ndarray, w: int, h: int) -> bool:
    """Whether every corner of ``quad`` lies more than :data:`EDGE_GAP` px inside the photo."""
    x, y = quad[:, 0], quad[:, 1]
    return bool(min(x.min(), y.min(), w - 1 - x.max(), h - 1 - y.max()) > EDGE_GAP)


def _pieces(contour: np.ndarray, least: float) -> list[np.ndarray]:
    """The two pieces of a region cut along the chord between each pair of its deepest
    concavities (convexity defects at least :data:`SPLIT_DEPTH` of the region's size deep),
    each of at least ``least`` px²: two cards that touch, or a card merged with a patch of
    background, are one region with a notch on each side where their outlines meet."""
    if len(contour) < 8:
        return []
    try:
        defects = cv2.convexityDefects(contour, cv2.convexHull(contour, returnPoints=False))
    except cv2.error:  # a self-touching outline
        return []
    if defects is None:
        return []
    size = np.sqrt(cv2.contourArea(contour))
    deep = [(int(d[3]), int(d[2])) for d in defects.reshape(-1, 4)
            if d[3] / 256 >= SPLIT_DEPTH * size]
    far = sorted(f for _, f in sorted(deep)[-SPLIT_MOST:])
    out = []
    for i, j in itertools.combinations(far, 2):
        for piece in (contour[i:j + 1], np.concatenate([contour[j:], contour[:i + 1]])):
            if len(piece) >= 4 and cv2.contourArea(piece) >= least:
                out.append(piece)
    return out


def quad_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two convex quads (4, 2) float32."""
    inter, _ = cv2.intersectConvexConvex(a, b)
    union = cv2.contourArea(a) + cv2.contourArea(b) - inter
    return float(inter / union) if union > 0 else 0.0


def card_quads(image: np.ndarray, overlap: float = 0.5,
               masks: Collection[str] | None = None, split: bool = False,
               sides: float = MIN_SIDES) -> list[CardQuad]:
    """Card outlines in ``image`` (BGR): candidates (of ``masks``, default all) by fill, a quad
    dropped when it overlaps a better one by more than ``overlap`` (intersection over union).
    With ``split``, then the pieces of regions (``piece``) that overlap none of those by more
    than ``overlap``: a whole region's quad is the surer outline, and the outlines found
    without ``split`` stay exactly what they were (the corner reader's training crops are cut
    from those, :mod:`vision.train.corners`)."""
    cands = candidates(image, masks, split, sides)
    kept: list[CardQuad] = []
    for group in (False, True):
        for c in sorted((c for c in cands if c.piece == group), key=lambda c: -c.fill):
            if all(quad_iou(c.quad, k.quad) <= overlap for k in kept):
                kept.append(c)
    return kept


RIM_GAP = 0.03
"""How far (a fraction of the outline, about its centre) :func:`edge_contrast`'s two bands lie
from the outline (eightieth session, RULE 84; it was 0). On the CC BY training split's black
backs on a white desk the outlines lay 2-3 px inside the card's edge, so the band "just
outside" (0.06 of a 110-px card's half size, 3-4 px) lay on the card itself and read 0.02-0.08
for a black card on white; across a gap of 0.03 the same outlines read as the edges they are."""


def edge_contrast(image: np.ndarray, quad: np.ndarray, band: float = 0.06,
                  gap: float = RIM_GAP) -> float:
    """How much the outline's rim differs from what lies just outside it: the mean brightness
    of a band inside the outline minus that of a band outside it, absolute, over 255. Each band
    is ``band`` of the outline wide (scaled about its centre) and ``gap`` away from the outline.

    WHY: a card lying on a table is an object with an edge — its border is lighter or darker
    than the table around it. An outline carved out of one surface by a threshold (a patch of
    table, a wall, a shadow's edge) has about the same brightness on both sides of its rim.
    It tells a face-down card from empty table where no index says which it is. The gap: an
    outline found by a threshold lies a pixel or two off the card's true edge, and a band
    touching the outline then falls on the card's own rim (:data:`RIM_GAP`)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    c = q.mean(0)
    scales = (1 - gap - band, 1 - gap, 1 + gap, 1 + gap + band)
    polys = [np.round((q - c) * f + c).astype(np.int32) for f in scales]
    # Only the widest polygon's box of the frame is looked at (a still photo has dozens of
    # outlines, and four whole-frame masks apiece added up).
    h, w = image.shape[:2]
    x0, y0 = np.maximum(polys[-1].min(0), 0)
    x1, y1 = np.minimum(polys[-1].max(0) + 1, (w, h))
    if x1 <= x0 or y1 <= y0:
        return 0.0
    gray = cv2.cvtColor(np.ascontiguousarray(image[y0:y1, x0:x1]), cv2.COLOR_BGR2GRAY)
    offset = np.array([x0, y0], np.int32)

    def within(poly: np.ndarray) -> np.ndarray:
        m = np.zeros(gray.shape, np.uint8)
        cv2.fillConvexPoly(m, poly - offset, 1)
        return m > 0

    deep, inner, outer, wide = (within(p) for p in polys)
    inside = inner & ~deep
    outside = wide & ~outer
    if not inside.any() or not outside.any():
        return 0.0
    return abs(float(gray[inside].mean()) - float(gray[outside].mean())) / 255


# ----------------------------------------------------------------------------- index crops

CARD_W, CARD_H = 250.0, 350.0
"""The rectified card frame the index position is measured in (a portrait card, 63×88 mm)."""
INDEX_CENTRE = (0.10, 0.12)
"""Where the printed index's centre lies on a standard card, as fractions of its width and
height from the top-left corner (measured on the training photos' labelled indices)."""
INDEX_SIDE = 0.28
"""Side of the square crop around the index, as a fraction of the card's height: the index
(about 0.22 high) and a little card and table around it, as the corner networks were trained."""
WORD_CENTRE = (0.38, 0.10)
"""Where the jokers of the shared photos print the word "Joker" (moons and stars where other
cards have their index): the centre of its labelled box, as fractions of the portrait card
from the top-left, measured on the training split's labelled jokers that lie in a whole
outline (their boxes span about 0.0-0.78 of the width and 0.0-0.21 of the height, centres
0.34-0.40 across and 0.08-0.12 down)."""
WORD_SIDE = CARD_W / CARD_H
"""Side of the square crop around the word, as a fraction of the card's height: as wide as the
card, i.e. :data:`vision.photo_detect.CORNER_MARGIN` (1.25) times the word's width (0.8 of the
card's), which is how the corner reader's training crops of labelled jokers were cut."""


def portrait(quad: np.ndarray) -> np.ndarray:
    """The quad's corners rolled so that its edge 0→1 is a short side (the card's top or
    bottom) — one of the two ways to read it; :func:`index_squares` tries the other too."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    e0 = np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[2])
    e1 = np.linalg.norm(q[2] - q[1]) + np.linalg.norm(q[0] - q[3])
    return np.roll(q, -1, 0) if e0 > e1 else q


def index_squares(quad: np.ndarray) -> np.ndarray:
    """(4, 4, 2) image quads of the index crops: (portrait top-left, its bottom-right turned
    180°, then the same for the quad turned a quarter). WHY both quarter turns: the photos are
    stretched, so which pair of sides is the long one cannot always be told from the image;
    the reader keeps whichever pair reads as a card."""
    return _end_squares(quad, INDEX_CENTRE, INDEX_SIDE)


def word_squares(quad: np.ndarray) -> np.ndarray:
    """(4, 4, 2) image quads of the squares where a joker of the shared photos prints its word
    (:data:`WORD_CENTRE`, :data:`WORD_SIDE`), in the order of :func:`index_squares`: top, then
    bottom turned 180°, for both quarter turns."""
    return _end_squares(quad, WORD_CENTRE, WORD_SIDE)


def _end_squares(quad: np.ndarray, centre: tuple[float, float], side: float) -> np.ndarray:
    """Squares of ``side`` (a fraction of the card's height) about ``centre`` (fractions of the
    portrait card from its top-left) and about the point turned 180° (the square turned too,
    so both read upright), for the quad's two quarter turns."""
    cx, cy = centre
    s = side * CARD_H / 2
    frame = np.float32([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]])
    tl = np.float32([[cx * CARD_W - s, cy * CARD_H - s], [cx * CARD_W + s, cy * CARD_H - s],
                     [cx * CARD_W + s, cy * CARD_H + s], [cx * CARD_W - s, cy * CARD_H + s]])
    br = (frame[2] - tl).astype(np.float32)  # the same square turned 180° about the centre
    q0 = portrait(quad)
    out = []
    for q in (q0, np.roll(q0, 1, 0)):
        m = cv2.getPerspectiveTransform(frame, q.astype(np.float32))
        out.extend(cv2.perspectiveTransform(sq[None], m)[0] for sq in (tl, br))
    return np.asarray(out, np.float32)


def cut(image: np.ndarray, square: np.ndarray, size: int) -> np.ndarray:
    """The image inside ``square`` (4 corners, clockwise from the crop's top-left) as a
    ``size``-pixel square; what lies outside the photo repeats its edge."""
    dst = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    t = cv2.getPerspectiveTransform(square.astype(np.float32), dst)
    return cv2.warpPerspective(image, t, (size, size), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)
