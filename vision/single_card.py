"""Read the one card in a photo of a single card, and measure that reading on labelled photos
and renders (``python -m vision.single_card``).

The card is found by :mod:`vision.card_locator` and read by the whole-card networks; with
``--deck uno`` also by its two corner indices (:mod:`vision.corner_index`), white-balanced by
its border: a finger over the big central symbol leaves them readable; and by its field's
colour as a pixel statistic (:mod:`vision.card_colour`). The chosen card's face and corners are
read at a few jittered quads and the readings averaged (``READ_JITTERS``): a located quad is
never exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.calibration import Reliability, reliability
from vision.card_locator import (
    Candidate,
    Located,
    SingleCardError,
    candidates,
    iou_in_photo,
    locate_card,
    order_portrait,
    read_image,
    rectify,
)
from vision.classifier import geometric_mean
from vision.photo_size import working_copy
from vision.strip_classifier import CARD_MM, soften
from vision.symbol_bias import symbol_weights


@dataclass(frozen=True)
class Jitter:
    """A small change of a located quad (ordered by
    :func:`vision.card_locator.order_portrait`): grown by ``scale`` about its centre and shifted
    by ``dx`` of the card's width and ``dy`` of its height (turns were tried too and gained
    nothing: models/HISTORY.md, seventh session)."""

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
        were read twice (fifteenth session, models/HISTORY.md)."""
        return self.scale == 1.0 and self.dx == 0.0 and self.dy == 0.0


def jittered_quads(quad: np.ndarray, jitters: Sequence[Jitter]) -> list[np.ndarray]:
    """``quad`` changed by each of ``jitters`` but the identity (its reading is had already)."""
    return [j.apply(quad) for j in jitters if not j.identity]


FUSED_MARGIN = 0.3
"""Proposals this close to the best geometric score are read by the photo reader's fallback
(:mod:`vision.photo_detect`) and counted "within margin" by :mod:`vision.locate_eval`; the UNO
reader's own range until RULE 81 (now :data:`CHOICE_MARGIN`)."""
CHOICE_MARGIN = 1.5
"""With ``corners``, :func:`read_single_card_probs` chooses among the proposals this close to the
best geometric score (and their ends) by score plus ``READING_WEIGHT`` times the fused reading's
top probability (reading only those that could still win: seventy-eighth session). WHY wider
than :data:`FUSED_MARGIN` and a reading weighed twice: on a card held up with the fingers across
its lower half, the card mask marks the hand (and a face behind it) as card, so the box round
hand and card scores best by geometry, while the card's own top end, whose corners read its
index surely, scored over 1 lower and was never read (RULE 81, seventy-seventh session,
models/HISTORY.md: tuned on render seeds 7 and 123, decided at fresh seed 15050, ten kinds 2,052
-> 2,059, mean ECE 0.036 -> 0.030). WHY 1.5 and not 2: 1.5 was the range tuned, 2 was not
measured (a proposal more than ``READING_WEIGHT`` below the best can never win, and since the
seventy-eighth session one that cannot reach the best-scored one's total is not read, so a wider
margin would cost little time)."""
READING_WEIGHT = 2.0
FUSED_TEMPERATURE = 1.22
"""Temperature of the fused reading (whole card at jittered quads × two corners × the field's
colour × each symbol's weight, :data:`vision.symbol_bias.SYMBOL_BIAS`, renormalised):
``p ** (1 / T)``. WHY: that product of experts was overconfident, on
renders and far more on real photos (models/HISTORY.md, fifteenth session); likely because it
counts evidence its experts share (the same index print, the same blur) as independent. Fitted by
negative log-likelihood (:func:`vision.strip_classifier.fit_temperature`) on the 2,160
rendered tuning photos of seeds 7 and 123 (all five synthetic kinds, 216 each), never on real
photos. On the measurement renders (seed 99, 1,080 photos) it took the negative
log-likelihood from 0.428 to 0.344 and the expected calibration error (:mod:`vision.calibration`)
from 0.034 to 0.027; the order of the codes, so the reading, is unchanged. Fitted again after
:func:`card_ends` added candidates (sixteenth session): 1.864 on the same five kinds. The fit
is now a command, ``python -m vision.fused_temperature``; for the thirty-ninth session's pair it
gives 1.28, which failed the rule written for it on fresh render seeds (ECE down at both, the
likelihood worse at one), so 1.86 stays (models/HISTORY.md, fortieth session). Fitted on all six
kinds (1.406) it passed such a rule, yet made the real UNO photos over-confident (ECE 0.024 ->
0.071, four wrong readings at 0.99 or more against none), so 1.86 stays again (forty-first
session): renders alone fit a sharper temperature than real photos bore then. By the
forty-sixth session the real photos read at 1.86 were under-confident in every bin (read at a
mean 0.67, 94.7% right), and with the one-card corner networks that know a corner without an
index and the corners also read at grown cards (RULE 30) the command fits 1.221 on the six
kinds of tuning seeds 7 and 123 (ECE 0.085 at 1.86, 0.016 at 1.221): 1.22, decided on fresh
render seeds with those changes (RULE 30, models/HISTORY.md)."""
# the quads a chosen card is read at (:func:`_read_jittered`): as located, grown and shrunk by
# 3%, shifted by 2% of the card each way. WHY these: the network learned from quads off by up
# to about 3%; symmetric, so the mean reading is centred on the located quad. Chosen on tuning
# seeds 7 and 123 of every synthetic set among scalings, shifts, turns and their unions
# (models/HISTORY.md, seventh session): turns, larger shifts gained nothing beyond the noise.
READ_JITTERS: tuple[Jitter, ...] = (
    Jitter(), Jitter(scale=0.97), Jitter(scale=1.03), Jitter(dx=-0.02), Jitter(dx=0.02),
    Jitter(dy=-0.02), Jitter(dy=0.02))

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
    (tuning renders, models/HISTORY.md)."""
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
    then chooses among the proposals within ``CHOICE_MARGIN`` of the best geometric score (and
    the upright cards that one lying wider than tall could be the end of, :func:`card_ends`,
    their whole face read from the quad of :func:`end_in_view`)
    the one whose whole face and (unbalanced) corners agree best; the chosen one is read again with
    its corners white-balanced by its border and its field's colour weighed in.
    WHY: a fragment or the whole frame can fool the whole-card classifier, but its corner
    patches then show no index that agrees. The chosen (or located) card's whole face, and its
    corners, are read at every quad of ``jitters`` (:func:`_read_jittered`,
    :meth:`vision.corner_index.CornerFusion.corner_probs`); ``(Jitter(),)`` reads it as
    located only. ``cands``: the photo's :func:`vision.card_locator.candidates` when already
    found."""
    return read_single_card_probs(image, classifier, allowed, adapter, corners, jitters,
                                  cands)[:3]


def choice_proposals(image: np.ndarray, cands: Sequence[Candidate] | None = None
                     ) -> tuple[list[Candidate], list[np.ndarray], list[np.ndarray]]:
    """The proposals a photo of one card is chosen among with corners (those within
    :data:`CHOICE_MARGIN` of the best geometric score, of ``cands`` or the locator's, then
    their ends), each with the quad its whole face is read at and the quad its corners are
    read at."""
    cands = [c for c in (candidates(image) if cands is None else cands) if c[2] > -0.5]
    if not cands:
        raise SingleCardError("no card-shaped region found in the image")
    cands = [c for c in cands if c[2] >= cands[0][2] - CHOICE_MARGIN]
    # a quad lying wider than tall may be the end of an upright card (:func:`card_ends`)
    h, w = image.shape[:2]
    ends = [(f"{name}-end", q, s, v) for name, quad, s in cands if name != "frame"
            for q, v in end_in_view(quad, (w, h))]
    # an end's whole face is read where it runs out of the photo (:func:`end_in_view`)
    views = [q for _, q, _ in cands] + [v for *_, v in ends]
    cands += [e[:3] for e in ends]
    photo = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    # the fallback box stands for a card that fills the photo: it is cut on every side
    seen = [photo if name == "frame" else q for name, q, _ in cands]
    return cands, views, seen


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
        cands, views, seen = choice_proposals(image, cands)
        from vision.corner_index import CORNER_ZOOM, fuse

        crops: list[np.ndarray | None] = [None] * len(cands)
        card_probs: list[np.ndarray | None] = [None] * len(cands)
        total = [-np.inf] * len(cands)

        def read_proposals(which: list[int]) -> None:
            if not which:
                return
            cut = [rectify(image, views[i]) for i in which]
            probs = list(read(cut))
            fused = corners.read_many(image, [seen[i] for i in which], probs,  # type: ignore
                                      classes, adapter, balance=False)
            for i, c, p, f in zip(which, cut, probs, fused, strict=True):
                crops[i], card_probs[i] = c, p
                total[i] = cands[i][2] + READING_WEIGHT * float(f.max())

        # the best-scored proposal (and its ends) first; a fused reading is at most 1, so a
        # proposal whose score + READING_WEIGHT falls short of their best total cannot win and
        # is not read: the same choice as reading all, at a fraction of the cost where the
        # best-scored proposal reads surely
        top = max(s for _, _, s in cands)
        first = [i for i, (_, _, s) in enumerate(cands) if s >= top]
        read_proposals(first)
        reach = max(total)
        read_proposals([i for i, (_, _, s) in enumerate(cands)
                        if i not in first and s + READING_WEIGHT >= reach])
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
    (models/HISTORY.md, fifty-first session: near's cards on their side were all read wrong at
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
        ious.append(iou_in_photo(loc.quad, quad, img.shape))
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
