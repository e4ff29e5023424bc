"""Corner-index proposals without a trained detector: rank glyph beside suit glyph.

WHY: where no card outline is found (cards touching in a row, cut by the frame, bitten by a
hand) the only source of cards was a small YOLO detector trained from scratch on a CPU
(validation mAP50 0.20), which misses most indices. Every standard card prints its index the
same way: a rank glyph over a suit glyph, dark or red ink on a white card (gold or silver on
the black deck), two compact blobs of about one size, one above the other along the card's
long side. So glyph-size connected components of a local threshold (both polarities), paired
with a neighbour of about their size, give the index's box at the scale the corner reader was
trained on (the labelled index box, :func:`vision.photo_detect.corner_crop`). The reader then
says what each box holds (``none`` for the many pairs of blobs that are no index: keyboard
keys, pips, print), and :meth:`vision.photo_detect.PhotoReader.cards` pairs the indices of one
card.

Boxes are ``(x0, y0, x1, y1)`` in pixels of the image, axis-aligned as the labelled boxes are.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

GLYPH_MIN = 4
"""Least height or width (px) of a glyph's larger side: smaller blobs are noise or print."""
GLYPH_MAX = 40
"""Largest glyph side (px) at one scale of the pyramid (:data:`SCALES`)."""
SCALES = (1.0, 0.5, 0.25)
"""The image is searched at these scales, so glyphs of 4 to 160 px are found with one
threshold window: the labelled indices of the training photos are 20-300 px long."""
BLOCK = 31
"""Side (px) of the local-mean window of the threshold: larger than a glyph, so a glyph is
darker (or brighter) than its own surroundings."""
OFFSET = 25
"""How much darker (brighter) than the local mean a glyph's pixel is, of 255. On the training
split 12 / 25 / 40 gave proposals overlapping (IoU >= 0.5) 94 / 85 / 59 of the 153 missed labels
the reader reads right from their own labelled box, at 198 / 99 / 68 proposals per photo."""
FILL = (0.12, 0.9)
"""Share of a glyph's bounding box its pixels fill: a line or frame fills less, a solid
rectangle (a key, a shadow) more."""
PAIR_SIZE = 3.0
"""Largest ratio of two paired glyphs' sizes (larger side)."""
PAIR_GAP = (0.4, 1.8)
"""Distance of two paired glyphs' centres, in units of their mean size: rank and suit of one
index lie about one glyph apart."""
RING = 1.6
"""Side of the square around a box whose ring (less the box) is its surroundings, in the box's
longer sides."""
SPREAD_FLOOR = 8.0
"""Added to the ring's spread (of 255) before dividing: a perfectly plain ring is not
infinitely index-like."""
GROW = 1.2
"""A proposal is the glyphs' union box grown by this about its centre: the labelled index
boxes the corner reader was trained on are that much larger than their glyphs (median 1.21 on
the training photos, where a proposal and a label overlap)."""
NMS_IOU = 0.5
"""Boxes overlapping more than this are one proposal (the one of plainer surroundings)."""
MOST = 300
"""Most proposals per image (by :func:`_contrast`, best first): a bound on the cost of the
reader's screen (:meth:`vision.photo_detect.PhotoReader.propose`). Not a selection: on the
training split (an approximate replay) a cap of 80 lost 5 of the labels found uncapped."""


class IndexProposalError(ValueError):
    """An image the proposals cannot be found in (not an 8-bit BGR or greyscale picture)."""


def _grey(image: np.ndarray) -> np.ndarray:
    """The 8-bit greyscale of a BGR or greyscale picture, or :class:`IndexProposalError`."""
    ok = isinstance(image, np.ndarray) and image.dtype == np.uint8 and (
        image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3))
    if not ok:
        raise IndexProposalError(
            "expected an 8-bit BGR (H, W, 3) or greyscale (H, W) image, got "
            f"{getattr(image, 'dtype', type(image).__name__)} "
            f"{getattr(image, 'shape', '')}")
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image


def glyphs(image: np.ndarray) -> np.ndarray:
    """(N, 6) glyph-size blobs at every scale (:data:`SCALES`), in the image's pixels:
    x0, y0, x1, y1, a label that is the same only for blobs of one polarity (even: dark on
    light, odd: light on dark) at one scale, and the blob's mean grey (its ink)."""
    grey = _grey(image)
    out = []
    for level, scale in enumerate(SCALES):
        small = grey if scale == 1.0 else cv2.resize(grey, None, fx=scale, fy=scale,
                                                      interpolation=cv2.INTER_AREA)
        if min(small.shape) < BLOCK:
            break
        g = _blobs(small)
        g[:, :4] /= scale
        g[:, 4] += 2 * level
        out.append(g)
    return np.concatenate(out) if out else np.zeros((0, 6), np.float32)


def _blobs(grey: np.ndarray) -> np.ndarray:
    """(N, 6) glyph-size blobs of one greyscale image: x0, y0, x1, y1, polarity, mean grey."""
    out = []
    for pol, kind in enumerate((cv2.THRESH_BINARY_INV, cv2.THRESH_BINARY)):
        mask = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, kind, BLOCK,
                                     OFFSET if pol == 0 else -OFFSET)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        ink = np.bincount(labels.ravel(), grey.ravel().astype(np.float64), n)[1:] \
            / np.maximum(stats[1:, 4], 1)
        s = stats[1:]
        big = np.maximum(s[:, 2], s[:, 3])
        small = np.minimum(s[:, 2], s[:, 3])
        fill = s[:, 4] / np.maximum(s[:, 2] * s[:, 3], 1)
        keep = (big >= GLYPH_MIN) & (big <= GLYPH_MAX) & (small * 4 >= big) \
            & (fill >= FILL[0]) & (fill <= FILL[1])
        for (x, y, w, h, _), v in zip(s[keep], ink[keep], strict=True):
            out.append((x, y, x + w, y + h, pol, v))
    return np.array(out, np.float32).reshape(-1, 6)


@dataclass(frozen=True, slots=True)
class Proposals:
    """Candidate index boxes of one image, most index-like surroundings first."""

    boxes: np.ndarray
    """(N, 4) float32 x0, y0, x1, y1 in the image's pixels."""
    contrast: np.ndarray
    """(N,) the glyphs' ink against their plain surroundings (:func:`_contrast`)."""

    def __len__(self) -> int:
        return len(self.boxes)


NO_PROPOSALS = Proposals(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))


def proposals(image: np.ndarray, most: int | None = None) -> Proposals:
    """Candidate index boxes: the union boxes of two glyphs of one polarity and scale, of
    about one size, about one glyph apart (:data:`PAIR_SIZE`, :data:`PAIR_GAP`), after
    non-maximum suppression by :func:`_contrast`; at most ``most`` (default :data:`MOST`)."""
    grey = _grey(image)
    g = glyphs(grey)
    if len(g) < 2:
        return NO_PROPOSALS
    size = np.maximum(g[:, 2] - g[:, 0], g[:, 3] - g[:, 1])
    centre = np.stack([(g[:, 0] + g[:, 2]) / 2, (g[:, 1] + g[:, 3]) / 2], 1)
    i, j = np.triu_indices(len(g), 1)
    ratio = np.maximum(size[i], size[j]) / np.minimum(size[i], size[j])
    mean = (size[i] + size[j]) / 2
    gap = np.linalg.norm(centre[i] - centre[j], axis=1) / mean
    ok = (g[i, 4] == g[j, 4]) & (ratio <= PAIR_SIZE) & (gap >= PAIR_GAP[0]) & (gap <= PAIR_GAP[1])
    i, j = i[ok], j[ok]
    if not len(i):
        return NO_PROPOSALS
    boxes = np.stack([np.minimum(g[i, 0], g[j, 0]), np.minimum(g[i, 1], g[j, 1]),
                      np.maximum(g[i, 2], g[j, 2]), np.maximum(g[i, 3], g[j, 3])], 1)
    score = _contrast(grey, boxes, (g[i, 5] + g[j, 5]) / 2, g[i, 4] % 2 == 0)
    xywh = [[float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])] for b in boxes]
    keep = np.asarray(cv2.dnn.NMSBoxes(xywh, score.tolist(), 0.0, NMS_IOU), int).ravel()
    keep = keep[:MOST if most is None else most]
    mid = (boxes[keep, :2] + boxes[keep, 2:]) / 2
    half = (boxes[keep, 2:] - boxes[keep, :2]) * GROW / 2
    return Proposals(np.concatenate([mid - half, mid + half], 1).astype(np.float32),
                     score[keep].astype(np.float32))


def _contrast(grey: np.ndarray, boxes: np.ndarray, ink: np.ndarray, dark: np.ndarray
              ) -> np.ndarray:
    """How index-like each box's surroundings are: the glyphs' ink against the mean of the
    ring around the box (the crop the reader sees, less the box), over that ring's spread.
    WHY: an index is printed on the plain card; pairs of blobs in a face, a keyboard or a
    patterned table have busy surroundings or little contrast. 0 where the ink is on the
    wrong side of the ring (a dark glyph must be darker than its ring)."""
    h, w = grey.shape
    s1, s2 = cv2.integral2(grey, sdepth=cv2.CV_64F)

    def sums(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x0, x1 = np.clip(x0, 0, w).astype(int), np.clip(x1, 0, w).astype(int)
        y0, y1 = np.clip(y0, 0, h).astype(int), np.clip(y1, 0, h).astype(int)
        n = (x1 - x0) * (y1 - y0)
        a = s1[y1, x1] - s1[y0, x1] - s1[y1, x0] + s1[y0, x0]
        b = s2[y1, x1] - s2[y0, x1] - s2[y1, x0] + s2[y0, x0]
        return n.astype(np.float64), a, b

    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    half = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) * RING / 2
    n0, a0, b0 = sums(cx - half, cy - half, cx + half, cy + half)
    n1, a1, b1 = sums(boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3])
    n = np.maximum(n0 - n1, 1)
    mean = (a0 - a1) / n
    std = np.sqrt(np.maximum((b0 - b1) / n - mean ** 2, 0))
    diff = np.where(dark, mean - ink, ink - mean)
    return np.maximum(diff, 0) / (std + SPREAD_FLOOR)
