"""The table's cards read by their printed corner indices as well as by their whole faces.

WHY: the whole-card classifier reads a card from a small rectified crop, and its rare misreads
on a 50-card table are look-alike symbols (a 3 read as 8, a 2 as a skip, a 6 as a 9). The
corner index is a second, partly independent witness: other pixels, another network (the
corner-strip classifier, :mod:`vision.strip_classifier`), and printed twice (top-left, and
turned at the bottom-right), so that a card lying either way up shows it in both corners.
The readings are fused as a product of experts, exactly as :mod:`vision.corner_index` does for
a single held-up card (:func:`vision.corner_index.fuse`), with three table specifics:

* the table's cards are small (a corner index is a dozen pixels tall at 1280×720), where the
  strip network reads a single corner right about 94% of the time against the whole-card
  classifier's 99.9%: its corners are weak experts, hence a high :data:`TABLE_CORNER_FLOOR`;
* a corner is an expert on the *symbol* only (its probabilities summed over the colours):
  a corner's sliver of field colour under a frame's colour cast is no better evidence than
  the whole card's field, and fusing it turned a whole frame's lime greens yellow on a tuning
  seed (11,400,110: 10 cards); the frame's colour clusters (:mod:`vision.consistency`) judge
  colour instead;
* a table may hold standard faces and backs, which the strip network knows nothing of (or,
  for backs, only UNO's): the corners redistribute only the probability the whole card gives
  to UNO faces, among those faces; every other class keeps exactly its probability.

All corners of a frame's new cards are read in one batch (one network call per frame) by
the reader the single card uses (:func:`vision.corner_index.read_corners`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from protocol_runner.cards import BACK, parse_card

TABLE_CORNER_FLOOR = 0.85
"""Probability that a table card's corner reading says nothing: the corner expert is
``(1 - floor) · p(symbol) + floor / S`` over the S UNO symbols. Set on tuning seeds (rendered
tables 11,000,000+, 11,200,000+, 11,400,000+ and 11,600,000+, 300 each): layouts with a
misread card 18 without the corners; 16, 12, 10, 10, 10 and 12 at floors 0.5, 0.7, 0.8, 0.85,
0.9 and 0.95 (0.85: the middle of the plateau). The single-card value (0.3) lets the weak corner
readings outvote right whole-card readings."""


@lru_cache(maxsize=8)
def _shared(classes: tuple[str, ...], strip_classes: tuple[str, ...]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the UNO faces both networks know: their indices in ``classes``, their symbols'
    indices (into the symbols' list), and the (C, S) matrix summing strip classes to symbols."""
    codes = [(i, c) for i, c in enumerate(classes) if c != BACK and c in strip_classes]
    symbols = sorted({parse_card(c).symbol for _, c in codes})
    to_symbol = np.zeros((len(strip_classes), len(symbols)))
    for j, c in enumerate(strip_classes):
        if c != BACK and parse_card(c).symbol in symbols:
            to_symbol[j, symbols.index(parse_card(c).symbol)] = 1.0
    return (np.array([i for i, _ in codes], int),
            np.array([symbols.index(parse_card(c).symbol) for _, c in codes], int), to_symbol)


def fuse_table_card(probs: np.ndarray, corners: np.ndarray, classes: Sequence[str],
                    strip_classes: Sequence[str], floor: float = TABLE_CORNER_FLOOR
                    ) -> np.ndarray:
    """A card's whole-card ``probs`` (over ``classes``) fused with its ``corners`` ((2, C) over
    ``strip_classes``, NaN rows for corners not seen) as a product of experts: the whole card
    over the UNO faces, times each corner's floored probability of the face's symbol. Only
    the UNO faces' share of ``probs`` is redistributed; the other classes keep theirs."""
    card, symbol_of, to_symbol = _shared(tuple(classes), tuple(strip_classes))
    p = np.asarray(probs, np.float64)
    mass = float(p[card].sum()) if len(card) else 0.0
    if mass <= 0.0:
        return np.asarray(probs, np.float32)
    logp = np.log(np.maximum(p[card] / mass, 1e-12))
    n_symbols = to_symbol.shape[1]
    for row in corners:
        if np.isnan(row).any():
            continue
        sym = row @ to_symbol
        sym /= max(float(sym.sum()), 1e-12)
        logp += np.log((1.0 - floor) * sym[symbol_of] + floor / n_symbols)
    fused = np.exp(logp - logp.max())
    out = p.copy()
    out[card] = fused / fused.sum() * mass
    return out.astype(np.float32)
