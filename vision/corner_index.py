"""Read a single card by its corner indices as well as by its whole face.

WHY: the whole-card classifier reads the big central symbol, which a holding finger often
covers; and a card held up to a webcam often runs off the frame, so the located quad is only the
visible part of the card. The printed corner index (top-left, and the same index turned 180° at
the bottom-right) is what a person reads then. This module

1. completes a quad cut off by the photo's edge to the card's full aspect (:func:`complete_quad`;
   where its corners show no index and a card lying the other way also holds what is seen,
   that card is tried too, :func:`card_completions`; a card running off a corner of the photo
   is also tried larger, :func:`grown_completion`),
2. cuts both index corners of the completed card (each the top-left corner of one of the two
   ways up) and reads them with the corner-strip network (:mod:`vision.strip_classifier`;
   two trainings on wide printings too averaged in place of the shipped one,
   ``single_card_strip``); the chosen card's corners are also read from patches
   :data:`CORNER_ZOOM` times as large, for printings with a large index,
3. fuses them with the whole-card probabilities as a product of experts over the deck's faces
   (:func:`fuse`; the two corners, one print of one symbol, as one expert, each weighed by
   how surely it shows an index); a corner the networks see no index in (``NO_INDEX``: a
   quad located wrong, a card taken sideways, a hand over it) says nothing
   (:func:`index_readings`) and does not dilute the other. Each corner is made robust by a
   floor: with probability ``CORNER_FLOOR`` a corner shows nothing of its index (a finger,
   glare, a misplaced quad) and then says nothing. A corner outside the photo is not read at
   all, and neither corner of a card that runs off two opposite sides of the photo and is not
   seen to end on a third (a close-up it fills) is.

The chosen card's corner patches are white-balanced by its own border before they are read
(``balance``: real webcams tint more than the strip network's training casts), and the field's
colour as a pixel statistic (:mod:`vision.card_colour`) is a further expert (``colour``). Both
refine the reading of the chosen proposal only (see :func:`vision.single_card.read_single_card`).
An enrolled deck profile adapts the corner readings as it adapts the whole card's
(:meth:`vision.enrol.DeckProfile.adapt_corners`).

The constants are fixed a priori (documented next to them), not fitted on any photo.

Status (issue 5): on rendered held-up photos it lifts top-1 from 66% to 82%; on the real UNO
photos (measurement only) it did not: 41.4% before, 41.3% with it, 41.4% with the border white
balance and the colour statistic (colour 82.4% -> 85.3%). With an enrolled deck whose profile
adapts the corner readings too, the other photos of that deck read 91.4% (68.5% when only the
whole card was adapted). The renders-only strip network reads some real corner fonts as others
(a 1 as a 7, a +2 as a reverse). ``--corners off`` reads without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from protocol_runner.cards import BACK
from vision.card_colour import border_gain, colour_weights
from vision.card_locator import order_portrait, rectify
from vision.classifier import apply_gain, geometric_mean
from vision.single_card import Jitter, jittered_quads
from vision.strip_classifier import (
    CARD_MM,
    DEFAULT_STRIP_MODEL,
    NO_INDEX,
    StripClassifier,
    StripClassifierError,
    StripEnsemble,
    corner_patch_quad,
    cut_patch,
    single_card_strip,
)

CARD_RATIO = CARD_MM[1] / CARD_MM[0]  # UNO: 88 / 57 = 1.54
CORNER_FLOOR = 0.3
"""Probability that a corner reading carries no information (covered, blurred, misplaced): the
corner expert is ``(1 - floor) · p + floor / K``. A priori: in a hand-held photo one corner in
three or four is under a finger or off the card (0.1 to 0.5 read the rendered held-up photos
alike)."""
CORNER_GROWS = (1.25, 1.5)
"""How much larger than the smallest card holding what is seen a card running off a corner of
the photo is also taken to be when its corners are read (:func:`grown_completion`,
:func:`most_legible`). WHY these: on rendered cards held close (``synthetic:near``, tuning seed
7) the true card is 1.11 times the completed one's width at the median, 1.24 at the upper
quartile, 1.40 at the 90th percentile; the real webcam photos' close-ups showed their index cut
across by the completed card's patch (RULE 30, models/HISTORY.md)."""
CORNER_ZOOM = 1.3
"""How much larger a patch the chosen card's index corners are also read from, anchored at the
card's corner (:meth:`CornerFusion.corner_probs`). WHY: a printing whose index is drawn large
(0.18-0.21 of the card's height; the renders draw 0.10-0.15), or a quad a little small, shows
the index too large for the networks, which then read it as a reverse (real webcam photos,
RULE 38, models/HISTORY.md); 1.3 as RULE 25's larger patch, fixed a priori."""
FILLS_PHOTO = 0.7
"""The share of the photo a card's located quad covers from which the card is taken to be held
so close that its index corners lie at or just beyond the photo's corners
(:func:`anchored_cards`). WHY: real webcam close-ups that the card fills show their large index
at the photo's top-left, while the located quad (a box of most of the photo, cut on several
sides) puts the card's corners elsewhere or reads none (RULE 46, models/HISTORY.md); 0.7 was
chosen on tuning renders with those photos in view."""
ANCHOR_WIDTHS = (0.9, 1.1, 1.3)
"""The widths, as shares of the photo's width, of the cards anchored at the photo's corners
(:func:`anchored_cards`): a card that fills the photo is about as wide as it, or a little wider
where it runs off both sides."""
ANCHOR_SURE = 0.95
"""How surely an anchored card's corner must read a code of the deck for that reading to join
the corner's readings (:meth:`CornerFusion.corner_probs`). WHY sure: a photo's corner holds
whatever is there (the card's middle, the room), and the corner network calls an index in
most such patches, at a low probability for any one code; a reading of one code at 0.95 is an
index (tuning renders, RULE 46)."""
OTHER_WAY_SHOWN = 0.5
"""A card cut by the photo's edge is read as lying the other way too (:func:`card_completions`'
second card) only where neither corner of the upright card shows an index this surely
(:func:`shows_index`). WHY: upright is the likelier way for a card held up to a camera, and a
corner that shows an index there is evidence for it; read always, the other way's corners,
cut where the upright card has its middle, added a weak reading to a card read right and
turned it wrong (one real webcam photo, p_0113, lost by RULE 43, models/HISTORY.md). 0.5:
more likely than not, fixed a priori."""
CUT_TOL = 0.015  # of the photo's longer side: a quad corner this close to the edge touches it
MIN_INSIDE = 0.85  # share of a corner patch that must lie inside the photo to be read


def _border_distances(p: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Distances of point ``p`` to the left, top, right and bottom edges of the photo."""
    h, w = shape
    return np.array([p[0], p[1], w - p[0], h - p[1]], np.float64)


def cut_edges(quad: np.ndarray, shape: tuple[int, int]) -> list[bool]:
    """For each edge ``quad[i] → quad[i+1]``: whether it lies along the photo's edge (the card
    runs off the photo there). An edge along a photo edge has one end on it and the other near
    it (the card may be tilted by up to about 20°)."""
    h, w = shape
    tol = CUT_TOL * max(h, w)
    out = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        length = float(np.linalg.norm(q - p))
        dp, dq = _border_distances(p, shape), _border_distances(q, shape)
        near = (np.minimum(dp, dq) < tol) & (np.maximum(dp, dq) < tol + 0.35 * length)
        out.append(bool(near.any()))
    return out


def complete_quad(quad: np.ndarray, shape: tuple[int, int], ratio: float = CARD_RATIO
                  ) -> np.ndarray:
    """The whole card's quad given the quad of its visible part (ordered clockwise from the
    top-left): a side that runs along the photo's edge is moved beyond it until the quad has a
    card's aspect and keeps the sides that are not cut: of the cards (portrait or landscape,
    ``ratio``) that hold what is seen, one standing upright in the photo (its long sides nearer
    the vertical), the smallest of those. A quad cut on three sides has one edge seen and is
    taken to be as wide as it is seen across that edge. A quad with no cut side, or cut on two
    opposite sides and neither or both of the others (its size is unknown), is returned as is.

    WHY upright: a card held up to a camera stands upright, and one held close shows only
    its upper end, often wider than tall and so as card-like as a smaller card lying on its
    side; read that way, its index corners were sought at its middle. On rendered cards held
    close (``synthetic:near``, tuning seeds 7 and 123) this and the three-side rule below
    together took top-1 from 31% to 46%, with the other kinds within a photo or two of 216.
    WHY the smallest then: the cheapest explanation of what is seen; a card cut at its short
    side is ``ratio`` times as long as it is wide, and the index corners are then where the
    corner reader looks for them. WHY as wide as seen: the smallest card again; the photo
    shows its top edge and with it the corners of that end. The card lying the other way, where
    one holds what is seen too, is :func:`card_completions`' second."""
    return card_completions(quad, shape, ratio)[0]


def _side_lengths(q: np.ndarray) -> tuple[float, float]:
    """A quad's mean length along its edges 0 and 2 and along its edges 1 and 3 (across and
    along a card in portrait order)."""
    a = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
    b = (np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2
    return float(a), float(b)


def _unit(v: np.ndarray) -> np.ndarray:
    """``v`` scaled to length 1 (a zero vector stays near zero)."""
    return v / max(float(np.linalg.norm(v)), 1e-9)


def card_completions(quad: np.ndarray, shape: tuple[int, int], ratio: float = CARD_RATIO
                     ) -> list[np.ndarray]:
    """The whole cards that hold a visible part ``quad`` cut by the photo's edge: first
    :func:`complete_quad`'s (the upright one), then, where one lying the other way also holds
    what is seen, the smallest such card (on its side, or upright where the first lies on its
    side); only ``quad`` itself when its size is unknown or nothing is cut.

    WHY both: a card held close shows one end, and which way it stands is a guess. Upright
    is the likelier for a card held up to a camera, but a card held on its side, or lying at a
    slant on a table, shows its index where the upright card has its middle, and its corner
    patches then hold no index (rendered close-held cards, tuning seed 7: its 30 cards on
    their side are 30 of ``synthetic:near``'s 51 misreadings). The corner reader tries
    the second only where the first shows no index (:data:`OTHER_WAY_SHOWN`)."""
    q = np.asarray(quad, np.float64).reshape(4, 2).copy()
    cut = cut_edges(q, shape)
    if sum(cut) == 3:  # one edge seen, cut on both sides across it: as wide as what is seen
        i = next(i for i in range(4) if cut[i] and cut[(i + 2) % 4])
        cut[i] = cut[(i + 2) % 4] = False
    if (cut[0] and cut[2]) or (cut[1] and cut[3]) or not any(cut):
        return [q.astype(np.float32)]
    a, b = _side_lengths(q)  # along edges 0 and 2, along edges 1 and 3
    grow_a, grow_b = cut[1] or cut[3], cut[0] or cut[2]
    # the direction of edges 1 and 3 (top to bottom of the quad) in the photo: how upright
    down = (q[3] - q[0]) + (q[2] - q[1])
    upright_b = abs(down[1]) >= abs(down[0])
    options = []
    for r in (ratio, 1 / ratio):  # b = r · a (portrait) or landscape
        if grow_a and grow_b:
            na = max(a, b / r)
            options.append((na, na * r))
        elif grow_b and a * r >= 0.97 * b:
            options.append((a, a * r))
        elif grow_a and b / r >= 0.97 * a:
            options.append((b / r, b))
    if not options:
        return [q.astype(np.float32)]
    options.sort(key=lambda o: ((o[1] > o[0]) != upright_b, o[0] * o[1]))
    out = []
    for na, nb in options:
        c = q.copy()
        if grow_b and nb > b:
            if cut[2]:  # move the bottom edge (c2, c3) away from the top
                c[3], c[2] = c[0] + _unit(c[3] - c[0]) * nb, c[1] + _unit(c[2] - c[1]) * nb
            else:
                c[0], c[1] = c[3] + _unit(c[0] - c[3]) * nb, c[2] + _unit(c[1] - c[2]) * nb
        if grow_a and na > a:
            if cut[1]:  # move the right edge (c1, c2) away from the left
                c[1], c[2] = c[0] + _unit(c[1] - c[0]) * na, c[3] + _unit(c[2] - c[3]) * na
            else:
                c[0], c[3] = c[1] + _unit(c[0] - c[1]) * na, c[2] + _unit(c[3] - c[2]) * na
        out.append(c.astype(np.float32))
    return out


def grown_completion(quad: np.ndarray, shape: tuple[int, int], grow: float,
                     ratio: float = CARD_RATIO) -> np.ndarray | None:
    """The card of :func:`complete_quad` grown ``grow`` times about its one corner that is
    seen, for a quad cut by the photo's edge on exactly two adjacent sides (a card running
    off a corner of the photo); None for any other quad (its size is seen, or nothing of it
    anchors a larger card).

    WHY: :func:`complete_quad` takes the smallest card that holds what is seen. A card held
    close to a webcam and running off two sides is often larger than that, and its index
    corner, cut at the smallest card's scale, shows the index cut across or too large (real
    webcam photos, models/HISTORY.md, forty-seventh session). The seen corner, where the two
    sides that are the card's own meet, stays where it is; the index lies at a fixed share of
    the card from it."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    cut = cut_edges(q, shape)
    pairs = [i for i in range(4) if cut[i] and cut[(i + 1) % 4]]
    if sum(cut) != 2 or len(pairs) != 1:
        return None
    done = np.asarray(complete_quad(q, shape, ratio), np.float64)
    anchor = done[(pairs[0] + 3) % 4]
    return (anchor + grow * (done - anchor)).astype(np.float32)


def hidden_completions(quad: np.ndarray, ratio: float = CARD_RATIO, short: float = 0.97
                       ) -> list[np.ndarray]:
    """The whole cards of a visible part ``quad`` that is shorter or narrower than a card (by
    more than ``short``) with its hidden part under the hand that holds it, not beyond the
    photo's edge: the card that keeps the quad's top edge and runs on down past the quad's end
    to a card's length, and the one that keeps its left edge and runs on across to a card's
    width (portrait order, both read at their top-left index corner only); none for a quad of
    a card's shape.

    WHY: a card held up to a webcam is gripped like a phone, the fingers across its lower end,
    and what is seen of it ends at the fingers. The corner patch is cut at a fixed share of the
    card's length from its corner: cut at the share of the short quad, the index lies half
    outside it; and :func:`complete_quad` grows only a side along the photo's edge, so a card
    whose top edge touches the photo's was grown upwards, out of the photo, its seen index
    corner not read at all (real hand-held webcam photos, fifty-seventh session). WHY the
    top-left corner only: the hand holds the card from below (a UNO face reads the same
    either way up, so its upper end is whichever is up), and so hides the bottom-right index
    corner; a bottom-right corner read at a card grown upwards from the quad's lower edge
    read the middle of cards held close and running off the photo's lower edge (rendered
    ``near`` cards, tuning seed 7)."""
    q = np.asarray(order_portrait(quad), np.float64)
    a, b = _side_lengths(q)  # across, along
    cards = []
    if b < short * ratio * a:  # its lower end hidden
        down = q.copy()
        nb = ratio * a
        down[3], down[2] = q[0] + _unit(q[3] - q[0]) * nb, q[1] + _unit(q[2] - q[1]) * nb
        cards.append(down)
    if a < short * b / ratio:  # its right side hidden
        right = q.copy()
        na = b / ratio
        right[1], right[2] = q[0] + _unit(q[1] - q[0]) * na, q[3] + _unit(q[2] - q[3]) * na
        cards.append(right)
    return [c.astype(np.float32) for c in cards]


def _area_inside(quad: np.ndarray, shape: tuple[int, int]) -> tuple[float, float]:
    """(the convex ``quad``'s area, the area of its part inside the photo of ``shape``)."""
    h, w = shape
    poly = np.asarray(quad, np.float32).reshape(-1, 1, 2)
    area = abs(cv2.contourArea(poly))
    if area <= 0:
        return 0.0, 0.0
    frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]]).reshape(-1, 1, 2)
    inter, _ = cv2.intersectConvexConvex(poly, frame)
    return float(area), float(inter)


def inside_share(quad: np.ndarray, shape: tuple[int, int]) -> float:
    """Share of ``quad``'s area that lies inside the photo."""
    area, inter = _area_inside(quad, shape)
    return inter / area if area > 0 else 0.0


def index_in_photo(quad: np.ndarray, shape: tuple[int, int]) -> bool:
    """Whether the top-left index patch (:func:`corner_patch_quad`) of the card at ``quad``
    (portrait order, from its own top-left corner) lies in a photo of ``shape`` as far as a
    corner must to be read (:data:`MIN_INSIDE`)."""
    return inside_share(corner_patch_quad(quad), shape) >= MIN_INSIDE


def photo_share(quad: np.ndarray, shape: tuple[int, int]) -> float:
    """Share of the photo (``shape``: height, width) that ``quad``'s part inside it covers."""
    return _area_inside(quad, shape)[1] / float(shape[0] * shape[1])


def anchored_cards(shape: tuple[int, int], widths: Sequence[float] = ANCHOR_WIDTHS,
                   ratio: float = CARD_RATIO) -> tuple[list[np.ndarray], list[int]]:
    """Cards anchored at the photo's corners, for a card that fills the photo: for each of
    ``widths`` (shares of the photo's width), an upright card whose top-left corner is the
    photo's (read at its top-left index corner, side 0) and one whose bottom-right corner is
    the photo's (read at its bottom-right one, side 1). Returns the cards (portrait order) and
    the side each is read at, as :meth:`CornerFusion._read_cards` takes them.

    WHY: a card held so close that it fills the photo has its corners at or beyond the photo's,
    and its index (drawn at a fixed share of the card from its corner) lies near the photo's
    corner; the located quad of such a photo is a box of most of it, whose corners are the
    photo's or the box's, not the card's (RULE 46, models/HISTORY.md)."""
    h, w = shape
    cards, sides = [], []
    for share in widths:
        cw = share * w
        ch = ratio * cw
        cards.append(np.float32([[0, 0], [cw, 0], [cw, ch], [0, ch]]))
        sides.append(0)
        cards.append(np.float32([[w - cw, h - ch], [w, h - ch], [w, h], [w - cw, h]]))
        sides.append(1)
    return cards, sides


def read_corners(strip: StripClassifier | StripEnsemble, image: np.ndarray,
                 quads: Sequence[np.ndarray], gains: Sequence[np.ndarray | None] | None = None,
                 sides: Sequence[int | None] | None = None) -> np.ndarray:
    """(N, 2, C) strip probabilities of the top-left index corner of each card at ``quads``
    read both ways up (the second is the bottom-right corner, turned); a corner not inside the
    image is a row of NaN. ``quads`` are whole cards' (see :func:`complete_quad`), ordered
    portrait; ``gains``: per card, the gain (BGR, :func:`vision.card_colour.border_gain`) that
    white-balances its patches first, or None; ``sides``: per card, the one corner to read (0
    top-left, 1 bottom-right; the other stays NaN), None for both.

    WHY a batch: the table reads all corners of a frame's new cards in one network call
    (:mod:`vision.table_corners`); a single card is a batch of one."""
    n, k = len(quads), len(strip.classes)
    out = np.full((n, 2, k), np.nan)
    ways = [w for q in quads
            for w in (np.asarray(q, np.float32), np.roll(np.asarray(q, np.float32), -2, axis=0))]
    todo = [i for i, w in enumerate(ways)
            if (sides is None or sides[i // 2] in (None, i % 2))
            and index_in_photo(w, image.shape[:2])]
    if todo:
        patches = [cut_patch(image, ways[i], strip.size) for i in todo]
        if gains is not None:
            patches = [p if gains[i // 2] is None else apply_gain(p, gains[i // 2])
                       for p, i in zip(patches, todo, strict=True)]
        out.reshape(2 * n, k)[todo] = strip.predict_patches(patches)
    return out


def most_legible(readings: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """(2, C): for each corner, of its readings (G, 2, C) at several scales of the card (a NaN
    row: not read at that scale), the one whose surest code (``NO_INDEX`` aside) is surest; a
    NaN row where none was read.

    WHY the corner's own confidence, not the agreement with the whole card: the scales are one
    hypothesis about one card, and the scale at which its index is cut right reads it clearly.
    Offered as further candidates of the fused choice (RULE 30), the grown cards won where
    their corner agreed with a wrong whole card, and lost where the index read right at
    another scale disagreed with it (real webcam photos, models/HISTORY.md, RULE 32)."""
    readings = np.asarray(readings, np.float64)
    codes = [i for i, c in enumerate(classes) if c != NO_INDEX]
    out = np.full(readings.shape[1:], np.nan)
    for side in range(readings.shape[1]):
        rows = readings[:, side]
        seen = ~np.isnan(rows).any(axis=1)
        if seen.any():
            sure = np.where(seen, np.nan_to_num(rows[:, codes]).max(axis=1), -1.0)
            out[side] = rows[int(np.argmax(sure))]
    return out


def index_shown(corners: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """(rows,) how surely each corner reading (rows x C over the strip network's ``classes``)
    shows an index at all: 1 - P(``NO_INDEX``); 0 for a corner not read (a NaN row), 1 for one
    read by a network with no ``NO_INDEX`` class."""
    corners = np.atleast_2d(corners)
    read = ~np.isnan(corners).any(axis=1)
    if NO_INDEX not in classes:
        return read.astype(np.float64)
    return np.where(read, 1.0 - np.nan_to_num(corners[:, list(classes).index(NO_INDEX)]), 0.0)


def shows_index(corners: np.ndarray, classes: Sequence[str], least: float = OTHER_WAY_SHOWN
                ) -> bool:
    """Whether either of a card's corner readings (2, C; a NaN row: not read) shows an index at
    ``least`` or more (:func:`index_shown`)."""
    return bool((index_shown(corners, classes) >= least).any())


def _jittered_mean(readings: np.ndarray) -> np.ndarray:
    """(2, C): a card's two corners from their readings (J, 2, C) at its quad and its jittered
    quads, each the renormalised geometric mean of the readings inside the photo; a corner not
    read at the quad itself stays a NaN row (whether a corner is read is decided by the quad)."""
    out = readings[0].copy()
    if len(readings) == 1:
        return out
    for side in np.flatnonzero(~np.isnan(out).any(axis=1)):
        rows = readings[:, side]
        out[side] = geometric_mean(rows[~np.isnan(rows).any(axis=1)])
    return out


def index_readings(probs: np.ndarray, classes: Sequence[str], codes: Sequence[str]
                   ) -> np.ndarray:
    """Corner readings (M, len(classes)) over the strip network's ``classes`` as readings over
    ``codes``: a network's belief that a corner shows no index (``NO_INDEX``) is spread evenly
    over the codes, since such a corner says nothing about the card."""
    out = probs[:, [list(classes).index(c) for c in codes]]
    if NO_INDEX in classes:
        out = out + probs[:, [list(classes).index(NO_INDEX)]] / len(codes)
    return out


def fuse(card: np.ndarray, corners: np.ndarray, floor: float = CORNER_FLOOR,
         shown: np.ndarray | None = None) -> np.ndarray:
    """Product of two experts over the same K codes: the whole-card probabilities (K,) times
    the index corners' (rows of (M, K); a NaN row is a corner not seen, left out), renormalised.
    Each input is renormalised over the K codes first (the deck restriction), each corner
    floored (``CORNER_FLOOR``).

    WHY the corners are one expert, the geometric mean of those read: they are one print of one
    symbol, so what misleads one (a printing's index shape, the card's blur) misleads the other
    alike. Multiplied as two independent experts, two corners that read 2 as reverse at 0.9
    (real UNO photos of one printing) outweighed a whole card reading 2 at 0.95: at 0.9 for
    reverse and 0.01 for 2, floored over 54 codes, each corner weighs reverse about 50 to 1
    over 2, two about 2,500 to 1, against the card's 95 to 1 (at 0.01 for reverse).
    One corner read (the other out of the photo) weighs as much as both (RULE 28,
    models/HISTORY.md). ``shown``: per corner row, how surely it shows an index at all (1 -
    P(``NO_INDEX``), :meth:`CornerFusion.experts`); the read corners' mean is weighted by it.
    WHY: a corner under the hand reads "no index", which :func:`index_readings` spreads evenly
    over the codes; in a plain mean that near-uniform row halved the legible corner's weight,
    and a whole card misread under the same hand won (real webcam photos, RULE 36,
    models/HISTORY.md). Two legible corners, or one read alone, weigh as without it."""
    k = card.shape[-1]
    logp = np.log(np.maximum(card / max(card.sum(), 1e-12), 1e-12))
    corners = np.atleast_2d(corners)
    read = [i for i, row in enumerate(corners) if not np.isnan(row).any()]
    if read:
        rows = [corners[i] / max(corners[i].sum(), 1e-12) for i in read]
        weights = None if shown is None else np.asarray(shown, np.float64)[read]
        if weights is not None and weights.sum() <= 1e-9:
            weights = None  # no corner shows an index: each says nothing, alike
        logp = logp + np.average([np.log((1 - floor) * p + floor / k) for p in rows], axis=0,
                                 weights=weights)
    logp -= logp.max()
    out = np.exp(logp)
    return out / out.sum()


def _cut_across(quad: np.ndarray, shape: tuple[int, int]) -> bool:
    """Whether the card at ``quad`` runs off the photo on two opposite sides (a close-up that
    the card fills) and is not seen to end on a third: then neither index corner is in the
    photo (the quad's corners are the photo's, not the card's) and no border is there to
    white-balance by. Cut on three sides, its fourth edge is the card's, and so are the two
    corners there (:func:`complete_quad`)."""
    cut = cut_edges(np.asarray(order_portrait(quad), np.float64), shape)
    return sum(cut) != 3 and ((cut[0] and cut[2]) or (cut[1] and cut[3]))


@dataclass(frozen=True)
class _CornerPlan:
    """The cards at which one located card's corners are read (:meth:`CornerFusion.
    _read_cards`): their quads, per card the one corner to read (None: both), and the located
    card's white-balance gain (None: none)."""

    cards: list[np.ndarray]
    sides: list[int | None]
    gain: np.ndarray | None


@dataclass(frozen=True)
class CornerFusion:
    """The whole-card classifier, the strip network and the field's colour read together over a
    deck's ``codes`` (the codes both networks know).

    ``balance``: white-balance the corner patches by the card's border before the strip network
    reads them (it learned from renders under mild casts; real webcams tint more).
    ``colour``: multiply in the colour of the field as a pixel statistic
    (:mod:`vision.card_colour`). ``grows``: the larger cards a card running off a corner of
    the photo is also read as (:meth:`corner_probs`)."""

    strip: StripClassifier | StripEnsemble
    codes: tuple[str, ...]
    balance: bool = True
    colour: bool = True
    grows: tuple[float, ...] = CORNER_GROWS

    @classmethod
    def load(cls, card_classes: Sequence[str], allowed: Sequence[str] | None = None,
             path: str | Path = DEFAULT_STRIP_MODEL, balance: bool = True,
             colour: bool = True) -> CornerFusion:
        """The strip model at ``path`` over the codes it shares with the card classifier (and
        ``allowed``, the game's deck); an error if they share none (e.g. a standard deck)."""
        return cls.over(StripClassifier.load(path), card_classes, allowed, balance, colour)

    @classmethod
    def over(cls, strip: StripClassifier, card_classes: Sequence[str],
             allowed: Sequence[str] | None = None, balance: bool = True,
             colour: bool = True) -> CornerFusion:
        """:meth:`load` with a strip model already loaded (a table reader's). The shipped
        model's place is taken by the wide ones (:func:`single_card_strip`): one card's
        corners are read by them, a table's by the shipped one alone."""
        codes = tuple(c for c in card_classes if c in strip.classes and c != BACK
                      and (allowed is None or c in allowed))
        if not codes:
            raise StripClassifierError(
                "the corner reader knows only UNO faces: use it with --deck uno")
        return cls(single_card_strip(strip), codes, balance, colour)

    def corner_probs(self, image: np.ndarray, visible_quad: np.ndarray,
                     balance: bool | None = None, jitters: Sequence[Jitter] = (),
                     zoom: float = 1.0, anchored: bool = False) -> np.ndarray:
        """The strip network's probabilities (2, strip classes) for the two index corners of
        the card whose visible part is ``visible_quad`` (a NaN row: a corner not in the
        photo); ``balance`` overrides the instance's setting. With ``jitters`` each corner is
        also read at every jittered quad of the completed card, and its probabilities are
        the renormalised geometric mean of the readings inside the photo (WHY: as
        :func:`vision.single_card._read_jittered`; a corner patch is a small part of the card,
        so a quad off by 2-3% moves the index within it). Whether a corner is read is decided
        by the quad as located. A card cut by the photo's edge is completed upright
        (:func:`complete_quad`), one running off a corner of the photo also read at the larger
        cards of ``grows`` (:func:`grown_completion`); where none of those shows an index
        (:func:`shows_index`), also as the card lying the other way that holds what is seen
        (:func:`card_completions`). Each corner keeps its most legible reading
        (:func:`most_legible`). With ``zoom`` (:data:`CORNER_ZOOM`) each
        corner is also read from the completed card grown ``zoom`` times about that corner
        (its patch as much larger, anchored where it was). With ``anchored``, a card that
        fills the photo (:data:`FILLS_PHOTO`) is also read at the cards anchored at the
        photo's corners (:func:`anchored_cards`), each reading kept where it reads a code of
        the deck at :data:`ANCHOR_SURE` or more."""
        shape = image.shape[:2]
        across = _cut_across(visible_quad, shape)
        fills = anchored and photo_share(visible_quad, shape) >= FILLS_PHOTO
        best = np.full((2, len(self.strip.classes)), np.nan)
        if across and not fills:
            return best
        gain = None
        if self.balance if balance is None else balance:
            gain = border_gain(rectify(image, order_portrait(visible_quad), (100, 150)))
        if not across:
            best = self._cards_corners(image, [visible_quad], [gain], jitters, zoom)[0]
        if fills:
            cards, sides = anchored_cards(shape)
            more = self._read_cards(image, cards, sides, [gain] * len(cards), ())
            codes = [list(self.strip.classes).index(c) for c in self.codes]
            sure = np.nan_to_num(more[..., codes]).max(axis=-1) >= ANCHOR_SURE
            more[~sure] = np.nan
            best = most_legible(np.concatenate([best[None], more]), self.strip.classes)
        return best

    def _cards_corners(self, image: np.ndarray, visible_quads: Sequence[np.ndarray],
                       gains: Sequence[np.ndarray | None], jitters: Sequence[Jitter],
                       zoom: float) -> list[np.ndarray]:
        """:meth:`corner_probs` of each card itself (its completions, grown and zoomed cards),
        white-balanced by its gain, for cards not cut across (:func:`_cut_across`); every
        card's readings in one network call, and those that show no index read the other way
        round in a second.

        WHY together: a photo of one UNO card reads a dozen proposals' corners to choose
        among them (RULE 81), and a call per proposal cost more than its patches."""
        shape = image.shape[:2]
        plans: list[_CornerPlan] = []
        flipped: list[_CornerPlan | None] = []  # a card's completions the other way round
        for visible_quad, gain in zip(visible_quads, gains, strict=True):
            upright, *other_way = card_completions(visible_quad, shape)
            cards = [upright]
            cards += [q for g in self.grows
                      if (q := grown_completion(visible_quad, shape, g)) is not None]
            sides: list[int | None] = [None] * len(cards)  # a card read for one corner only
            hidden = hidden_completions(visible_quad)
            cards += hidden
            sides += [0] * len(hidden)
            if zoom != 1.0:
                done = np.asarray(order_portrait(upright), np.float64)
                for side, corner in ((0, done[0]), (1, done[2])):
                    cards.append((corner + zoom * (done - corner)).astype(np.float32))
                    sides.append(side)
            plans.append(_CornerPlan(cards, sides, gain))
            flipped.append(_CornerPlan(other_way, [None] * len(other_way), gain)
                           if other_way else None)
        readings = self._read_plans(image, plans, jitters)
        best = [most_legible(r, self.strip.classes) for r in readings]
        again = [i for i, b in enumerate(best)
                 if flipped[i] is not None and not shows_index(b, self.strip.classes)]
        more = self._read_plans(image, [p for i in again if (p := flipped[i])], jitters)
        for i, m in zip(again, more, strict=True):
            best[i] = most_legible(np.concatenate([readings[i], m]), self.strip.classes)
        return best

    def _read_plans(self, image: np.ndarray, plans: Sequence[_CornerPlan],
                    jitters: Sequence[Jitter]) -> list[np.ndarray]:
        """Each plan's (G, 2, C) readings (:meth:`_read_cards`), every plan's cards in one
        network call."""
        if not plans:
            return []
        flat = self._read_cards(image, [c for p in plans for c in p.cards],
                                [s for p in plans for s in p.sides],
                                [p.gain for p in plans for _ in p.cards], jitters)
        return np.split(flat, np.cumsum([len(p.cards) for p in plans])[:-1])

    def _read_cards(self, image: np.ndarray, cards: Sequence[np.ndarray],
                    sides: Sequence[int | None], gains: Sequence[np.ndarray | None],
                    jitters: Sequence[Jitter]) -> np.ndarray:
        """(G, 2, C): the two corners of each of ``cards`` (a card of ``sides`` not None read
        at that corner only; white-balanced by its ``gains``, None: not), each the mean over
        its ``jitters`` (:func:`_jittered_mean`); every card at every jitter in one network
        call."""
        ways = [[q, *jittered_quads(q, jitters)] for q in map(order_portrait, cards)]
        probs = read_corners(self.strip, image, [w for card in ways for w in card],
                             [g for card, g in zip(ways, gains, strict=True) for _ in card],
                             [side for card, side in zip(ways, sides, strict=True)
                              for _ in card])
        readings = probs.reshape(len(ways), len(ways[0]), *probs.shape[1:])
        return np.stack([_jittered_mean(r) for r in readings])

    def experts(self, image: np.ndarray, visible_quad: np.ndarray, card_probs: np.ndarray,
                card_classes: Sequence[str], adapter: object | None = None,
                balance: bool | None = None, jitters: Sequence[Jitter] = (),
                zoom: float = 1.0, anchored: bool = False) -> dict[str, np.ndarray]:
        """The experts :meth:`read` fuses, over ``codes``: ``card`` (the whole-card
        probabilities ``card_probs``, over ``card_classes``, renormalised) and ``corners`` (the
        two index corners' readings, top-left and bottom-right; a NaN row is a corner not
        read) and ``shown`` (how surely each corner shows an index, :func:`fuse`).
        ``adapter`` (an enrolled :class:`vision.enrol.DeckProfile`) adapts the corner readings
        to the user's deck as it adapted ``card_probs``; ``balance`` overrides the instance's
        white balance setting; ``jitters``, ``zoom`` and ``anchored``: see
        :meth:`corner_probs`."""
        probs = self.corner_probs(image, visible_quad, balance, jitters, zoom, anchored)
        return self._experts_of(probs, card_probs, card_classes, adapter)

    def _experts_of(self, probs: np.ndarray, card_probs: np.ndarray,
                    card_classes: Sequence[str], adapter: object | None
                    ) -> dict[str, np.ndarray]:
        """:meth:`experts` from the corners' strip probabilities ``probs`` (2, strip classes)."""
        classes = list(card_classes)
        card = np.array([card_probs[classes.index(c)] for c in self.codes], np.float64)
        if adapter is not None:
            probs = adapter.adapt_corners(  # type: ignore[attr-defined]
                probs, self.strip.classes, self.strip.digest)
        return {"card": card / max(card.sum(), 1e-12),
                "corners": index_readings(probs, self.strip.classes, self.codes),
                "shown": index_shown(probs, self.strip.classes)}

    def read_many(self, image: np.ndarray, visible_quads: Sequence[np.ndarray],
                  card_probs: Sequence[np.ndarray], card_classes: Sequence[str],
                  adapter: object | None = None, balance: bool | None = None
                  ) -> list[np.ndarray]:
        """Fused probabilities over ``codes`` for each of several cards in one image, whose
        visible parts are ``visible_quads`` (image px): each card's :meth:`experts` (no
        jitters, zoom or anchored cards), fused, with every card's corners read in one network
        call (:meth:`_cards_corners`)."""
        shape = image.shape[:2]
        use = self.balance if balance is None else balance
        probs = [np.full((2, len(self.strip.classes)), np.nan) for _ in visible_quads]
        todo = [i for i, q in enumerate(visible_quads) if not _cut_across(q, shape)]
        gains = [border_gain(rectify(image, order_portrait(visible_quads[i]), (100, 150)))
                 if use else None for i in todo]
        if todo:
            done = self._cards_corners(image, [visible_quads[i] for i in todo], gains, (), 1.0)
            for i, best in zip(todo, done, strict=True):
                probs[i] = best
        out = []
        for corner, card in zip(probs, card_probs, strict=True):
            e = self._experts_of(corner, card, card_classes, adapter)
            out.append(fuse(e["card"], e["corners"], shown=e["shown"]))
        return out

    def colour_expert(self, image: np.ndarray, visible_quad: np.ndarray) -> np.ndarray:
        """The field colour's weights over ``codes`` (:func:`vision.card_colour.colour_weights`)
        for the card whose visible part is ``visible_quad``; all ones when ``colour`` is off."""
        if not self.colour or _cut_across(visible_quad, image.shape[:2]):
            return np.ones(len(self.codes))
        crop = rectify(image, order_portrait(visible_quad), (100, 150))
        return colour_weights(crop, self.codes)
