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
pip size outside the two index corners (:func:`pip_patches`), and read each blob's soft ink
map, cut square around it, by the network, which also knows what is no pip (``X``: a digit,
a court card's letter or a piece of its picture, a joker's, a back's pattern). The card's
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

import cv2
import numpy as np

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
MARGIN = 0.03
"""Blobs within this share of the rectified edge are slivers of table or of a neighbour."""

_ONES = np.ones((1, 3), np.float32)


class PipModelError(ValueError):
    """The pip-suit weights cannot be read: the message says how to rebuild them."""


def rectify(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = RECT) -> np.ndarray:
    """The card at ``quad`` (image px, clockwise from its top-left, portrait) at ``size``."""
    w, h = size
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(np.asarray(quad, np.float32).reshape(4, 2), dst)
    return cv2.warpPerspective(image, m, size, flags=cv2.INTER_CUBIC,
                               borderMode=cv2.BORDER_REPLICATE)


def ink_map(card: np.ndarray) -> np.ndarray:
    """(h, w) uint8 colour distance (8-bit Lab, summed absolute differences, saturating) of
    every pixel of a rectified ``card`` from its paper: the median colour of its inside,
    sampled every third pixel (cheap, and a median needs no more)."""
    lab = cv2.cvtColor(card, cv2.COLOR_BGR2LAB)
    h, w = lab.shape[:2]
    paper = np.median(lab[h // 10:h - h // 10:3, w // 10:w - w // 10:3].reshape(-1, 3), axis=0)
    flat = np.empty_like(lab)
    flat[:] = paper.astype(np.uint8)
    diff = cv2.absdiff(lab, flat)
    return cv2.transform(diff, _ONES)


def pip_patches(card: np.ndarray, index: bool = False, heights: bool = False
                ) -> tuple[np.ndarray, ...]:
    """(N, PATCH, PATCH) float32 soft ink maps (0–1) of the blobs of pip size of a rectified
    ``card`` (BGR, any size; read at its own size), each cut square about the blob and masked
    to it (a neighbour inside the square is left out), and their (N, 2) centres as shares of
    the card's width and height. Blobs in the index corners (the rank's digits) only with
    ``index`` (training shows them as what is not a pip); with ``heights`` also their (N,)
    heights as shares of the card's."""
    dist = ink_map(card)
    h, w = dist.shape
    inner = dist[h // 10:h - h // 10, w // 10:w - w // 10]
    otsu, _ = cv2.threshold(inner, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = (dist > max(float(otsu), MIN_INK)).astype(np.uint8)
    n, labels, stats, centres = cv2.connectedComponentsWithStats(mask, connectivity=8)
    out, where, tall = [], [], []
    mx, my = MARGIN * w, MARGIN * h
    for k in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[k])
        cx, cy = centres[k] / (w, h)
        if (area < MIN_AREA or not PIP_H[0] * h <= bh <= PIP_H[1] * h
                or not PIP_W[0] * w <= bw <= PIP_W[1] * w):
            continue
        if x < mx or y < my or x + bw > w - mx or y + bh > h - my:
            continue
        if not index and in_index(cx, cy):
            continue
        side = max(bw, bh) + 2
        x0, y0 = x + bw // 2 - side // 2, y + bh // 2 - side // 2
        square = np.zeros((side, side), np.float32)
        sx0, sy0 = max(x0, 0), max(y0, 0)
        sx1, sy1 = min(x0 + side, w), min(y0 + side, h)
        square[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = np.where(
            labels[sy0:sy1, sx0:sx1] == k, dist[sy0:sy1, sx0:sx1], 0.0)
        patch = cv2.resize(square, (PATCH, PATCH), interpolation=cv2.INTER_AREA)
        out.append(patch / max(float(patch.max()), 1e-6))
        where.append((cx, cy))
        tall.append(bh / h)
    found = (np.asarray(out, np.float32).reshape(-1, PATCH, PATCH),
             np.asarray(where, np.float32).reshape(-1, 2))
    return (*found, np.asarray(tall, np.float32)) if heights else found


def in_index(cx: float, cy: float) -> bool:
    """Whether a blob centred at (``cx``, ``cy``) (shares of the card) is in an index corner."""
    return (cx < INDEX_W and cy < INDEX_H) or (cx > 1 - INDEX_W and cy > 1 - INDEX_H)


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
        """(N, 5) raw scores of (N, PATCH, PATCH) patches (no temperature)."""
        hidden = np.maximum(features(patches) @ self.w1 + self.b1, 0.0)
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
        per = [pip_patches(rectify(image, q))[0] for q in quads]
        if not any(len(p) for p in per):
            return out
        probs = self.predict_patches(np.concatenate([p for p in per if len(p)]))
        start = 0
        for i, p in enumerate(per):
            blobs = probs[start:start + len(p)]
            start += len(p)
            pips = blobs[blobs[:, len(SUITS)] < NOT_PIP, :len(SUITS)]
            if not len(pips):
                continue
            pips /= pips.sum(axis=1, keepdims=True)
            logp = np.log(np.maximum(pips, 1e-9)).mean(axis=0)
            e = np.exp(logp - logp.max())
            out[i] = e / e.sum()
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
