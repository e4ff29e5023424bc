"""Find the one card in a photo of a single card, and cut it out as a rectified portrait crop.

WHY proposals, not a detector: a single-card photo (enrolment photos, the real UNO measurement
set) holds one card, the most card-shaped bright or colourful blob: several cheap segmentations
(edges, the brightest region, the most saturated region, which for UNO cards is the coloured field
inside the white border, the whitest pixels, which hold the card's border, and the photo split
into a few colours, whose pieces, pairs of pieces and hull of all pieces of one colour hold
a field cut by its oval or a thumb)
each propose a rotated rectangle, and a small network's mask of where a card lies
(:mod:`vision.card_mask`) proposes each of its largest blobs' rotated box and four-cornered
outline; proposals are scored by how much of the image they fill, how
close their aspect is to a card's, how rectangular the blob is, and by the evidence of a card
in the photo around the box (:func:`card_evidence`: an outline on an edge, a white border with
a printed field inside it, a printed middle), and the best one is rectified. The photo is first
partly white-balanced by its brightest pixels (:func:`white_patch`), and the fill of an edge or
bright blob is measured by its convex hull (fingers bite into a held card's outline).
A proposal from the coloured field is grown by the border's width. When nothing card-shaped is
found, a fallback box of the whole photo stands for a card that fills it (a close-up): its
corners lie outside the photo, so the corner reader leaves them out.

The chosen card is read by :mod:`vision.single_card`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.card_mask import blob_quad, default_card_mask, mask_agreement, mask_blobs
from vision.classifier import apply_gain


def build_lab_tables() -> None:
    """Have OpenCV build its Lab conversion tables in a background thread.

    WHY: OpenCV builds them on the first Lab conversion of a process, which takes 0.1-0.17 s
    on this CPU, and the card locator (:func:`_cluster_proposals`) and the pip reader need
    them. ``cardtable detect`` reads one photo per process: started before the models load
    (OpenCV releases the GIL while it works), the tables are ready when first needed. Not a
    daemon: a process that ends at once (no readable image) waits for it, since a thread
    killed inside OpenCV at exit aborts the process."""
    threading.Thread(target=cv2.cvtColor,
                     args=(np.zeros((1, 1, 3), np.uint8), cv2.COLOR_BGR2Lab)).start()


CARD_ASPECT = (1.3, 1.7)  # long side / short side: standard 1.40, UNO 1.55
CUT_ASPECT = 0.95  # the shortest a card cut off by the photo's edge may look (long / short)
WORK_SIDE = 640
CROP_SIZE = (200, 300)


class SingleCardError(ValueError):
    """An image that cannot be read or holds nothing card-shaped."""


@dataclass(frozen=True)
class Located:
    """The card's quad in image pixels (clockwise from the top-left of the portrait card), the
    rectified portrait crop and how the quad was found."""

    quad: np.ndarray
    crop: np.ndarray
    method: str
    score: float


@dataclass(frozen=True)
class Proposal:
    """A box one segmentation proposes for the card: how it was found (``method``), its
    corner points in the working image, how much of it the blob fills (``fill``), and the
    ``credit`` its kind of proposal earns above the shared geometric and evidence score.

    WHY a credit of its own: some kinds of proposal carry evidence of a card that the shared
    score cannot see (see ``SPLIT_CREDIT``); the proposal says so where it is made."""

    method: str
    box: np.ndarray
    fill: float
    credit: float = 0.0


def read_image(path: str | Path) -> np.ndarray:
    """BGR image of ``path`` or a clear error."""
    path = Path(path)
    if not path.is_file():
        raise SingleCardError(f"no image file at {path}")
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise SingleCardError(f"cannot read {path} as an image (corrupt or not an image format)")
    return img


def order_portrait(quad: np.ndarray) -> np.ndarray:
    """Four corners ordered clockwise from the top-left, starting so the first edge is a short
    (top) edge: a landscape card comes out portrait."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    c = q.mean(0)
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(ang)]  # clockwise in image coordinates (y down)
    start = int(np.argmin(q.sum(1)))
    q = np.roll(q, -start, axis=0)
    if np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[2] - q[1]):
        q = np.roll(q, -1, axis=0)
    return q


def rectify(img: np.ndarray, quad: np.ndarray, size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
    """Warp the card inside ``quad`` (ordered by :func:`order_portrait`) to a portrait crop."""
    w, h = size
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
    return cv2.warpPerspective(img, m, (w, h), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)


def _rect(cnt: np.ndarray, grow: float = 1.0, shape: tuple[int, int] | None = None,
          convex: bool = False) -> tuple[np.ndarray, float]:
    """Rotated bounding box of a contour (optionally grown, more across than along) and how
    much of that box's part inside a photo of ``shape`` the contour (its convex hull if
    ``convex``) fills.

    WHY inside the photo: the box of a card cut off by the photo's edge reaches beyond it at
    a tilt; the blob cannot fill what is not in the photo. WHY the hull: fingers holding a card
    bite notches into its blob, and a card is convex; not for the coloured field, whose pieces
    are crescents round the oval that their hulls would pass off as whole cards."""
    area = cv2.contourArea(cv2.convexHull(cnt) if convex else cnt)
    (cx, cy), (w, h), a = cv2.minAreaRect(cnt)
    box_area = _area_in_photo(cv2.boxPoints(((cx, cy), (w, h), a)), shape, w * h)
    fill = min(area / max(box_area, 1e-6), 1.0)
    gl = 1 + (grow - 1) * 0.7
    size = (w * grow, h * gl) if w < h else (w * gl, h * grow)
    return cv2.boxPoints(((cx, cy), size, a)), fill


def _area_in_photo(quad: np.ndarray, shape: tuple[int, int] | None,
                   whole: float | None = None) -> float:
    """The area of the convex ``quad`` (``whole``, when known) inside a photo of ``shape``
    (all of it without a shape, or when none of it lies inside)."""
    whole = cv2.contourArea(quad.astype(np.float32)) if whole is None else whole
    if shape is None:
        return whole
    photo = np.float32([[0, 0], [shape[1], 0], [shape[1], shape[0]], [0, shape[0]]])
    inside, _ = cv2.intersectConvexConvex(quad.astype(np.float32), photo)
    return min(whole, inside) if inside > 0 else whole


def _fill(blob: np.ndarray, quad: np.ndarray, shape: tuple[int, int]) -> float:
    """How much of the convex ``quad``'s part inside a photo of ``shape`` the hull of ``blob``
    fills (as :func:`_rect` for its box)."""
    area = cv2.contourArea(cv2.convexHull(blob.astype(np.float32)))
    return min(area / max(_area_in_photo(quad, shape), 1e-6), 1.0)


WHITE_LEVEL = 0.85  # of the photo's whitest level: what counts as a card's white border
FRAME_FILL = 0.7  # the fill credited to the fallback box of a card that fills the photo ...
FRAME_EDGE = 0.25  # ... when this share of its outline lies on an edge (less: in proportion)


def whiteness(img: np.ndarray) -> np.ndarray:
    """Each pixel's darkest channel: only white is bright in all three. (``np.minimum`` of the
    channel planes: a strided ``img.min(axis=2)`` is many times slower, and the locator needs
    this once per photo.)"""
    return np.minimum(np.minimum(img[..., 0], img[..., 1]), img[..., 2])


def _masks(small: np.ndarray, white: np.ndarray, hsv: np.ndarray
           ) -> list[tuple[str, np.ndarray, float]]:
    """Segmentations in which a card could be one blob: (name, mask, growth to the card edge);
    ``white`` is the photo's :func:`whiteness`, ``hsv`` the photo in HSV."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(grey, (5, 5), 0), 40, 120)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8), iterations=2)
    filled = edges.copy()
    cnts, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, cnts, -1, 255, -1)
    _, bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    sat = cv2.GaussianBlur(hsv[..., 1], (5, 5), 0)
    _, colour = cv2.threshold(sat, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # the card's white border: the photo's whitest pixels (white in every channel), which a
    # hazy webcam's light wall, a head or a hand beside the card do not reach
    ring = (white >= WHITE_LEVEL * np.percentile(white, 99.5)).astype(np.uint8) * 255
    return [("edges", filled, 1.0), ("bright", bright, 1.0), ("colour", colour, 1.1),
            ("white", ring, 1.0)]


def _same_hue(pieces: list[np.ndarray], hsv: np.ndarray, tol: float = 12.0) -> list[np.ndarray]:
    """The pieces (largest first) whose median hue is within ``tol`` of the largest's: the
    field of one card has one colour, a face, a hand or a wall next to it usually another."""
    if len(pieces) < 2:
        return pieces
    hues = []
    for c in pieces:
        m = np.zeros(hsv.shape[:2], np.uint8)
        cv2.drawContours(m, [c], -1, 255, -1)
        hues.append(float(np.median(hsv[..., 0][m > 0])))
    diff = [min(abs(x - hues[0]), 180 - abs(x - hues[0])) for x in hues]
    return [c for c, d in zip(pieces, diff, strict=True) if d <= tol]


def _proposals(small: np.ndarray, white: np.ndarray, learned: np.ndarray | None = None
               ) -> list[Proposal]:
    """The proposals of every segmentation, and of the largest blobs of ``learned`` (the card
    mask's probabilities for ``small``, :meth:`vision.card_mask.CardMask.predict`)."""
    h, w = small.shape[:2]
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    out: list[Proposal] = []
    k = np.ones((5, 5), np.uint8)
    for name, mask, grow in _masks(small, white, hsv):
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, k)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, k, iterations=2)
        cnts, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cnts = sorted(cnts, key=cv2.contourArea, reverse=True)
        for cnt in cnts[:3]:
            box, fill = _rect(cnt, grow, (h, w), convex=name in ("bright", "edges"))
            out.append(Proposal(name, box, fill))
        # an UNO field is cut in two by its ellipse: the hull of the big pieces is the field
        big = [c for c in cnts if cv2.contourArea(c) > 0.01 * h * w]
        if name == "colour":
            big = _same_hue(big, hsv)
        if name == "colour" and len(big) > 1:
            hull = cv2.convexHull(np.concatenate(big))
            box, _ = _rect(hull, grow)
            fill = sum(cv2.contourArea(c) for c in big) / max(cv2.contourArea(hull), 1e-6)
            out.append(Proposal("colour-hull", box, min(1.0, fill + PAIR_CREDIT)))
    out += _cluster_proposals(small)
    # each blob of the learned mask: its rotated box and its four-cornered outline, with no
    # credit of their own (0.2 and 0.5 read no more close-held renders: models/HISTORY.md)
    if learned is not None:
        for blob in mask_blobs(learned, (h, w)):
            box, fill = _rect(blob, 1.0, (h, w), convex=True)
            out.append(Proposal("learned-box", box, fill))
            quad = blob_quad(blob)
            if quad is not None:
                out.append(Proposal("learned", quad, _fill(blob, quad, (h, w))))
    # the card filling most of the frame (a card held up to a webcam)
    m = 0.03
    out.append(Proposal("frame", np.float32([[w * m, h * m], [w * (1 - m), h * m],
                                             [w * (1 - m), h * (1 - m)], [w * m, h * (1 - m)]]),
                        FRAME_FILL))
    return out


CLUSTERS = 8  # colours of the photo's k-means segmentation
# what a hull of same-colour pieces is credited above their share of it: an UNO field is cut by
# its white oval and a thumb, and lies inside a white border, so even a whole card's pieces
# fill only 35-50% of their hull
PAIR_CREDIT = 0.45
CLUSTER_SIDE = 320  # the width it is computed at
# what the hull of all (three or more) pieces of one colour is credited above its geometry:
# a field cut by its oval and the thumb into pieces of one colour is what a wall, a shirt or a
# head in a webcam frame never is (set on webcam renders of seeds 7 and 123, checked on 31, 55)
SPLIT_CREDIT = 0.4
FIELD_GROW = 1.12  # a card's field grown to its edge


def _cluster_proposals(small: np.ndarray) -> list[Proposal]:
    """Proposals from the photo split into ``CLUSTERS`` colours (k-means in Lab, seeded so a
    photo always gives the same): each connected piece of one colour as it is and grown from a
    field to its card, the hull of each pair of pieces of one colour that fill at least
    30% of it (an UNO field cut in two by its oval, or by a thumb), and the hull of all the
    (up to 8 largest) pieces of one colour, when there are three or more (a field cut by its
    oval and a thumb, or printed as stripes or corners round a white middle).

    WHY: in a webcam frame the card touches a white wall, a hand and a face; thresholds over
    the whole photo (Otsu of grey or saturation) join it to them, while its field has a colour
    of its own. WHY all the pieces: of the 85 webcam renders of tuning seeds 7 and 123 where
    no proposal fitted the card (quad IoU > 0.8), 31 have one that fits since. WHY
    ``CLUSTER_SIDE`` 320 (160 before): a card a twentieth of the frame is cut into pieces of a
    few cells at 160; at 320 a proposal fits the card in 93% and 92% of those renders instead
    of 88% and 87%."""
    h, w = small.shape[:2]
    th = max(1, int(round(CLUSTER_SIDE * h / w)))
    tiny = cv2.resize(small, (CLUSTER_SIDE, th), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(tiny, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32)
    if len(lab) < CLUSTERS:
        return []
    cv2.setRNGSeed(0)
    _, idx, _ = cv2.kmeans(lab, CLUSTERS, None, (cv2.TERM_CRITERIA_MAX_ITER
                                                 + cv2.TERM_CRITERIA_EPS, 10, 1.0), 1,
                           cv2.KMEANS_PP_CENTERS)
    idx = idx.reshape(th, CLUSTER_SIDE)
    scale = w / CLUSTER_SIDE
    out: list[Proposal] = []
    for k in range(CLUSTERS):
        cnts, _ = cv2.findContours((idx == k).astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
        cnts = sorted((c for c in cnts if cv2.contourArea(c) >= 0.002 * CLUSTER_SIDE * th),
                      key=cv2.contourArea, reverse=True)[:8]
        areas = [cv2.contourArea(c) for c in cnts]
        for c in cnts:
            for name, grow in (("cluster", 1.0), ("cluster-field", FIELD_GROW)):
                box, fill = _rect(c.astype(np.float32) * scale, grow, (h, w), convex=True)
                out.append(Proposal(name, box, fill))
        # each pair that fills at least 30% of its hull, and all of them together
        groups = [(g, 0.3) for g in itertools.combinations(range(len(cnts)), 2)]
        if len(cnts) > 2:
            groups.append((tuple(range(len(cnts))), 0.0))
        for g, least in groups:
            hull = cv2.convexHull(np.concatenate([cnts[a] for a in g]))
            share = sum(areas[a] for a in g) / max(cv2.contourArea(hull), 1e-6)
            if share >= least:
                box, _ = _rect(hull.astype(np.float32) * scale, FIELD_GROW)
                fill = min(1.0, share + PAIR_CREDIT)
                if len(g) == 2:
                    out.append(Proposal("cluster-pair", box, fill))
                else:
                    out.append(Proposal("cluster-all", box, fill, SPLIT_CREDIT))
    return out


def _touches_frame(box: np.ndarray, shape: tuple[int, int], tol: float = 0.015) -> bool:
    """Whether a corner of ``box`` lies on or beyond the photo's edge."""
    h, w = shape
    t = tol * max(h, w)
    return bool((box[:, 0] < t).any() or (box[:, 1] < t).any() or (box[:, 0] > w - t).any()
                or (box[:, 1] > h - t).any())


SIZE_WEIGHT = 0.25  # the credit of a box covering a quarter of the photo or more
LARGE_WEIGHT = 0.75  # how much a box gains per share of the photo it covers
LARGE_CREDIT = 0.9  # ... up to this share
LARGEST = 0.97
"""The largest share of the photo a proposal may cover. WHY not 0.9 (before the fiftieth
session): a card held so close to a webcam that it runs off two or three sides of the photo,
its top-left corner and index in view, covers more than 0.9 of it (the card mask's blob
covered 0.91-0.99 in four real webcam photos); its only proposal was the frame's (cut on every
side, so no index corner is read). WHY no credit above :data:`LARGE_CREDIT`: the change lets
such boxes compete, not win on size alone; an uncapped credit was not tried (RULE 40 and RULE
41, models/HISTORY.md, fiftieth session)."""


def _score(box: np.ndarray, fill: float, shape: tuple[int, int]) -> float:
    """Geometry of a proposal: its fill, its aspect against a card's, its size (``SIZE_WEIGHT``
    up to a quarter of the photo, plus ``LARGE_WEIGHT`` × its share of the photo up to
    ``LARGE_CREDIT``: a close-up's card is the largest card-like thing in it, the symbols and
    fields inside it are card-like too; WHY not more: a card held up to a webcam may be a
    twentieth of the frame, beside a wall, a head and a shirt that are larger), and how far it
    runs off the photo."""
    h, w = shape
    rect = cv2.minAreaRect(box.astype(np.float32))
    rw, rh = rect[1]
    if min(rw, rh) < 8:
        return -1.0
    aspect = max(rw, rh) / min(rw, rh)
    frac = rw * rh / (w * h)
    if frac < 0.01 or frac > LARGEST:
        return -1.0
    lo, hi = CARD_ASPECT
    if _touches_frame(box, shape):
        lo = CUT_ASPECT  # a card running off the photo shows only part of its length
    aspect_pen = 0.0 if lo <= aspect <= hi else min(abs(aspect - lo), abs(aspect - hi))
    # corners far outside the image mean a blob that runs off the photo
    outside = np.clip(-box, 0, None).sum() + np.clip(box - [w, h], 0, None).sum()
    return (fill - 1.5 * aspect_pen + SIZE_WEIGHT * min(frac / 0.25, 1.0)
            + LARGE_WEIGHT * min(frac, LARGE_CREDIT) - 4 * outside / (w + h))


MASK_WEIGHT = 3.0
"""What a proposal gains per unit of its agreement with the card mask (:func:`vision.card_mask.
mask_agreement`, 0 to 1). WHY: trained on real webcam frames too, the mask tells a card from
the player and the room (models/HISTORY.md, thirty-sixth session), which the segmentations'
geometry and evidence do not. WHY 3: of 0.5, 1, 1.5, 2 and 3, the most proposals fitting the
card best-scored on the CC BY training split's webcam frames (21, 42, 66, 74, 78 of 121 with the
thirty-sixth session's mask, `python -m vision.locate_eval --split train`) with no loss on the
tuning renders; not chosen again for the thirty-seventh and thirty-eighth sessions' masks."""
# the evidence warp: a card's quad grown by 12% mapped to EVIDENCE_SIZE, the card at CARD_BOX
EVIDENCE_SIZE = (112, 168)
CARD_BOX = (6, 9, 106, 159)  # x0, y0, x1, y1
EDGE_LEVEL = 25.0  # a gradient (grey levels per pixel) that counts as the card's outline
FIELD_STEP = 30.0  # how much darker (in whiteness) the field is than the border inside it
OUTSIDE_STEP = 20.0  # how much whiter the border is than what lies just outside the card
PRINT_STEP = 40.0  # how much darker than the border a printed pixel of the middle is
INK_SHARE = 0.6  # the share of a card's middle that is printed (not white), at full credit
FIELD_WEIGHT = 0.5  # card evidence per share of sides with a printed field inside the border
OUTSIDE_WEIGHT = 0.5  # ... with a step down to what lies outside the card
INK_WEIGHT = 0.75  # ... for a printed middle


def _sides() -> list[tuple[tuple[slice, slice], ...]]:
    """Per side of the warped card: (the border ring 2-6% inside the edge, the band 10-16%
    inside it where a printed field begins, the ring 1-5% outside the edge)."""
    x0, y0, x1, y1 = CARD_BOX
    return [
        ((slice(y0 + 2, y0 + 6), slice(x0 + 8, x1 - 8)),
         (slice(y0 + 10, y0 + 16), slice(x0 + 16, x1 - 16)),
         (slice(y0 - 5, y0 - 1), slice(x0 + 8, x1 - 8))),
        ((slice(y1 - 6, y1 - 2), slice(x0 + 8, x1 - 8)),
         (slice(y1 - 16, y1 - 10), slice(x0 + 16, x1 - 16)),
         (slice(y1 + 1, y1 + 5), slice(x0 + 8, x1 - 8))),
        ((slice(y0 + 8, y1 - 8), slice(x0 + 2, x0 + 6)),
         (slice(y0 + 16, y1 - 16), slice(x0 + 10, x0 + 16)),
         (slice(y0 + 8, y1 - 8), slice(x0 - 5, x0 - 1))),
        ((slice(y0 + 8, y1 - 8), slice(x1 - 6, x1 - 2)),
         (slice(y0 + 16, y1 - 16), slice(x1 - 16, x1 - 10)),
         (slice(y0 + 8, y1 - 8), slice(x1 + 1, x1 + 5))),
    ]


SIDES = _sides()


def card_evidence(white: np.ndarray, grad: np.ndarray, box: np.ndarray) -> float:
    """How much the photo inside and around ``box`` looks like a card, in [0, 2.75]: the share of
    its outline on a strong edge (up to 1), the shares of its sides (those in the photo) whose
    border is whiter than the band just inside it, where a printed field begins, and than just
    outside it (0.5 each), and how much of its middle is printed (up to 0.75). ``white`` is the
    photo's :func:`whiteness`, ``grad`` its grey gradient magnitude.

    WHY: in a webcam frame a white wall, a window, a lamp, a white shirt, a face or a hand are
    as large, bright and card-shaped as the card; they are white (or skin) to the middle and
    seldom outlined all round, while a card has a crisp outline and is printed inside its
    border (an UNO card's field, pips). WHY each side on its own: a thumb covers one side, a
    white wall matches another; the card still shows the rest. The weights were set on
    rendered photos only (seeds 7 and 123 of every ``synthetic:`` set); the border steps were
    raised from 0.25 to 0.5 and the printed middle from 0.5 to 0.75 when a small card held up
    to a webcam kept losing to a wall, a head or a shirt credited for their size."""
    return _weigh_evidence(_evidence_parts(white, grad, box))


def _weigh_evidence(parts: tuple[float, float, float, float]) -> float:
    """:func:`card_evidence` of its measures (:func:`_evidence_parts`)."""
    edge, field, outside, ink = parts
    return (edge + FIELD_WEIGHT * field + OUTSIDE_WEIGHT * outside
            + INK_WEIGHT * min(ink / INK_SHARE, 1.0))


def _evidence_parts(white: np.ndarray, grad: np.ndarray, box: np.ndarray
                    ) -> tuple[float, float, float, float]:
    """The measures :func:`card_evidence` weighs: (outline on an edge, sides with a field
    step, sides with an outside step, share of the middle printed), from ``box`` grown by 12%
    and warped to ``EVIDENCE_SIZE``."""
    W, H = EVIDENCE_SIZE
    x0, y0, x1, y1 = CARD_BOX
    q = order_portrait(box)
    c = q.mean(0)
    grown = c + (q - c) * 1.12
    m = cv2.getPerspectiveTransform(grown.astype(np.float32),
                                    np.float32([[0, 0], [W, 0], [W, H], [0, H]]))
    wv = cv2.warpPerspective(white, m, (W, H), flags=cv2.INTER_AREA)
    gv = cv2.warpPerspective(grad, m, (W, H), flags=cv2.INTER_LINEAR)
    valid = cv2.warpPerspective(np.full(white.shape, 255, np.uint8), m, (W, H),
                                flags=cv2.INTER_NEAREST) > 0
    field, outside = [], []  # per side in the photo: does it show a field, an outside step
    for ring_at, band_at, out_at in SIDES:
        ring = wv[ring_at][valid[ring_at]]
        if ring.size < 10:
            continue
        level = np.median(ring)
        band, out = wv[band_at][valid[band_at]], wv[out_at][valid[out_at]]
        if band.size >= 10:
            field.append(level - np.median(band) > FIELD_STEP)
        if out.size >= 10:
            outside.append(level - np.median(out) > OUTSIDE_STEP)
    # the strongest gradient across a 5-pixel band over each point of the outline
    profiles = [np.where(valid[sl], gv[sl], -1.0).max(axis=ax) for sl, ax in (
        ((slice(y0 - 2, y0 + 3), slice(x0, x1)), 0), ((slice(y1 - 2, y1 + 3), slice(x0, x1)), 0),
        ((slice(y0, y1), slice(x0 - 2, x0 + 3)), 1), ((slice(y0, y1), slice(x1 - 2, x1 + 3)), 1))]
    line = np.concatenate(profiles)
    line = line[line >= 0]
    edge = float(np.mean(line > EDGE_LEVEL)) if line.size else 0.0
    middle = wv[y0 + 15:y1 - 15, x0 + 12:x1 - 12][valid[y0 + 15:y1 - 15, x0 + 12:x1 - 12]]
    ring_all = np.concatenate([wv[r][valid[r]] for r, _, _ in SIDES])
    ink = 0.0
    if middle.size and ring_all.size:
        ink = float(np.mean(middle < np.median(ring_all) - PRINT_STEP))
    return edge, float(np.mean(field or [0.0])), float(np.mean(outside or [0.0])), ink


WHITE_PERCENTILE = 98.0  # the level of each channel taken for white (see white_patch)


def white_patch(small: np.ndarray) -> np.ndarray:
    """``small`` with each channel's bright end (``WHITE_PERCENTILE``) moved half-way (in
    ratio) towards the brightest channel's: the photo's whitest things (a card's border among
    them) come out nearer grey-white.

    WHY: under a tinted lamp or an unbalanced webcam a white border is not white (its darkest
    channel, the border cue, sinks) and a wall takes on the card field's saturation; the
    segmentations and the border score assume white is white. WHY half-way: the brightest
    thing in a webcam frame may be a coloured wall, not the card; a full correction would then
    tint the card's border instead. Only the channels' ratios change (the brightest channel
    keeps its level)."""
    level = np.percentile(small.reshape(-1, 3), WHITE_PERCENTILE, axis=0).astype(np.float32)
    return apply_gain(small, np.sqrt(level.max() / np.maximum(level, 1.0)))


def candidates(img: np.ndarray, learned: bool = True) -> list[tuple[str, np.ndarray, float]]:
    """Every proposal as (method, quad in image pixels ordered portrait, score: geometry and
    the evidence of a card around it, :func:`card_evidence`), best score first. ``learned``:
    with the shipped card mask's proposals (:mod:`vision.card_mask`)."""
    if not isinstance(img, np.ndarray) or img.ndim != 3 or img.shape[2] != 3:
        raise SingleCardError("expected a BGR image of shape (H, W, 3)")
    h, w = img.shape[:2]
    if h == 0 or w == 0:
        raise SingleCardError(f"the image is empty ({h}×{w} pixels)")
    scale = WORK_SIDE / max(h, w)
    small = white_patch(cv2.resize(img, (max(1, int(w * scale)), max(1, int(h * scale))),
                                   interpolation=cv2.INTER_AREA))
    white = whiteness(small)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1)) / 4
    prob = default_card_mask().predict(small) if learned else None
    out = []
    for prop in _proposals(small, white, prob):
        name, box, fill = prop.method, prop.box, prop.fill
        parts = _evidence_parts(white, grad, box) if name == "frame" else None
        if parts is not None:  # a card filling the photo has its edges near the photo's
            fill *= min(1.0, parts[0] / FRAME_EDGE)
        score = _score(box, fill, small.shape[:2])
        edge = 0.0
        if score > -0.5:
            parts = parts or _evidence_parts(white, grad, box)
            score += _weigh_evidence(parts) + prop.credit
            if prob is not None:
                score += MASK_WEIGHT * mask_agreement(prob, box, small.shape[:2])
            edge = parts[0]
        out.append((name, order_portrait(box / scale), score, edge))
    return sorted(_demote_nested(out), key=lambda c: -c[2])


def _demote_nested(cands: list[tuple[str, np.ndarray, float, float]], ratio: float = 1.8,
                   slack: float = 0.25, penalty: float = 0.3
                   ) -> list[tuple[str, np.ndarray, float]]:
    """Lower the score of a proposal that lies inside a much larger, nearly as card-like and
    at least as well outlined one; ``cands`` are (method, quad, score, share of its outline on
    an edge).

    WHY: a card holds card-shaped things of its own (the white oval, the two small cards of a
    +2, the coloured field inside the border); the card itself is the outermost of them, and
    its outline is as clear as theirs. WHY outlined: the box round a head and the thumb on a
    held card, or round a shirt, holds the card too, but its outline lies on no edge."""
    out = []
    for name, quad, score, edge in cands:
        area = cv2.contourArea(quad)
        centre = tuple(float(v) for v in quad.mean(0))
        inside = any(
            other != "frame" and s2 >= score - slack and cv2.contourArea(q2) >= ratio * area
            and e2 >= edge and cv2.pointPolygonTest(q2.astype(np.float32), centre, False) > 0
            for other, q2, s2, e2 in cands if s2 > -0.5
        )
        out.append((name, quad, score - penalty if inside else score))
    return out


Candidate = tuple[str, np.ndarray, float]
"""A proposal of :func:`candidates`: (method, quad ordered portrait, score)."""


def locate_card(img: np.ndarray, size: tuple[int, int] = CROP_SIZE,
                classifier: object | None = None, margin: float = 0.15,
                cands: Sequence[Candidate] | None = None) -> Located:
    """The most card-like quad in ``img`` and its rectified portrait crop of ``size``.

    Geometry decides first; with a ``classifier`` (a :class:`vision.classifier.CardClassifier`)
    the proposals within ``margin`` of the best geometric score are each classified and the one
    the classifier is surest about wins. Only near-ties go to the classifier because it is
    confidently wrong on fragments (half a card's field looks like a +2 card). ``cands``: the
    photo's :func:`candidates` when already found (they are most of the cost)."""
    cands = [c for c in (candidates(img) if cands is None else cands) if c[2] > -0.5]
    if not cands:
        raise SingleCardError("no card-shaped region found in the image")
    if classifier is None:
        name, quad, score = cands[0]
        return Located(quad, rectify(img, quad, size), name, float(score))
    cands = [c for c in cands if c[2] >= cands[0][2] - margin]
    crops = [rectify(img, q, size) for _, q, _ in cands]
    conf = classifier.predict(crops).max(1)  # type: ignore[attr-defined]
    total = [float(c) + s for c, (_, _, s) in zip(conf, cands, strict=True)]
    i = int(np.argmax(total))
    return Located(cands[i][1], crops[i], cands[i][0], total[i])


def iou_in_photo(a: np.ndarray, b: np.ndarray, shape: tuple[int, ...]) -> float:
    """Intersection over union of two quads within the photo of ``shape`` (what lies beyond its
    edge is not in it; :func:`vision.photo_cards.quad_iou` is the exact IoU of two convex quads)."""
    ma, mb = np.zeros(shape[:2], np.uint8), np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(ma, [np.round(a).astype(np.int32)], 1)
    cv2.fillPoly(mb, [np.round(b).astype(np.int32)], 1)
    return float((ma & mb).sum() / max((ma | mb).sum(), 1))


