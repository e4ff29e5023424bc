"""The frame as its own reference: one deck per table, so its cards agree with one another.

WHY: the classifier reads each card alone, and a card it is unsure of (a lime green that could be
yellow under this light, a 5 in a font whose belly looks like a 3) is unsure *in isolation*. The
other cards of the same frame are the same printing under the same light: their field colours
fall into four tight clusters, their big central symbols are drawn in one font, and a table of
UNO cards holds no standard face. Cards the classifier is sure of thus calibrate the frame, and
an unsure card is re-weighted by how well it fits them (:func:`frame_consistent`):

1. **deck**: a standard face on a table where every sure card is UNO (or the reverse) is unlikely;
2. **colour**: the UNO colours' field chroma (white-balanced by the card's border, as the
   classifier sees it) is clustered over the frame (EM seeded by the classifier's own colour
   probabilities), and a doubtful card's colour is weighed by its distance to each cluster;
3. **symbol**: a doubtful card's central symbol is matched (normalised cross-correlation of a
   colour-blind "whiteness" map, either way up) against cards of each candidate symbol that the
   classifier is sure of; the candidates are weighed by how well each matches, if any does.

Only cards read with less than ``GLYPH_UNSURE`` probability change (by the deck: less than
``unsure``); covered cards of a fanned layout (only a corner shows) neither change nor serve as
references.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import cv2
import numpy as np

from protocol_runner.cards import BACK, CardCodeError, parse_card
from vision.classifier import white_balance

UNO_COLOURS = "RGBY"
SURE = 0.9
"""A card read with at least this probability is a reference for the frame (its deck)."""
GLYPH_UNSURE = 0.98
"""Cards read with less than this probability have their symbol checked against the frame's
references and their colour against the frame's colour clusters: a clear glyph match
overrules even a fairly confident misreading (a 3 read as 8 at 0.97), and so does a clear
colour (a lime green read as yellow at 0.97). Checking colour below ``unsure`` (0.95) only,
as before, left 10 layouts with a misread card on 1,200 tuning tables (seeds 11,000,000+ to
11,600,000+, 300 each); below this, 8; below 0.99 and 0.999, 8 and 9."""
SYMBOL_SURE = 0.6
"""Least probability of a symbol (summed over its colours) for a card to serve as that symbol's
template: a green 5 read as 5G/5Y at 0.6/0.3 still shows a sure 5."""
COLOUR_DOUBT = 0.01
"""A card whose UNO colours share more than this of its probability besides the first is
unsure of its colour; only then are the frame's colours measured."""
FIELD_CHROMA = 25.0
"""Least chroma (Lab a*b* distance from grey) of a pixel of a card's coloured field."""
MIN_COLOURED = 6
"""Fewest coloured cards in a frame for its colour clusters to mean anything."""
CLUSTER_MASS = 1.5
"""Least summed probability of a colour over the frame for it to form a cluster."""
SIGMA_MIN = 3.0
"""Smallest spread (Lab units) of a colour cluster: a printing's colour varies by a few units
with light and print, so two colours closer than this are not told apart by it."""
GLYPH_MATCH = 0.9
"""Least correlation with a reference for a card's symbol to count as matched at all (same
symbol, same printing: median 0.98, 10th percentile 0.93 on renders). Other symbols correlate
less, but not always far less (a 6 with a 9 turned over, a 2 with a 3 inside one oval: up to
0.95), so a match is weighed against the other candidates' matches, never taken alone."""
GLYPH_SHARPNESS = 20.0
"""Weight of correlation differences: 0.1 less correlation is a factor of e^2 ≈ 7.4. Lowering
GLYPH_MATCH to 0.8 or 0.75 on tuning renders (242 tables) added 1 and 6 misreadings."""
COLOUR_SIZE = (40, 60)
"""(w, h) a card's field colour is measured at: a median needs no detail."""
GLYPH_SIZE = (56, 84)
"""(w, h) a card's symbol is compared at: the bar that tells a 6 from a 9 must stay a few
pixels thick, yet matching costs a half of the reader's full crop."""
TEMPLATES = 5
"""References compared per candidate symbol. Those that match another reference of their symbol
count first: one the classifier was sure of and wrong about (a 3 read as 8) then cannot vouch
for its misreading. Only if none of those matches are the others tried (a symbol drawn
differently card by card, as some printings vary the reverse arrows)."""
CANDIDATE = 0.01
"""Least probability of a symbol among a card's top four to be weighed against the others."""


@lru_cache(maxsize=8)
def _class_info(classes: tuple[str, ...]) -> tuple[tuple[str | None, ...],
                                                   tuple[str | None, ...],
                                                   tuple[bool | None, ...]]:
    """Per class: its UNO colour, its UNO symbol (None for W, +4, standard faces and BACK,
    whose centres look alike or are not UNO's), and whether it is UNO (None: BACK, unknown)."""
    colours: list[str | None] = []
    symbols: list[str | None] = []
    uno: list[bool | None] = []
    for code in classes:
        try:
            card = None if code == BACK else parse_card(code)
        except CardCodeError:
            card = None
        is_uno = None if card is None else card.deck == "uno"
        colours.append(card.colour if is_uno else None)  # type: ignore[union-attr]
        symbols.append(card.symbol if is_uno and card.symbol not in ("W", "+4")  # type: ignore[union-attr]
                       else None)
        uno.append(is_uno)
    return tuple(colours), tuple(symbols), tuple(uno)


def balanced(crop: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A card crop as this module looks at it: ``size`` (w, h) and white-balanced by its border
    as the classifier does (:func:`vision.classifier.white_balance`)."""
    return white_balance(cv2.resize(crop, size, interpolation=cv2.INTER_AREA))


def field_chroma(card: np.ndarray) -> np.ndarray | None:
    """Median (a*, b*) of the saturated pixels inside a :func:`balanced` card's border, or None
    when the card has no coloured field to speak of (a wild card, a back, a washed-out crop)."""
    lab = cv2.cvtColor(card, cv2.COLOR_BGR2LAB)
    h, w = lab.shape[:2]
    ab = lab[h // 10:h - h // 10, w // 10:w - w // 10, 1:].reshape(-1, 2).astype(np.float32)
    ab -= 128.0
    sat = ab[np.hypot(ab[:, 0], ab[:, 1]) > FIELD_CHROMA]
    if len(sat) < 0.2 * len(ab):
        return None
    return np.median(sat, axis=0)


def glyph_map(card: np.ndarray) -> np.ndarray:
    """A colour-blind picture of a :func:`balanced` card: its darkest channel (white oval or
    digit high, any coloured field and black outline low)."""
    return card.min(axis=2).astype(np.float32)


def glyph_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Best normalised correlation of card ``b``'s central symbol (either way up: a rectifier
    cannot tell a card's top) anywhere near the centre of card ``a`` (same crop size)."""
    h, w = a.shape
    search = a[h // 6:h - h // 6, w // 7:w - w // 7]
    best = -1.0
    for t in (b, b[::-1, ::-1]):
        templ = np.ascontiguousarray(t[int(0.22 * h):h - int(0.22 * h),
                                       int(0.21 * w):w - int(0.21 * w)])
        best = max(best, float(cv2.matchTemplate(search, templ, cv2.TM_CCOEFF_NORMED).max()))
    return best


class _Looks:
    """Each card's field colour and glyph map, made on first need and made once."""

    def __init__(self, crops: Sequence[np.ndarray]) -> None:
        self.crops = crops
        self._chroma: dict[int, np.ndarray | None] = {}
        self._glyphs: dict[int, np.ndarray] = {}

    def chroma(self, i: int) -> np.ndarray | None:
        if i not in self._chroma:
            self._chroma[i] = field_chroma(balanced(self.crops[i], COLOUR_SIZE))
        return self._chroma[i]

    def glyph(self, i: int) -> np.ndarray:
        if i not in self._glyphs:
            self._glyphs[i] = glyph_map(balanced(self.crops[i], GLYPH_SIZE))
        return self._glyphs[i]


def _normalised(p: np.ndarray) -> np.ndarray:
    return p / max(float(p.sum()), 1e-12)


def _deck_prior(probs: list[np.ndarray], uno: Sequence[bool | None], todo: list[int],
                skip: set[int]) -> None:
    """Weigh UNO and standard faces of the unsure cards by how the sure ones divide."""
    is_uno = np.array([u is True for u in uno])
    is_std = np.array([u is False for u in uno])
    n_uno = n_std = 0
    for i, p in enumerate(probs):
        k = int(np.argmax(p))
        if p[k] >= SURE and i not in skip:
            n_uno += bool(is_uno[k])
            n_std += bool(is_std[k])
    if n_uno + n_std < MIN_COLOURED:  # too few sure cards to say which deck lies here
        return
    total = n_uno + n_std + 1.0
    factor = np.where(is_uno, (n_uno + 0.5) / total, np.where(is_std, (n_std + 0.5) / total, 1.0))
    for i in todo:
        probs[i] = _normalised(probs[i] * factor)


def _colour_clusters(looks: _Looks, probs: list[np.ndarray], colours: Sequence[str | None],
                     todo: list[int], skip: set[int]) -> None:
    """Weigh the doubtful cards' UNO colours by their field's fit to the frame's colour clusters."""
    of = np.array([[c == k for c in colours] for k in UNO_COLOURS], np.float32)  # (4, C)
    if not any(COLOUR_DOUBT < float((of @ probs[i]).max()) < 1.0 - COLOUR_DOUBT for i in todo):
        return  # no unsure card is unsure of its colour: nothing to measure
    idx, chroma = [], []
    for i, p in enumerate(probs):
        if i in skip or colours[int(np.argmax(p))] is None:
            continue
        ab = looks.chroma(i)
        if ab is not None:
            idx.append(i)
            chroma.append(ab)
    if len(idx) < MIN_COLOURED or not set(idx) & set(todo):
        return
    x = np.array(chroma)
    seed = np.array([of @ probs[i] for i in idx])
    seed /= np.maximum(seed.sum(axis=1, keepdims=True), 1e-9)
    weight = seed
    fit = np.ones_like(seed)
    for _ in range(3):  # EM: clusters from soft memberships, memberships from clusters
        mass = weight.sum(axis=0)
        mu = weight.T @ x / np.maximum(mass[:, None], 1e-9)
        d2 = ((x[:, None, :] - mu[None]) ** 2).sum(axis=2)
        sigma = max(float(np.sqrt((weight * d2).sum() / (2 * weight.sum()))), SIGMA_MIN)
        formed = mass >= CLUSTER_MASS
        near = np.where(formed[None], d2, np.inf).min(axis=1, keepdims=True)
        fit = np.exp(-np.where(formed[None], d2 - near, 0.0) / (2 * sigma ** 2))
        weight = seed * fit
        weight /= np.maximum(weight.sum(axis=1, keepdims=True), 1e-12)
    factor_of = fit @ of + (1.0 - of.sum(axis=0))[None]  # classes without a colour keep 1
    for n, i in enumerate(idx):
        if i in todo:
            probs[i] = _normalised(probs[i] * factor_of[n])


class _References:
    """The frame's sure cards of each UNO symbol, their glyph maps, and which of them agree."""

    def __init__(self, looks: _Looks, probs: list[np.ndarray], symbols: Sequence[str | None],
                 skip: set[int]) -> None:
        names = sorted({s for s in symbols if s})
        of = np.array([[s == n for s in symbols] for n in names], np.float32)  # (S, C)
        self.glyph = looks.glyph
        self.refs: dict[str, list[int]] = {}
        for i, p in enumerate(probs):
            per = of @ p
            k = int(np.argmax(per))
            if i not in skip and per[k] >= SYMBOL_SURE:
                self.refs.setdefault(names[k], []).append(i)
        self._agreed: dict[str, list[int]] = {}

    def of(self, symbol: str, agreed: bool) -> list[int]:
        """References of ``symbol``; with ``agreed`` only those that look like another of
        them (all, if there is only one)."""
        js = self.refs.get(symbol, [])[:TEMPLATES]
        if not agreed or len(js) < 2:
            return js
        if symbol not in self._agreed:
            self._agreed[symbol] = [j for j in js if any(
                glyph_similarity(self.glyph(j), self.glyph(k)) >= GLYPH_MATCH
                for k in js if k != j)]
        return self._agreed[symbol]

    def similarities(self, i: int, cand: set[str], agreed: bool) -> dict[str, float]:
        """Card ``i``'s best match with the references of each candidate symbol that has any."""
        out = {}
        for s in cand:
            js = [j for j in self.of(s, agreed) if j != i]
            if js:
                out[s] = max(glyph_similarity(self.glyph(i), self.glyph(j)) for j in js)
        return out


def _symbol_votes(looks: _Looks, probs: list[np.ndarray], symbols: Sequence[str | None],
                  todo: list[int], skip: set[int]) -> None:
    """Weigh the doubtful cards' UNO symbols by how well their centre matches sure references."""
    if not any(symbols):
        return
    refs = _References(looks, probs, symbols, skip)
    for i in todo:
        p = probs[i]
        cand = {s for k in np.argsort(-p)[:4] if p[k] > CANDIDATE and (s := symbols[k])}
        if len(cand) < 2:
            continue
        sims = refs.similarities(i, cand, agreed=True)
        if not sims or max(sims.values()) < GLYPH_MATCH:
            sims = refs.similarities(i, cand, agreed=False)
        if not sims or max(sims.values()) < GLYPH_MATCH:
            continue  # matches nothing sure in this frame: no evidence either way
        best = max(sims.values())
        # a symbol with no reference is taken to match a little less well than a clear match
        factor = np.array([np.exp(GLYPH_SHARPNESS * (sims.get(s, GLYPH_MATCH - 0.05) - best))
                           if s else 1.0 for s in symbols])
        probs[i] = _normalised(p * factor)


def frame_consistent(crops: Sequence[np.ndarray], probs: Sequence[np.ndarray],
                     classes: Sequence[str], unsure: float,
                     covered: Sequence[bool] | None = None) -> list[np.ndarray]:
    """The cards' probabilities, those below ``unsure`` re-weighted by the rest of the frame
    (see the module's docstring). ``crops`` are the whole-card crops the classifier read."""
    out = [np.asarray(p, np.float32).copy() for p in probs]
    skip = {i for i, c in enumerate(covered or ()) if c}
    doubt = [i for i, p in enumerate(out) if float(np.max(p)) < GLYPH_UNSURE and i not in skip]
    todo = [i for i in doubt if float(np.max(out[i])) < unsure]
    if not doubt:
        return out
    colours, symbols, uno = _class_info(tuple(classes))
    _deck_prior(out, uno, todo, skip)
    looks = _Looks(crops)
    _colour_clusters(looks, out, colours, doubt, skip)
    _symbol_votes(looks, out, symbols, doubt, skip)
    return out
