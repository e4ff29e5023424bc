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

With ``--deck uno`` the card is also read by its two corner indices (:mod:`vision.corner_index`),
white-balanced by its border: a finger over the big central symbol leaves them readable; and by
its field's colour as a pixel statistic (:mod:`vision.card_colour`). The chosen card's face and
corners are read at a few jittered quads and the readings averaged (``READ_JITTERS``): a located
quad is never exact.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.calibration import Reliability, reliability
from vision.card_mask import blob_quad, default_card_mask, mask_agreement, mask_blobs
from vision.classifier import apply_gain, geometric_mean
from vision.photo_size import working_copy
from vision.strip_classifier import CARD_MM, soften
from vision.symbol_bias import symbol_weights


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


@dataclass(frozen=True)
class Jitter:
    """A small change of a located quad (ordered by :func:`order_portrait`): grown by
    ``scale`` about its centre and shifted by ``dx`` of the card's width and ``dy`` of its
    height (turns were tried too and gained nothing: models/README.md, seventh session)."""

    scale: float = 1.0
    dx: float = 0.0
    dy: float = 0.0

    def apply(self, quad: np.ndarray) -> np.ndarray:
        """``quad`` changed by this jitter, its corners in the same order."""
        q = np.asarray(quad, np.float64).reshape(4, 2)
        c = q.mean(0)
        across = ((q[1] - q[0]) + (q[2] - q[3])) / 2
        down = ((q[3] - q[0]) + (q[2] - q[1])) / 2
        out = c + self.scale * (q - c) + self.dx * across + self.dy * down
        return out.astype(np.float32)

    @property
    def identity(self) -> bool:
        """Whether this jitter leaves a quad as it is. WHY by value and not ``== Jitter()``: a
        dataclass equals only instances of its own class, and ``python -m vision.single_card``
        once held two (``__main__``'s and the imported module's), so the as-located corners
        were read twice (fifteenth session, models/README.md)."""
        return self.scale == 1.0 and self.dx == 0.0 and self.dy == 0.0


def jittered_quads(quad: np.ndarray, jitters: Sequence[Jitter]) -> list[np.ndarray]:
    """``quad`` changed by each of ``jitters`` but the identity (its reading is had already)."""
    return [j.apply(quad) for j in jitters if not j.identity]


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
    # credit of their own (0.2 and 0.5 read no more close-held renders: models/README.md)
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
41, models/README.md, fiftieth session)."""


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
the player and the room (models/README.md, thirty-sixth session), which the segmentations'
geometry and evidence do not. WHY 3: of 0.5, 1, 1.5, 2 and 3, the most proposals fitting the
card best-scored on the CC BY training split's webcam frames (21, 42, 66, 74, 78 of 121 with the
thirty-sixth session's mask, `python -m vision.locate_eval --split train`) with no loss on the
tuning renders; not chosen again for the thirty-seventh and thirty-eighth sessions' masks."""
FUSED_MARGIN = 0.3  # proposals this close to the best geometric score are read with corners
FUSED_TEMPERATURE = 1.22
"""Temperature of the fused reading (whole card at jittered quads × two corners × the field's
colour × each symbol's weight, :data:`vision.symbol_bias.SYMBOL_BIAS`, renormalised):
``p ** (1 / T)``. WHY: that product of experts was overconfident, on
renders and far more on real photos (models/README.md, fifteenth session); likely because it
counts evidence its experts share (the same index print, the same blur) as independent. Fitted by
negative log-likelihood (:func:`vision.strip_classifier.fit_temperature`) on the 2,160
rendered tuning photos of seeds 7 and 123 (all five synthetic kinds, 216 each), never on real
photos. On the measurement renders (seed 99, 1,080 photos) it took the negative
log-likelihood from 0.428 to 0.344 and the expected calibration error (:mod:`vision.calibration`)
from 0.034 to 0.027; the order of the codes, so the reading, is unchanged. Fitted again after
:func:`card_ends` added candidates (sixteenth session): 1.864 on the same five kinds. The fit
is now a command, ``python -m vision.fused_temperature``; for the thirty-ninth session's pair it
gives 1.28, which failed the rule written for it on fresh render seeds (ECE down at both, the
likelihood worse at one), so 1.86 stays (models/README.md, fortieth session). Fitted on all six
kinds (1.406) it passed such a rule, yet made the real UNO photos over-confident (ECE 0.024 ->
0.071, four wrong readings at 0.99 or more against none), so 1.86 stays again (forty-first
session): renders alone fit a sharper temperature than real photos bore then. By the
forty-sixth session the real photos read at 1.86 were under-confident in every bin (read at a
mean 0.67, 94.7% right), and with the one-card corner networks that know a corner without an
index and the corners also read at grown cards (RULE 30) the command fits 1.221 on the six
kinds of tuning seeds 7 and 123 (ECE 0.085 at 1.86, 0.016 at 1.221): 1.22, decided on fresh
render seeds with those changes (RULE 30, models/README.md)."""
# the quads a chosen card is read at (:func:`_read_jittered`): as located, grown and shrunk by
# 3%, shifted by 2% of the card each way. WHY these: the network learned from quads off by up
# to about 3%; symmetric, so the mean reading is centred on the located quad. Chosen on tuning
# seeds 7 and 123 of every synthetic set among scalings, shifts, turns and their unions
# (models/README.md, seventh session): turns, larger shifts gained nothing beyond the noise.
READ_JITTERS: tuple[Jitter, ...] = (
    Jitter(), Jitter(scale=0.97), Jitter(scale=1.03), Jitter(dx=-0.02), Jitter(dx=0.02),
    Jitter(dy=-0.02), Jitter(dy=0.02))

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


# ----------------------------------------------------------------------------- measurement


def _colour_of(code: str) -> str:
    """UNO colour letter, ``K`` for black UNO cards, ``-`` for anything else."""
    from vision.card_colour import code_colour

    return code_colour(code) or "-"


@dataclass(frozen=True)
class SingleCardReport:
    """Per-photo results of a labelled single-card set and the figures derived from them."""

    rows: tuple[tuple[str, str, str, float, str], ...]  # image, truth, predicted, conf, group
    ms: tuple[float, ...] = ()  # per photo: milliseconds to locate and read it (not to load)

    @property
    def top1(self) -> float:
        return sum(t == p for _, t, p, _, _ in self.rows) / max(len(self.rows), 1)

    @property
    def colour_accuracy(self) -> float:
        ok = sum(_colour_of(t) == _colour_of(p) for _, t, p, _, _ in self.rows if p != "?")
        return ok / max(len(self.rows), 1)

    def per_class(self) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = {}
        for _, t, p, _, _ in self.rows:
            out.setdefault(t, [0, 0])
            out[t][0] += t == p
            out[t][1] += 1
        return {k: (v[0], v[1]) for k, v in sorted(out.items())}

    def per_group(self) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = {}
        for _, t, p, _, g in self.rows:
            out.setdefault(g, [0, 0])
            out[g][0] += t == p
            out[g][1] += 1
        return {k: (v[0], v[1]) for k, v in sorted(out.items())}

    def confusions(self, n: int = 15) -> list[tuple[str, str, int]]:
        from collections import Counter

        c = Counter((t, p) for _, t, p, _, _ in self.rows if t != p)
        return [(t, p, k) for (t, p), k in c.most_common(n)]

    def text(self) -> str:
        lines = [f"photos {len(self.rows)}  top-1 {self.top1:.4f}  "
                 f"colour {self.colour_accuracy:.4f}" + _timing(self.ms)]
        lines.append("per group: " + ", ".join(f"{g} {a}/{n}" for g, (a, n) in
                                                self.per_group().items()))
        lines.append("per class: " + " ".join(f"{c}:{a}/{n}" for c, (a, n) in
                                               self.per_class().items()))
        lines.append("confusions (truth->read x n): " + ", ".join(
            f"{t}->{p} x{k}" for t, p, k in self.confusions()))
        lines.append("calibration (confidence group: photos at mean confidence -> share right): "
                     + self.reliability().text())
        return "\n".join(lines)

    def reliability(self) -> Reliability:
        """How the confidences of the photos whose card was located hold
        (:mod:`vision.calibration`); a photo with no card located has no confidence."""
        located = [(c, t == p) for _, t, p, c, _ in self.rows if p != "?"]
        return reliability([c for c, _ in located], [ok for _, ok in located])


def read_labels(labels_csv: str | Path) -> list[dict[str, str]]:
    """Rows of a ``labels.csv`` (columns image, code; optional group), with image paths resolved
    against the CSV's folder (or its ``images/`` subfolder)."""
    import csv

    labels_csv = Path(labels_csv)
    if not labels_csv.is_file():
        raise SingleCardError(f"no labels file at {labels_csv}")
    with labels_csv.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or "image" not in rows[0] or "code" not in rows[0]:
        raise SingleCardError(f"{labels_csv} must have a header with columns image,code")
    base = labels_csv.parent
    for r in rows:
        p = base / r["image"]
        r["path"] = str(p if p.is_file() else base / "images" / r["image"])
        r.setdefault("group", "")
        r["group"] = r.get("group") or ""
    return rows


def _read_jittered(image: np.ndarray, quad: np.ndarray, first: np.ndarray,
                   read: Callable[[list[np.ndarray]], np.ndarray],
                   jitters: tuple[Jitter, ...]) -> np.ndarray:
    """The whole-card probabilities of the card at ``quad``: the renormalised geometric mean
    (the mean of the log-probabilities) of its readings by ``read`` at every one of ``jitters``,
    ``first`` being its reading as it is (the identity's).

    WHY: a located quad is never exact (a blurred outline, a rounded corner, a finger on the
    edge), and the network learned from crops whose corners were off by up to about 3% of the
    card; the readings of a few near quads disagree where one of them is misled by a sliver
    of background or a cut-off index, and agree where the card is plain."""
    others = jittered_quads(quad, jitters)
    if not others:
        return first
    return geometric_mean(np.vstack([first[None], read([rectify(image, q) for q in others])]))


def _end_edges(quad: np.ndarray, ratio: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """For a quad lying wider than tall: its top and bottom edges (each left to right) and the
    vector from the top edge to the bottom of the upright card of its width (a card's length,
    square to the top edge); for any other quad, None."""
    q = order_portrait(quad)  # its long edges are q1 → q2 and q3 → q0
    long = q[2] - q[1]
    if abs(long[0]) <= abs(long[1]) or np.linalg.norm(long) <= np.linalg.norm(q[1] - q[0]):
        return None  # taller than wide in the photo, or square
    top, bottom = sorted([q[[1, 2]], q[[3, 0]]], key=lambda e: float(e[:, 1].mean()))
    top, bottom = top[np.argsort(top[:, 0])], bottom[np.argsort(bottom[:, 0])]  # left to right
    width = float(np.linalg.norm(top[1] - top[0]))
    u = (top[1] - top[0]) / max(width, 1e-6)
    down = np.float32([-u[1], u[0]]) * width * ratio  # u turned a quarter clockwise (y down)
    return top, bottom, down


def card_ends(quad: np.ndarray, ratio: float = CARD_MM[1] / CARD_MM[0]) -> list[np.ndarray]:
    """For a quad lying wider than tall in the photo: the two upright cards of which it could
    be the upper or the lower end (the same width, ``ratio`` times as tall, sharing its top or
    its bottom edge), ordered portrait; for any other quad, none.

    WHY: a card held close to a camera shows its upper end, and what the locator outlines
    there is often that end alone (the coloured field above the oval, or the visible part down
    to a finger); read as a whole card lying on its side, its index corners are sought in its
    middle."""
    edges = _end_edges(quad, ratio)
    return [] if edges is None else _ends(*edges)


def _ends(top: np.ndarray, bottom: np.ndarray, down: np.ndarray) -> list[np.ndarray]:
    """The upper and lower upright cards of :func:`card_ends` from :func:`_end_edges`."""
    upper = np.float32([top[0], top[1], top[1] + down, top[0] + down])
    lower = np.float32([bottom[0] - down, bottom[1] - down, bottom[1], bottom[0]])
    return [order_portrait(upper), order_portrait(lower)]


EDGE_NEAR = 0.03
"""A quad's far edge (the one a card held close runs on from) counts as the photo's edge when
both its corners lie within this share of the photo's shorter side of it (:func:`end_in_view`)."""


def end_in_view(quad: np.ndarray, size: tuple[int, int],
                ratio: float = CARD_MM[1] / CARD_MM[0]
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each card of :func:`card_ends` (the same order) with the quad its whole face is read
    from in a photo of ``size`` (w, h). Where ``quad``'s far edge (the bottom one for the upper
    card, the top one for the lower) lies at the photo's edge (:data:`EDGE_NEAR`), the card
    runs out of the photo there: the part of it in view, ordered upright (top-left, top-right,
    bottom-right, bottom-left), each long side followed until it leaves the photo but never
    short of ``quad``'s own side. Elsewhere the card itself, as :func:`card_ends` gives it.

    WHY: the whole-card classifier learned a card cut off by the frame as the part in view
    stretched to a card's shape (``vision/synth/crops.py``, its close-ups); the completed card
    fills what lies outside the photo with the edge's pixels, which it never saw. WHY only at
    the photo's edge: a quad whose far edge lies inside the photo is often a whole card lying
    on its side (a close-up), and the part of it in view, stretched upright, is that card
    turned a quarter, which the classifier never saw either and misread with confidence
    (tuning renders, models/README.md)."""
    edges = _end_edges(quad, ratio)
    if edges is None:
        return []
    top, bottom, down = edges
    w, h = size

    def reach(start: np.ndarray, seen: np.ndarray, step: np.ndarray) -> np.ndarray:
        """``start`` moved along ``step`` (a card's length) until it leaves the photo, at
        most one card length, at least as far as ``seen`` (the quad's corner on that side)."""
        t = 1.0
        for axis, bound in ((0, w - 1), (1, h - 1)):
            if step[axis] > 1e-6:
                t = min(t, (bound - start[axis]) / step[axis])
            elif step[axis] < -1e-6:
                t = min(t, -start[axis] / step[axis])
        least = float(np.dot(seen - start, step)) / float(np.dot(step, step))
        return start + float(np.clip(t, min(least, 1.0), 1.0)) * step

    def at_frame(points: np.ndarray) -> bool:
        """Whether both ``points`` lie within ``EDGE_NEAR`` of the photo's edge, or outside."""
        gap = EDGE_NEAR * min(w, h)
        return all(min(x, y, w - 1 - x, h - 1 - y) <= gap for x, y in points)

    cards = _ends(top, bottom, down)
    upper = np.float32([top[0], top[1], reach(top[1], bottom[1], down),
                        reach(top[0], bottom[0], down)]) if at_frame(bottom) else cards[0]
    lower = np.float32([reach(bottom[0], top[0], -down), reach(bottom[1], top[1], -down),
                        bottom[1], bottom[0]]) if at_frame(top) else cards[1]
    return list(zip(cards, (upper, lower), strict=True))


def read_single_card(image: np.ndarray, classifier: object,
                     allowed: tuple[str, ...] | None = None, adapter: object | None = None,
                     corners: object | None = None,
                     jitters: tuple[Jitter, ...] = READ_JITTERS,
                     cands: Sequence[Candidate] | None = None) -> tuple[Located, str, float]:
    """Locate the card of ``image`` and read it: (where it is, its code, the probability).

    The crop is read both ways up by the whole-card ``classifier``, through ``adapter`` when
    given (an enrolled deck profile with ``.predict(classifier, crops, both_ways)``);
    ``allowed`` restricts the answer to a deck's codes (the game knows its deck); ``corners`` (a
    :class:`vision.corner_index.CornerFusion`) adds the two corner indices of the card, and
    then chooses among the proposals within ``FUSED_MARGIN`` of the best geometric score (and
    the upright cards that one lying wider than tall could be the end of, :func:`card_ends`,
    their whole face read from the quad of :func:`end_in_view`)
    the one whose whole face and (unbalanced) corners agree best; the chosen one is read again with
    its corners white-balanced by its border and its field's colour weighed in.
    WHY: a fragment or the whole frame can fool the whole-card classifier, but its corner
    patches then show no index that agrees. The chosen (or located) card's whole face, and its
    corners, are read at every quad of ``jitters`` (:func:`_read_jittered`,
    :meth:`vision.corner_index.CornerFusion.corner_probs`); ``(Jitter(),)`` reads it as
    located only. ``cands``: the photo's :func:`candidates` when already found."""
    return read_single_card_probs(image, classifier, allowed, adapter, corners, jitters,
                                  cands)[:3]


def read_single_card_probs(image: np.ndarray, classifier: object,
                           allowed: tuple[str, ...] | None = None,
                           adapter: object | None = None, corners: object | None = None,
                           jitters: tuple[Jitter, ...] = READ_JITTERS,
                           cands: Sequence[Candidate] | None = None,
                           temperature: float = FUSED_TEMPERATURE,
                           parts: dict[str, np.ndarray] | None = None
                           ) -> tuple[Located, str, float, np.ndarray, tuple[str, ...]]:
    """:func:`read_single_card` with the whole distribution it chose from: (where, code,
    probability, probabilities, the codes they are over: ``corners.codes`` with ``corners``,
    else the classifier's classes). ``temperature`` tempers the fused reading (with
    ``corners`` only); 1 gives the product (weighed by each symbol's
    :data:`vision.symbol_bias.SYMBOL_BIAS`) that :mod:`vision.fused_temperature` fits.
    ``parts`` (with ``corners``): filled with the chosen card's experts over those codes as
    they were fused (:meth:`vision.corner_index.CornerFusion.experts`: ``card`` at the jittered
    quads, ``corners``, and ``colour``, the field colour's weights), for
    :mod:`vision.expert_eval`."""
    classes = classifier.classes  # type: ignore[attr-defined]

    def read(crops: list[np.ndarray]) -> np.ndarray:
        if adapter is None:
            return classifier.predict(crops, both_ways=True)  # type: ignore[attr-defined]
        return adapter.predict(classifier, crops, both_ways=True)  # type: ignore[attr-defined]

    if corners is not None:
        # near-ties of the geometry go to the proposal both readers explain best
        cands = [c for c in (candidates(image) if cands is None else cands) if c[2] > -0.5]
        if not cands:
            raise SingleCardError("no card-shaped region found in the image")
        cands = [c for c in cands if c[2] >= cands[0][2] - FUSED_MARGIN]
        # a quad lying wider than tall may be the end of an upright card (:func:`card_ends`)
        h, w = image.shape[:2]
        ends = [(f"{name}-end", q, s, v) for name, quad, s in cands if name != "frame"
                for q, v in end_in_view(quad, (w, h))]
        # an end's whole face is read where it runs out of the photo (:func:`end_in_view`)
        views = [q for _, q, _ in cands] + [v for *_, v in ends]
        cands += [e[:3] for e in ends]
        crops = [rectify(image, v) for v in views]
        card_probs = read(crops)
        photo = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        # the fallback box stands for a card that fills the photo: it is cut on every side
        seen = [photo if name == "frame" else q for name, q, _ in cands]
        from vision.corner_index import CORNER_ZOOM, fuse

        fused = [corners.read(image, q, p, classes, adapter, balance=False)  # type: ignore
                 for q, p in zip(seen, card_probs, strict=True)]
        total = [s + float(f.max()) for (_, _, s), f in zip(cands, fused, strict=True)]
        k = int(np.argmax(total))
        # white balance and the colour statistic refine the reading of the chosen card, not
        # which proposal is the card: a wrong proposal's "border" is no white reference (its
        # gain, up to 4x, makes its patches look like anything), and a fragment of one colour
        # (the field alone) would win on colour
        card = _read_jittered(image, views[k], card_probs[k], read, jitters)
        experts = corners.experts(image, seen[k], card, classes, adapter,  # type: ignore
                                  jitters=jitters, zoom=CORNER_ZOOM, anchored=True)
        experts["colour"] = corners.colour_expert(image, seen[k])  # type: ignore
        codes = tuple(corners.codes)  # type: ignore[attr-defined]
        probs = fuse(experts["card"], experts["corners"], shown=experts["shown"])
        probs = probs * experts["colour"] * symbol_weights(codes)
        probs = soften((probs / probs.sum())[None], temperature)[0]
        if parts is not None:
            parts.update(experts)
        i = int(np.argmax(probs))
        loc = Located(cands[k][1], crops[k], cands[k][0], total[k])
        return loc, codes[i], float(probs[i]), probs, codes
    loc = locate_card(image, classifier=classifier, cands=cands)
    probs = _read_jittered(image, loc.quad, read([loc.crop])[0], read, jitters)
    if allowed is not None:
        probs = np.where([c in allowed for c in classes], probs, 0.0)
    i = int(np.argmax(probs))
    return loc, classes[i], float(probs[i]), probs, tuple(classes)


def evaluate_single_cards(rows: list[dict[str, str]], classifier: object,
                          allowed: tuple[str, ...] | None = None,
                          adapter: object | None = None,
                          corners: object | None = None) -> SingleCardReport:
    """Locate, rectify and read the card of every photo in ``rows`` (from
    :func:`read_labels`) with :func:`read_single_card`."""
    out, ms = [], []
    for r in rows:
        try:
            image = read_image(r["path"])
            start = time.perf_counter()
            image = working_copy(image)[0]  # as cardtable detect reads it
            _, code, p = read_single_card(image, classifier, allowed, adapter, corners)
            ms.append(1000 * (time.perf_counter() - start))
        except SingleCardError:
            out.append((r["image"], r["code"], "?", 0.0, r["group"]))
            continue
        out.append((r["image"], r["code"], code, p, r["group"]))
    return SingleCardReport(tuple(out), tuple(ms))


def _timing(ms: list[float] | tuple[float, ...]) -> str:
    """The summary's timing: the median milliseconds per photo to locate and read its card
    (the models already loaded, the photo already decoded). WHY the median: the first call
    warms up onnxruntime, and a shared CPU adds outliers."""
    return f"  median {np.median(ms):.0f} ms per photo (locate + read)" if len(ms) else ""


def _quad_iou(a: np.ndarray, b: np.ndarray, shape: tuple[int, ...]) -> float:
    """Overlap of two quads within the photo (what lies beyond its edge is not in it)."""
    ma, mb = np.zeros(shape[:2], np.uint8), np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(ma, [np.round(a).astype(np.int32)], 1)
    cv2.fillPoly(mb, [np.round(b).astype(np.int32)], 1)
    return float((ma & mb).sum() / max((ma | mb).sum(), 1))


def synthetic_maker(kind: str) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    """The renderer of the ``synthetic:KIND`` photos (``vision.synth.photos``), or a clear error
    naming the kinds there are."""
    from vision.synth.photos import single_card_kinds

    makers = single_card_kinds()
    if kind not in makers:
        raise SingleCardError(f"no synthetic set {kind!r}: use synthetic:"
                              + " / synthetic:".join(makers))
    return makers[kind]


def synthetic_numbers(count: int, codes: Collection[str] | None = None) -> list[int]:
    """The numbers ``i`` of the photos :func:`synthetic_photos` renders of a set of ``count``
    (photo ``i`` shows UNO face ``i mod 54``), those of the faces ``codes`` only when given:
    what names a photo of a subset as in the whole set."""
    from vision.synth.faces import UNO_FACE_CODES

    return [i for i in range(count)
            if codes is None or UNO_FACE_CODES[i % len(UNO_FACE_CODES)] in codes]


def synthetic_photos(kind: str, count: int, seed: int, style: object | None = None,
                     codes: Collection[str] | None = None
                     ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """The ``count`` rendered photos of ``synthetic:KIND`` at ``seed``: (code, image, quad).
    Photo ``i`` shows UNO face ``i mod 54`` and draws from seed ``[seed, i]``, so any subset of
    a set is the same photos wherever it is read; ``style``: one printing for every face, or a
    function of the photo's generator that draws each face's printing (:func:`style_of`);
    ``codes``: only the photos of these faces are rendered (the same pictures as in the whole
    set)."""
    from vision.synth.faces import UNO_FACE_CODES, render_face

    make = synthetic_maker(kind)
    for i in synthetic_numbers(count, codes):
        code = UNO_FACE_CODES[i % len(UNO_FACE_CODES)]
        rng = np.random.default_rng([seed, i])
        drawn = style(rng) if callable(style) else style
        face = None if drawn is None else render_face(code, rng, size=(200, 300), style=drawn)
        img, quad = make(code, rng, face=face)
        yield code, img, quad


POSES = ("upright", "on its side", "upside down")
"""How a rendered card is turned in its photo (:func:`card_pose`), as ``evaluate_synthetic``
reports its accuracy."""


def card_pose(quad: np.ndarray) -> str:
    """One of :data:`POSES` for a card whose quad runs clockwise from its own top-left corner:
    by the angle between the card's downward side and the photo's, under 45°, 45-135° or more.

    WHY: the rendered kinds draw cards at several turns (``synthetic:near`` turns 15% of its
    cards a quarter), while the real webcam photos looked at (the 41 read wrong) hold their
    cards upright; a figure per pose tells which of a kind's errors the real photos share
    (models/README.md, fifty-first session: near's cards on their side were all read wrong at
    seed 7, 30 of its 51 errors)."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    down = (q[3] - q[0]) + (q[2] - q[1])
    tilt = abs(float(np.degrees(np.arctan2(down[0], down[1]))))
    return POSES[0] if tilt < 45 else POSES[1] if tilt <= 135 else POSES[2]


def _by_pose(poses: Sequence[str], hits: Sequence[bool]) -> str:
    """``by pose: upright a/n, ...`` over the poses that occur."""
    counts = {p: [0, 0] for p in POSES}
    for pose, hit in zip(poses, hits, strict=True):
        counts[pose][0] += hit
        counts[pose][1] += 1
    return "by pose: " + ", ".join(f"{p} {a}/{n}" for p, (a, n) in counts.items() if n)


def style_of(spec: int | str) -> object:
    """The UNO printing of ``--enrol-style`` / ``--printing``: a bare seed is the style
    ``draw_uno_style`` draws from it (``plain:SEED``), else a printing of
    :func:`vision.synth.faces.printing` (``thin:1``: numerals in a font no render uses).
    ``thin`` alone is no one printing but a way to draw one per face
    (:func:`vision.synth.faces.unseen_style`, a function of the face's generator); ``wild``
    likewise draws one per face whose wild cards are printed as current decks print them
    (:func:`vision.synth.faces.current_wild_style`; its coloured faces are the bare kind's).

    WHY ``thin``: one unseen printing reads far better or worse than another (``shown-gripped``
    at seed 7: ``thin:1`` 194 of 216, ``thin:2`` 209 at seed 123), so a figure that should
    stand for decks the networks never saw draws a printing for every face."""
    from vision.synth.faces import FaceError, current_wild_style, printing, unseen_style

    spec = str(spec)
    if spec == "thin":
        return unseen_style
    if spec == "wild":
        return current_wild_style
    try:
        return printing(f"plain:{spec}" if spec.isdigit() else spec)
    except FaceError as exc:
        raise SingleCardError(str(exc)) from exc


def evaluate_synthetic(kind: str, count: int, classifier: object,
                       allowed: tuple[str, ...] | None = None, corners: object | None = None,
                       seed: int = 99, enrol_style: int | str | None = None,
                       printed: str | None = None) -> str:
    """Locator and reader on ``count`` rendered single-card photos whose quad and code are known:
    ``table`` (a card lying on a table), ``held`` (held up to a webcam, often cut off),
    ``tinted`` (held, under strongly coloured light), ``closeup`` (a card filling the photo) or
    ``webcam`` (held up in a lit room to a cheap webcam: white walls, windows, lamps, a white
    shirt, washed out, blurred, JPEG) or ``near`` (as ``webcam``, held so close that the card
    runs off the frame's lower edge) or ``handheld`` (as ``webcam``, the card's long side
    0.5-1.55 frame heights, the sizes of the real hand-held webcam photos) or ``gripped`` (as
    ``handheld``, the fingers across the card's lower end) or ``shown`` and ``shown-gripped`` (as
    ``handheld`` and ``gripped``, the card's top end in view, as people show a card).
    Seeds ``[seed, i]``, the UNO faces in turn. WHY: a check of the locator that needs no real
    photo.

    ``enrol_style``: every face is drawn in one printing (:func:`style_of`: a seed of
    ``draw_uno_style``, or a printing such as ``thin:1``), the deck is first enrolled from one
    table photo of each of its 54 faces (seeds ``[seed, 10000 + j]``), and the test photos are
    read through that profile. ``printed``: the same printing read without a profile, the
    figure enrolment is measured against."""
    from vision.synth.faces import UNO_FACE_CODES, render_face
    from vision.synth.photos import single_card_photo

    synthetic_maker(kind)  # an unknown kind fails before any enrolment
    style, adapter, head = None, None, ""
    if printed is not None:
        style, head = style_of(printed), f"printing {printed}, no profile: "
    if enrol_style is not None:
        from vision.enrol import EnrolPhoto, enrol_images

        style = style_of(enrol_style)
        if callable(style):
            raise SingleCardError(f"--enrol-style {enrol_style}: a deck is enrolled in one "
                                  "printing; give one, e.g. thin:1")
        photos, images = [], []
        for j, code in enumerate(UNO_FACE_CODES):
            rng = np.random.default_rng([seed, 10000 + j])
            face = render_face(code, rng, size=(200, 300), style=style)
            images.append(single_card_photo(code, rng, face=face)[0])
            photos.append(EnrolPhoto(f"render-{j}", code))
        # the prototypes are the first network's features; the plain reading is all of them
        first = getattr(classifier, "members", (classifier,))[0]
        adapter = enrol_images(photos, images, first, corners, classifier)  # type: ignore[arg-type]
        head = f"enrolled style {enrol_style} (blend {adapter.blend:.3f}): "
    ious, ms, colour, conf, hits, poses = [], [], 0, [], [], []
    for code, img, quad in synthetic_photos(kind, count, seed, style):
        poses.append(card_pose(quad))
        start = time.perf_counter()
        loc, read, p = read_single_card(img, classifier, allowed, adapter, corners)
        ms.append(1000 * (time.perf_counter() - start))
        ious.append(_quad_iou(loc.quad, quad, img.shape))
        conf.append(p)
        hits.append(read == code)
        colour += _colour_of(read) == _colour_of(code)
    iou = np.array(ious)
    n = max(count, 1)
    return (f"{head}synthetic {kind}: photos {count}  top-1 {sum(hits) / n:.4f}  "
            f"colour {colour / n:.4f}  quad IoU mean {iou.mean():.3f}, "
            f">0.8 {np.mean(iou > 0.8):.3f}" + _timing(ms) + "\n" + _by_pose(poses, hits)
            + "\ncalibration (confidence group: photos at mean confidence -> share right): "
            + reliability(conf, hits).text())


def main(argv: list[str] | None = None) -> int:
    """``python -m vision.single_card LABELS.csv [--model M] [--deck uno] [--corners off]``:
    print the figures."""
    import argparse

    from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings
    from vision.synth.photos import single_card_kinds

    ap = argparse.ArgumentParser(prog="python -m vision.single_card")
    ap.add_argument("labels", type=Path,
                    help="a labels.csv, or synthetic:KIND (rendered photos), KIND one of "
                         + ", ".join(single_card_kinds()))
    ap.add_argument("--count", type=int, default=108, help="synthetic: how many photos")
    ap.add_argument("--seed", type=int, default=99, help="synthetic: render seed")
    ap.add_argument("--corners", choices=["on", "off"], default="on",
                    help="with --deck uno: also read the card's two corner indices with the "
                         "strip model (default on)")
    ap.add_argument("--balance", choices=["on", "off"], default="on",
                    help="with the corners: white-balance them by the card's border (default on)")
    ap.add_argument("--colour", choices=["on", "off"], default="on",
                    help="with the corners: weigh in the field's colour as a pixel statistic "
                         "(default on)")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--deck", choices=["any", "uno", "standard"], default="any")
    ap.add_argument("--group", default=None, help="only rows whose group starts with this")
    ap.add_argument("--source", default=None, help="only rows whose source column is this")
    ap.add_argument("--profile", type=Path, default=None, help="enrolled deck profile (.npz)")
    ap.add_argument("--enrol-style", default=None,
                    help="synthetic: render one printing (a seed, or plain:SEED, thin:SEED, "
                         "classic), enrol it from table photos, then read the test photos "
                         "through the profile")
    ap.add_argument("--printing", default=None,
                    help="synthetic: render one printing (as --enrol-style; or thin: each face "
                         "its own printing in a font no render uses; or wild: each face its own "
                         "printing, wild cards as current decks print them) and read it without "
                         "a profile: the figure enrolment is measured against")
    ap.add_argument("--enrol-group", default=None,
                    help="measure enrolment: enrol on this group's photos (kept in memory only), "
                         "test on the other rows")
    args = ap.parse_args(argv)
    clf = CardClassifier.load(args.model)
    allowed = None
    if args.deck != "any":
        from vision.synth.faces import STANDARD_FACE_CODES, UNO_FACE_CODES

        allowed = UNO_FACE_CODES if args.deck == "uno" else STANDARD_FACE_CODES
    corners = None
    if args.corners == "on" and args.deck == "uno":
        from vision.corner_index import CornerFusion

        corners = CornerFusion.load(clf.classes, allowed, balance=args.balance == "on",
                                    colour=args.colour == "on")
    # the photo of one card is read by the shipped later trainings too (a deck's profile
    # adapts their reading)
    both = with_later_trainings(clf, args.model)
    if str(args.labels).startswith("synthetic:"):
        if args.profile is not None:
            raise SingleCardError("--profile reads the photos of a labels.csv; rendered photos "
                                  "are read through a rendered printing's profile with "
                                  "--enrol-style SEED")
        if args.printing is not None and args.enrol_style is not None:
            raise SingleCardError("--printing reads a printing without a profile and "
                                  "--enrol-style through one: give one of them")
        print(evaluate_synthetic(str(args.labels).split(":", 1)[1], args.count, both, allowed,
                                 corners, args.seed, args.enrol_style, args.printing))
        return 0
    rows = read_labels(args.labels)
    enrol_rows = [r for r in rows if r["group"] == args.enrol_group] if args.enrol_group else []
    if args.enrol_group and not enrol_rows:
        raise SingleCardError(f"no rows in group {args.enrol_group!r}")
    rows = [r for r in rows if r not in enrol_rows]
    if args.group:
        rows = [r for r in rows if r["group"].startswith(args.group)]
    if args.source:
        rows = [r for r in rows if r.get("source") == args.source]
    adapter = None
    if args.profile is not None:
        from vision.enrol import DeckProfile

        adapter = DeckProfile.load(args.profile)
    if enrol_rows:
        from vision.enrol import EnrolPhoto, enrol

        adapter = enrol([EnrolPhoto(r["path"], r["code"]) for r in enrol_rows], clf, corners,
                        both)
        print(f"enrolled {len(adapter.codes)} cards from group {args.enrol_group} (blend "
              f"{adapter.blend:.3f}); testing on {len(rows)} other photos")
    print(evaluate_single_cards(rows, both, allowed, adapter, corners).text())
    return 0


if __name__ == "__main__":
    from vision.module_main import run_module

    run_module("vision.single_card")
