"""Standard cards' suits read from the shapes of their pips: a suit expert for table cards.

WHY: the whole-card classifier reads a table card from a 64-pixel crop of a card that is itself
only about 70 × 100 pixels in a 1280×720 frame; there a pip is a few pixels across and a spade
and a club (or a heart and a diamond) differ by a handful of pixels. Its misreads on rendered
standard tables are almost all of that kind (5S read as 5C, 10C as 10S, 3H as 3D), while the
rank and the suit's colour are right. The printed corner index is even smaller (its suit
symbol is 4–5 pixels tall), so the corner readers cannot settle it either. The pips are the
largest print of the suit on a number card, and there are up to ten of them: each is cut out
at the card's full resolution and its shape read by a tiny network
(:class:`PipSuitReader`), and the card's suit is their average reading.

The pipeline per card: rectify it (:data:`RECT`), measure every pixel's colour distance from
the card's paper (the median of its inside: the paper of a number card covers most of it, on
a dark deck too), threshold it (Otsu, at least :data:`MIN_INK`), keep the connected blobs of
pip size outside the two index corners (:func:`card_blobs`: a whole table's cards in one
pass, each read exactly as if alone), and read each blob's soft ink map, cut square around it,
by the network, which also knows what is no pip (``X``: a digit, a court card's letter or a
piece of its picture, a joker's, a back's pattern). The card's
suit is the average reading of its pips (:meth:`PipSuitReader.card_suits`), and it moves a
card's probability only between the two suits of one colour of one rank
(:func:`fuse_suits`), a court card's less than a number card's.

The network (two dense layers, numpy at run time) is trained on the blobs of rendered
standard tables of training seeds by :mod:`vision.train.pip_suits`; weights in
``models/pip_suit.npz``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.classifier import geometric_mean
from vision.detect import crop_card

DEFAULT_PIP_MODEL = Path(__file__).resolve().parent.parent / "models" / "pip_suit.npz"
SUITS = "SCHD"
"""The suits, in this order: black pair first, then red."""
CLASSES = SUITS + "X"
"""The network's classes: the suits, and ``X`` for a blob that is no pip."""
NOT_PIP = 0.5
"""A blob the network gives ``X`` at least this probability is no pip and says nothing."""
PIP_RANKS = frozenset(("A", "2", "3", "4", "5", "6", "7", "8", "9", "10"))
COURT_RANKS = frozenset(("J", "Q", "K"))
RECT = (112, 160)
"""(w, h) a card is rectified to: about 1.6× a 50-card table's card, so a pip's outline is
sampled smoothly rather than aliased by the 80 × 120 crop the classifier reads."""
PATCH = 16
"""Side of the square a pip's ink map is resized to for the network."""
MIN_INK = 40.0
"""Least colour distance (8-bit Lab units) from the paper for a pixel to be ink: Otsu picks the
threshold, this keeps a blank card's noise from becoming blobs."""
PIP_H = (0.05, 0.45)
"""A pip's height as a share of the card's: from a small drawn pip to an ace's big one."""
PIP_W = (0.05, 0.6)
MIN_AREA = 20
"""Fewest ink pixels of a pip (at :data:`RECT`)."""
INDEX_W, INDEX_H = 0.2, 0.28
"""The index corners (top-left and bottom-right, this share of the card each way) hold the
rank's digits and a tiny suit: their blobs are not pips."""
BLOCK = 16
"""Patches per matrix product in :meth:`PipSuitReader.logits`: 16 × 256 × 48 stays below
OpenBLAS's threshold for using more than one thread."""
MARGIN = 0.03
"""Blobs within this share of the rectified edge are slivers of table or of a neighbour."""


class PipModelError(ValueError):
    """The pip-suit weights cannot be read: the message says how to rebuild them."""


def rectify(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = RECT) -> np.ndarray:
    """The card at ``quad`` (image px, clockwise from its top-left, portrait) at ``size``,
    interpolated cubically (a pip's outline stays smooth when enlarged)."""
    return crop_card(image, np.asarray(quad, np.float32).reshape(4, 2), size, cv2.INTER_CUBIC)


def ink_maps(cards: np.ndarray) -> np.ndarray:
    """(N, h, w) uint8 colour distance (8-bit Lab, summed absolute differences, saturating) of
    every pixel of (N, h, w, 3) rectified ``cards`` from its card's paper: the median colour of
    the card's inside, sampled every third pixel (cheap, and a median needs no more)."""
    n, h, w = cards.shape[:3]
    lab = cv2.cvtColor(cards.reshape(n * h, w, 3), cv2.COLOR_BGR2LAB).reshape(n, h, w, 3)
    inside = lab[:, h // 10:h - h // 10:3, w // 10:w - w // 10:3].reshape(n, -1, 3)
    paper = np.median(inside, axis=1).astype(np.uint8)
    out = np.empty((n, h, w), np.uint8)
    for k in range(n):  # each card less its own paper
        diff = cv2.absdiff(lab[k], (*(float(v) for v in paper[k]), 0.0))
        a, b, c = cv2.split(diff)
        cv2.add(cv2.add(a, b), c, dst=out[k])  # saturating: min(255, a + b + c)
    return out


@dataclass(frozen=True)
class Blobs:
    """The blobs of pip size of N rectified cards, card by card, and within a card in the
    order the card alone gives them: (M, PATCH, PATCH) float32 soft ink maps (0–1), each
    cut square about its blob and masked to it (a neighbour inside the square is left out);
    (M, 2) centres and (M,) heights as shares of the card's size; (M,) the card each is on."""

    patches: np.ndarray
    centres: np.ndarray
    heights: np.ndarray
    card: np.ndarray


def card_blobs(cards: np.ndarray, index: bool = False) -> Blobs:
    """The :class:`Blobs` of (N, h, w, 3) rectified BGR ``cards`` (any size; read at their own
    size). Blobs in the index corners (the rank's digits) only with ``index`` (training shows
    them as what is not a pip).

    WHY all cards at once: a table's cards are stacked into one image, blank rows between
    each two (8-connected ink cannot cross them), so the colour conversion and the blob
    search run once per table instead of once per card, and the blobs are sifted as arrays
    instead of one by one; each card's threshold stays its own, and every blob, its pixels and
    its order are those the card alone gives (the tiles keep an even height: OpenCV labels
    blobs scanning blocks of 2 × 2 pixels), so the readings are those of one card at a
    time, bit for bit."""
    n, h, w = cards.shape[:3]
    dist = ink_maps(cards)
    tile = h + 2 - h % 2  # one or two blank rows below each card
    mask = np.zeros((n, tile, w), np.uint8)
    for k in range(n):
        otsu, _ = cv2.threshold(dist[k, h // 10:h - h // 10, w // 10:w - w // 10], 0, 255,
                                cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        cv2.compare(dist[k], max(float(otsu), MIN_INK), cv2.CMP_GT, mask[k, :h])
    _, labels, stats, centroids = cv2.connectedComponentsWithStats(
        mask.reshape(n * tile, w), connectivity=8)
    x, y, bw, bh, area = (stats[1:, k].astype(np.int64) for k in range(5))
    card = y // tile
    y = y - card * tile
    # a centroid is the blob's sum of rows over its area: the card's own sum, restored exactly
    sums = np.rint(centroids[1:, 1] * area) - card * tile * area
    cx, cy = centroids[1:, 0] / w, sums / area / h
    mx, my = MARGIN * w, MARGIN * h
    keep = ((area >= MIN_AREA) & (PIP_H[0] * h <= bh) & (bh <= PIP_H[1] * h)
            & (PIP_W[0] * w <= bw) & (bw <= PIP_W[1] * w)
            & (x >= mx) & (y >= my) & (x + bw <= w - mx) & (y + bh <= h - my))
    if not index:
        keep &= ~in_index(cx, cy)
    kept = np.flatnonzero(keep)
    patches = np.empty((len(kept), PATCH, PATCH), np.float32)
    for n_out, (k, c, x0, y0, bw0, bh0) in enumerate(zip(
            *(v[kept].tolist() for v in (np.arange(len(x)), card, x, y, bw, bh)), strict=True)):
        side = max(bw0, bh0) + 2
        x0, y0 = x0 + bw0 // 2 - side // 2, y0 + bh0 // 2 - side // 2
        square = np.zeros((side, side), np.float32)
        sx0, sy0 = max(x0, 0), max(y0, 0)
        sx1, sy1 = min(x0 + side, w), min(y0 + side, h)
        top = c * tile
        square[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = \
            dist[c, sy0:sy1, sx0:sx1] * (labels[top + sy0:top + sy1, sx0:sx1] == k + 1)
        patch = cv2.resize(square, (PATCH, PATCH), interpolation=cv2.INTER_AREA)
        patches[n_out] = patch / max(float(patch.max()), 1e-6)
    return Blobs(patches, np.stack([cx[kept], cy[kept]], axis=1).astype(np.float32),
                 (bh[kept] / h).astype(np.float32), card[kept])


def pip_patches(card: np.ndarray, index: bool = False, heights: bool = False
                ) -> tuple[np.ndarray, ...]:
    """(N, PATCH, PATCH) patches and (N, 2) centres of the blobs of pip size of one rectified
    ``card`` (:func:`card_blobs`); with ``heights`` also their (N,) heights."""
    blobs = card_blobs(card[None], index)
    found = (blobs.patches, blobs.centres)
    return (*found, blobs.heights) if heights else found


def in_index(cx: Any, cy: Any) -> Any:
    """Whether a blob centred at (``cx``, ``cy``) (shares of the card; floats, or arrays of
    them) is in an index corner."""
    return ((cx < INDEX_W) & (cy < INDEX_H)) | ((cx > 1 - INDEX_W) & (cy > 1 - INDEX_H))


def features(patches: np.ndarray) -> np.ndarray:
    """(N, PATCH²) network inputs of (N, PATCH, PATCH) patches, centred."""
    return patches.reshape(len(patches), -1) - 0.5


@dataclass(frozen=True)
class PipSuitReader:
    """Blob patches in, probabilities over :data:`CLASSES` (the four suits, and ``X``: not a
    pip — a digit, a court letter, a piece of a picture or of a back's pattern) out:
    ``w1 · x + b1``, ReLU, ``w2 · h + b2``, softmax at ``temperature``."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    temperature: float = 1.0

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PIP_MODEL) -> PipSuitReader:
        path = Path(path)
        if not path.is_file():
            raise PipModelError(f"{path}: no pip-suit weights here; build them with "
                                "`python -m vision.train.pip_suits`")
        try:
            with np.load(path) as z:
                if str(z["classes"]) != CLASSES or int(z["patch"]) != PATCH:
                    raise PipModelError(f"{path}: weights for other classes or patch size; "
                                        "rebuild with `python -m vision.train.pip_suits`")
                return cls(z["w1"], z["b1"], z["w2"], z["b2"], float(z["temperature"]))
        except (KeyError, OSError, ValueError) as exc:
            if isinstance(exc, PipModelError):
                raise
            raise PipModelError(f"{path}: not pip-suit weights ({exc}); rebuild with "
                                "`python -m vision.train.pip_suits`") from exc

    def logits(self, patches: np.ndarray) -> np.ndarray:
        """(N, 5) raw scores of (N, PATCH, PATCH) patches (no temperature).

        WHY in blocks of :data:`BLOCK` patches: OpenBLAS spreads a product of a whole table's
        blobs (hundreds) over every core, and on a busy CPU its threads wait for one another
        at a cost of 15 to 25 ms of CPU a table, for a product that one thread does in a
        fraction of a millisecond; a block this small it leaves on one thread."""
        x = features(patches)
        hidden = np.concatenate([np.maximum(x[i:i + BLOCK] @ self.w1 + self.b1, 0.0)
                                 for i in range(0, len(x), BLOCK)])
        return hidden @ self.w2 + self.b2

    def predict_patches(self, patches: np.ndarray) -> np.ndarray:
        """(N, 5) probabilities over :data:`CLASSES`."""
        z = self.logits(patches) / self.temperature
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=1, keepdims=True)

    def card_suits(self, image: np.ndarray, quads: Sequence[np.ndarray]) -> np.ndarray:
        """(N, 4) suit probabilities (over :data:`SUITS`) of the cards at ``quads`` (image
        px, portrait, clockwise from the top-left): the mean log-probability of the suits over
        the card's blobs that are pips (``X`` below :data:`NOT_PIP`), renormalised; a NaN row
        for a card with no pip."""
        out = np.full((len(quads), len(SUITS)), np.nan)
        if not len(quads):
            return out
        blobs = card_blobs(np.stack([rectify(image, q) for q in quads]))
        if not len(blobs.card):
            return out
        probs = self.predict_patches(blobs.patches)
        for i in np.unique(blobs.card):
            cut = probs[blobs.card == i]
            pips = cut[cut[:, len(SUITS)] < NOT_PIP, :len(SUITS)]
            if not len(pips):
                continue
            out[i] = geometric_mean(pips / pips.sum(axis=1, keepdims=True), floor=1e-9)
        return out


@lru_cache(maxsize=8)
def _pairs(classes: tuple[str, ...], ranks: frozenset[str]) -> np.ndarray:
    """(P, 2) indices into ``classes`` of the standard cards of ``ranks`` that differ only in
    the suit within a colour: (rank S, rank C) and (rank H, rank D)."""
    index = {c: i for i, c in enumerate(classes)}
    out = [(index[r + a], index[r + b]) for r in sorted(ranks) for a, b in ("SC", "HD")
           if r + a in index and r + b in index]
    return np.array(out, int).reshape(-1, 2)


def standard_mass(probs: np.ndarray, classes: Sequence[str]) -> float:
    """Probability ``probs`` (over ``classes``) gives the standard faces (jokers aside)."""
    pairs = _pairs(tuple(classes), PIP_RANKS | COURT_RANKS)
    return float(np.asarray(probs)[pairs].sum()) if len(pairs) else 0.0


def fuse_suits(probs: np.ndarray, suits: np.ndarray, classes: Sequence[str],
               floor: float, court_floor: float = 1.0) -> np.ndarray:
    """A card's ``probs`` (over ``classes``) with the pip expert's ``suits`` (over
    :data:`SUITS`; a NaN row: no pips, unchanged) as a product of experts within each pair of
    cards of one rank and colour (5S/5C, 5H/5D, QS/QC): the pair's probability is shared
    anew in proportion to ``probs`` times ``(1 - floor) · p(suit | colour) + floor / 2``;
    court pairs (J, Q, K) with ``court_floor`` (1: untouched).

    WHY within pairs only: the pips tell a spade from a club and a heart from a diamond; the
    rank and the colour the whole-card classifier sees well, so every pair's total, every
    other class and thus the rank and colour stay as the classifier read them. WHY a floor of
    its own for court cards: their suit is printed large once or twice beside a picture, whose
    pieces may pass for pips; a number card shows up to ten pips."""
    s = np.asarray(suits, np.float64).reshape(-1)
    out = np.asarray(probs, np.float64).copy()
    if s.shape != (len(SUITS),) or np.isnan(s).any():
        return out.astype(np.float32)
    within = s.reshape(2, 2) / np.maximum(s.reshape(2, 2).sum(axis=1, keepdims=True), 1e-12)
    for ranks, f in ((PIP_RANKS, floor), (COURT_RANKS, court_floor)):
        pairs = _pairs(tuple(classes), ranks)
        if not len(pairs) or f >= 1.0:
            continue
        weight = (1.0 - f) * within + f / 2  # rows: (S, C), (H, D)
        colour = np.array([0 if classes[i][-1] in "SC" else 1 for i in pairs[:, 0]])
        mass = out[pairs].sum(axis=1)
        shared = out[pairs] * weight[colour]
        shared *= (mass / np.maximum(shared.sum(axis=1), 1e-300))[:, None]
        out[pairs] = shared
    return out.astype(np.float32)
