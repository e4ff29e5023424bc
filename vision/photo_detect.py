"""Standard cards in photos without the mat: whole card outlines read at their index corners,
then corner indices found, read and paired into cards where no outline was found.

WHY two sources: in a phone or webcam photo of standard cards there is no mat to rectify by;
cards lie at any angle, overlap, are held in a hand or cut off by the frame. Where a card's
whole outline is visible (:mod:`vision.photo_cards`), it fixes where the printed index must be
(top-left, and bottom-right turned 180°, on every standard card), so both indices are cut out
at a known place and size and read together (:func:`read_quad`), and the outline itself is the
card's quad: it holds both indices however small they are. Where no outline is found (a card
cut off by the frame, one lying on another, one held in a hand), the index spotter
(:mod:`vision.index_spotter`) finds every printed index (and face-down cards), the same corner
classifier reads each one (:data:`CORNER_CLASSES`, with a ``none`` class for whatever is no
index), and indices of one code close enough to belong to one card become one detection. A
face-down card (``BACK``) is an outline with no index that passes the tests of
:func:`face_down`, or the spotter's; a joker (``JK``) is an outline whose two ends read the word
"Joker" (:meth:`PhotoReader.jokers`). The networks (spotter, rank and suit readers) are trained
by :mod:`vision.train.corners` (``cardtable train --corners``) and run on onnxruntime only.

What the quad means here: a card's outline when it was found whole; otherwise the oriented
rectangle around its visible indices (a card showing one index gets a quad around that index).
Box and quad are in pixels of the original image.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from protocol_runner.cards import BACK, standard_faces
from vision.photo_cards import MIN_SIDES
from vision.pip_suits import fuse_suits

MODELS = Path(__file__).resolve().parent.parent / "models"
DEFAULT_CLASSIFIER = MODELS / "corner_classifier.json"
NONE = "none"
CORNER_CLASSES: tuple[str, ...] = tuple(sorted({c.code for c in standard_faces()} | {NONE}))
CORNER_SIZE = 48
"""Side of the square corner crop (the classifier's input is resized from it)."""
CORNER_MARGIN = 1.25
"""The crop is this many times the index box's longer side: a little of the card around it."""
NEUTRAL = 1.0 / (len(CORNER_CLASSES) - 1)
"""What a corner read as ``none`` says about each code: nothing (a uniform share)."""
OUTLINE_GROW = 1.15
"""A card's quad is its outline grown by this factor about its centre: an outline found may be a
court card's inner frame, whose indices lie just outside it (on the training split this
halved the false cards and found a few more)."""
WHOLE_WEIGHT = 0.5
"""Exponent of the whole-card classifier's probabilities in the product with the corners'
(it was trained on renders of other printings, so it is a weaker witness than the corners)."""
MIN_INDEX = 0.8
"""Least index content of an outline's two corners (2 − P₁(none) − P₂(none)) to be a card."""
AGREE = 0.8
"""Least probability (over the codes) with which each of an outline's two index corners must
read the same code for the outline to be that card below ``min_card_confidence``
(:func:`corners_agree`; on the training split 0.8 found 12 more cards and no more false ones,
0.75 found 4 more and 2 more false ones)."""
BACK_MIN = 0.05
"""Least probability of ``BACK`` by the whole-card classifier for an outline with no index.
Chosen on the training split for the shipped (retrained) classifier, which gives this deck's
plain black backs less ``BACK`` than its predecessor did: 0.1, 0.08, 0.06, 0.05, 0.04, 0.02
found 6, 8, 8, 8, 8, 9 of its 39 backs, with 0, 0, 0, 0, 0, 1 false backs."""
BACK_MAX_INDEX = 0.5
"""Most index content any of a face-down card's four corner crops may show (1 − P(none))."""
BACK_SIZE = 0.6
"""A face-down card's outline is between this and its inverse times the median area of the
face-up cards' outlines in the same photo (a fragment of a face or table is smaller or larger)."""
BACK_EDGE = 0.1
"""Least :func:`vision.photo_cards.edge_contrast` of a face-down card's outline."""
PLAIN_STD = 12.0
"""Most standard deviation of grey (0-255) inside a plain face-down card (:func:`plain_backs`),
its rectified middle (:data:`PLAIN_VIEW`, a tenth in from each side). Chosen with
:data:`PLAIN_EDGE`, :data:`PLAIN_ASPECT` and :data:`PLAIN_AREA` on the training split's 3,698
outlines with no index (24 of them on its 39 labelled backs, 19 of those in the validation
groups): standard deviation 8 to 25, edge 0.1 / 0.15 / 0.2, aspect up to 1.8 / 1.9 / 2.6, with
or without a dark middle. At 12, 0.15 and 2.6 the tests keep 11 of the validation groups' 19
backs and 3 of the other 5, with 2 outlines off any back (dark patches of one desk); a lower
edge or a higher deviation kept more such patches (16: 12 and 3 backs, 4 patches; 20: 13 and
3, 7), a deviation of 8 the same backs and 1 patch. The whole reader on the training split
found the same at 8 as at 12 (155 and 1,030, 2 and 15 false); 12 was kept for its margin over
the backs' own deviation, 1.9-7.2 but for two backs lit unevenly at 15.5 and 18.9 (the other
outlines' median is 18)."""
PLAIN_EDGE = 0.25
"""Least :func:`vision.photo_cards.edge_contrast` of a plain face-down card: a card lying on
the table. It was 0.15 for the contrast of bands touching the outline (on the training split
the backs' outlines' median 0.24; other outlines' 95th percentile 0.13); measured across
:data:`vision.photo_cards.RIM_GAP` since the eightieth session (RULE 84), both contrasts run
higher, and on the training split 0.15 / 0.2 / 0.25 / 0.3 found 1,232 / 1,232 / 1,231 / 1,230
of its 1,414 labels with 21 / 18 / 17 / 17 false cards (1,229 and 17 before): the most found
with no more false cards."""
PLAIN_ASPECT = 1 / MIN_SIDES
"""Most long side over short side of a plain face-down card's outline (1 / 0.35 = 2.86 since
the eighty-first session's RULE 88, as thin as the outline finder now goes; 2.6 before, for the
reasons that follow, measured then): a standard card is 1.4, but
the shared photos are stretched to 640 × 640 and taken at a slant, and single backs there
measure up to 2.5. On the training split the whole photo reader found 150, 153, 154, 155 of
the validation groups' 215 labels without the plain-back test and with it at a longest
aspect of 1.8, 2.2, 2.6, with 2 false cards each time, and the rest of the split 1,030 of
1,199 with 15 false every time. No least aspect (sixty-seventh session, RULE 71; it was 1.25):
a card seen at a slant is foreshortened along the line of sight, so its outline can be as
square as 1.0 (1.4 × cos 45°), and a 3:4 photo squeezed to 1:1 makes an upright card 1.05
long; on the training split dropping it found the same 1,226 labels with 16 false cards
against 15."""
PLAIN_AREA = 0.008
"""Least share of the photo a plain face-down card covers (the training split's backs cover
1.1-9.8%; the median outline with no index 0.8%: specks and pips)."""
PLAIN_VIEW = (100, 140)
"""(w, h) px a plain face-down card's outline is rectified to for :data:`PLAIN_STD`."""
PLAIN_CONFIDENCE = 0.9
"""The confidence of a plain face-down card: of the outlines the tests keep on the training
split, 14 of 16 lie on a labelled back."""
PLAIN_SIZE = 0.45
"""A plain face-down card's outline is between this and its inverse times the median area of the
face-up cards' outlines (:data:`BACK_SIZE` for the others). WHY looser: in a phone photo taken
at a slant a card near the camera covers twice the area of one far from it, and a plain card
already shows what a card is (one colour, a strong edge, a card's shape). Chosen on the
training split (RULE 91, models/HISTORY.md): 0.6 / 0.5 / 0.45 / 0.4 found 18 / 19 / 20 / 20 of
its 39 face-down cards with 17 false cards each."""
OUTLINE_CODES = frozenset(c.code for c in standard_faces()) - {"JK"}
"""The codes an outline's index corners may be read as: the 52 faces, not the joker. WHY: the
reader learned ``JK`` only from the labelled word "Joker" (this deck prints moons and stars in
a joker's corners, and its outline crops were labelled ``none``), so an outline whose index
corners read ``JK`` shows something else there: on the training split both such outlines were
false cards (a desk, an 8 of hearts held up to a webcam). A joker's outline is found by its
word instead (:meth:`PhotoReader.jokers`); the spotter's jokers, read from the word, stay."""
JOKER_MIN = 0.9
"""Least probability of ``JK`` with which the corner reader must read the word squares at both
ends of an outline (:func:`vision.photo_cards.word_squares`) for it to be a joker
(:meth:`PhotoReader.jokers`). Chosen on the training split: 0.6 / 0.7 / 0.8 / 0.9 / 0.95 /
0.98 all found 21 of its 46 jokers (3 before), with 1 / 1 / 0 / 0 / 0 / 0 false jokers."""
GREY_SPREAD = 8
"""A photo is greyscale (:func:`greyscale`) when no pixel's three channels differ by more than
this (of 255): JPEG rounding of a grey picture leaves at most 3; the least colourful colour
photo of the training split has 13."""
GREY_CONFIDENCE = 0.995
"""Least code probability of an outline in a greyscale photo (instead of ``min_card_confidence``;
two agreeing corners, :func:`corners_agree`, still suffice). WHY: the corner, whole-card and
pip readers learned a suit's colour along with its shape, from colour photos and renders; in a
photo with no colour at all half that evidence is missing, and their confidence is too high
for what is left. On the training split (99 greyscale photos, one photo session, none in its
validation groups) 0.98 / 0.99 / 0.995 / 0.999 kept 115 / 115 / 115 / 109 of their 199 labels
found, with 7 / 4 / 2 / 2 false cards (KD read KS, JS read JH, JS read JC, 6S read QS, a 4C
of no label). In those photos the band 0.98-0.995 held 5 false outlines and 3 right ones,
all 3 with agreeing corners; in the colour photos the same band holds 26 right and 3 false.
Found since (fourteenth session, models/HISTORY.md): the "JS read JC" is a jack of clubs
labelled JS, a label error; the bound has not been chosen again."""
PIP_FLOOR = 0.005
"""Floor of the pip reader's suit (:mod:`vision.pip_suits`) in an outline read as a number
card (:func:`vision.pip_suits.fuse_suits`: it moves probability only between the two suits of
one colour of one rank; 1 leaves the reading as it is). WHY: the corner index's suit is a few
pixels tall, and spade and club are its commonest confusion (2S, 3S, QS found on none of the
training split's photos); an outline's pips are many and large. Chosen on the training split
(models/HISTORY.md): floors 0.05, 0.02, 0.01, 0.005, 0.002 found 700, 710, 712, 718, 720 of its
1,414 labels (none 676), false 15, 15, 15, 13, 13 — lower than the 0.02 of the table reader:
the photos' outlines are larger and sharper than a table's 70 × 100 px cards."""
PIP_COURT_FLOOR = 0.1
"""The same for a court card (J, Q, K: two large pips beside a picture whose pieces may pass
for pips): on the training split 0.1 found 5 more than 1 (untouched), 0.2 3 more, no more
false (with :data:`PIP_FLOOR` 0.005)."""
PAIR_REACH = 9.0
"""Two indices of one code pair into one card when their centres are at most this many index
sizes apart (a card is about 5-8 index heights long along its diagonal)."""
SPOT_GROW = 1.3
"""An index found by the spotter is read in a square this many times its size (√(w·h)): about
the longer side of an index's box, which is what the reader's crops are cut around."""
PAIR_JOINT = 0.95
"""Least joint probability of a code for two of the spotter's indices within :data:`PAIR_REACH`
of each other to be that card (:meth:`PhotoReader.cards`): the product of their two readings
(:func:`joint_reading`, as an outline's two corners are combined by :func:`read_quad`). WHY a
product: a card's two indices are two independent readings, and two unsure readings of one code
(0.98 and 0.66; 0.94 and 0.53) are strong evidence together. The earlier rule asked each to
reach 0.7 on its own. Chosen on the training split (models/HISTORY.md): 0.8 / 0.9 / 0.95 / 0.98
found 150 / 150 / 150 / 148 of the validation groups' 215 labels (142 before) with 4 / 2 / 2 /
2 false cards (2 before), and 1,045 / 1,036 / 1,030 / 1,023 of the rest's 1,199 (1,003) with
17 / 16 / 15 / 14 false ones (13)."""
PAIR_EACH = 0.3
"""Least probability each of the two paired indices gives the pair's code: an index read as
another code outright is not outvoted by a sure partner (at :data:`PAIR_JOINT` 0.95, 0.1
found 2 more validation labels and 4 more on the rest of the split for 1 more false card in
each; 0.5 found 10 fewer on the rest)."""
SPOT_SCORE = 0.3
"""Least heat of the spotter's peak for an index to be read (``min_score``)."""
INDEX_ALONE = 0.98
"""Least probability of an index's code for it to be a card on its own (``min_confidence``)."""
TURN_SURE = 0.9
"""Least probability of ``none`` (no index) at which the reader takes a crop's first reading
(as cut) for its reading, instead of reading it at every quarter turn
(:meth:`CornerClassifier._read`). Chosen on the training split: of the 6,156 outline index
crops of every fourth training photo, 71% read ``none`` at 0.9 or more at the first turn and
none of them read otherwise at four turns (at 0.8: 81%, one did); the whole photo reader on the
557 training photos then gave the same codes in every photo, confidences within 3e-4, and
median CPU per photo 281 → 196 ms (two runs side by side)."""
SPOT_BACK = 0.5
"""Least heat of the spotter's face-down peak for a ``BACK`` (``back_score``).

The spotter's thresholds were chosen on the training split (models/HISTORY.md), first on its
validation groups (39 photos, 215 labels, never trained on): heat 0.2 / 0.3 / 0.5, alone 0.8 /
0.9 / 0.95 / 0.98, pairs (each index of one code, the rule before :data:`PAIR_JOINT`) 0.5 / 0.7
/ 0.85 found 120-154 labels with 3-15 false cards; from 0.3 / 0.95 / 0.7 on, no false card
beyond the outlines' 3. On the rest of the split (1,199 labels)
alone 0.95 → 0.98 found 13 fewer with 7 fewer false cards (27 → 20), 0.995 26 fewer still for
3 fewer false. Backs: 0.2 found 5 of the split's face-down cards with 12 false ones, 0.5 found
2 with none."""


class PhotoModelError(ValueError):
    """A corner model that cannot be loaded (the message says how to build one)."""


class PhotoImageError(ValueError):
    """An image the photo reader cannot read (not a BGR picture, or too small)."""


class PhotoStopped(Exception):
    """A reading given up at its next checkpoint because its caller set the ``stop`` event:
    the answer is no longer needed (:func:`vision.still_detect.detect_with_photo_fallback`)."""


_STOP: ContextVar[threading.Event | None] = ContextVar("photo_stop", default=None)
"""The ``stop`` event of the :meth:`PhotoReader.detect` running in this thread, if any: a
context variable so that the stages deep inside it can give up without passing it along."""


def _go_on() -> None:
    """Raise :class:`PhotoStopped` when this thread's reading was asked to stop."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise PhotoStopped("the photo reading was stopped")


def corner_crop(image: np.ndarray, box: Sequence[float], angle: float = 0.0,
                mirror: bool = False) -> np.ndarray:
    """The square around a corner box (``CORNER_MARGIN`` × its longer side), ``CORNER_SIZE`` px;
    for training, turned by ``angle`` degrees about the box's centre and mirrored.

    Sampled at the image's own resolution first, then resized, so a large index is averaged
    (not aliased) and a small one is not sharpened beyond what the camera saw."""
    x0, y0, x1, y1 = (float(v) for v in box)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half = max(x1 - x0, y1 - y0, 4.0) * CORNER_MARGIN / 2
    side = max(8, int(round(2 * half)))
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    src = np.float32([[cx + half * (c * u - s * v), cy + half * (s * u + c * v)]
                      for u, v in ((-1, -1), (1, -1), (-1, 1))])
    dst = np.float32([[side, 0], [0, 0], [side, side]] if mirror
                     else [[0, 0], [side, 0], [0, side]])
    native = cv2.warpAffine(image, cv2.getAffineTransform(src, dst), (side, side),
                            flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    interp = cv2.INTER_AREA if side > CORNER_SIZE else cv2.INTER_LINEAR
    return cv2.resize(native, (CORNER_SIZE, CORNER_SIZE), interpolation=interp)


def _session(path: Path, threads: int) -> Any:
    from vision.classifier import cpu_session

    if not path.is_file():
        raise PhotoModelError(f"{path}: no corner model here; build it with "
                              "`cardtable train --corners` (needs the [train] extra)")
    return cpu_session(path, threads)


@dataclass(frozen=True, slots=True)
class Corner:
    """One index or face-down card found by the spotter (``kind`` ``index`` or ``back``, with
    the height of its peak): its box, class probabilities once read."""

    box: np.ndarray
    score: float
    kind: str
    probs: np.ndarray | None = None


def part_of(code: str, part: str) -> str | None:
    """The label of ``code`` that a factor network reads: ``rank`` (``JK`` and ``none`` are
    their own rank), ``suit`` (none for ``JK`` and ``none``) or the whole ``code``."""
    if part == "code":
        return code
    whole = code in ("JK", NONE)
    if part == "rank":
        return code if whole else code[:-1]
    if part == "suit":
        return None if whole else code[-1]
    raise PhotoModelError(f"unknown classifier part {part!r}: use code, rank or suit")


@dataclass(frozen=True, slots=True)
class Factor:
    """One factor of the corner classifier: output ``output`` of a network reads ``part`` of
    the code over ``classes`` (the rank and the suit share one network and its trunk)."""

    session: Any
    part: str
    classes: tuple[str, ...]
    temperature: float = 1.0
    output: int = 0


@dataclass
class CornerClassifier:
    """Corner crops (``CORNER_SIZE`` px, BGR) in, calibrated probabilities over ``classes``.

    WHY factors: with a few dozen real crops per card, one network over 53 codes learns the
    photos, not the glyphs. A *rank* network (every suit's crops teach it the rank) and a
    *suit* network (every rank's crops teach it the suit) each see four to thirteen times more
    examples per class; P(code) = P(rank) · P(suit), and ``JK`` / ``none`` take their rank
    probability. The JSON beside the models (``corner_classifier.json``) lists the factors."""

    factors: tuple[Factor, ...]
    classes: tuple[str, ...]
    size: int
    meta: dict[str, Any]
    turns: int = 4
    sure: float = TURN_SURE

    @classmethod
    def load(cls, path: str | Path | None = None, threads: int = 1) -> CornerClassifier:
        """The classifier described by the JSON at ``path`` (default models/)."""
        path = Path(path or DEFAULT_CLASSIFIER)
        if not path.is_file():
            raise PhotoModelError(f"{path}: no corner classifier here; build it with "
                                  "`cardtable train --corners` (needs the [train] extra)")
        try:
            meta = json.loads(path.read_text())
            sessions = {name: _session(path.parent / name, threads)
                        for name in {f["model"] for f in meta["factors"]}}
            factors = tuple(
                Factor(sessions[f["model"]], f["part"], tuple(f["classes"]),
                       float(f.get("temperature", 1.0)), int(f.get("output", 0)))
                for f in meta["factors"])
            classes, size = tuple(meta["classes"]), int(meta["input_size"])
            turns = int(meta.get("turns", 4))
        except PhotoModelError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise PhotoModelError(f"{path}: not a corner classifier description ({exc}); "
                                  "rebuild with `cardtable train --corners`") from exc
        return cls(factors, classes, size, meta, turns)

    def factor_probs(self, factor: Factor, crops: Sequence[np.ndarray]) -> np.ndarray:
        """(N, len(factor.classes)) probabilities of one factor (:meth:`_read`)."""
        return self._read((factor,), crops)[0]

    def all_factor_probs(self, crops: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Each factor's (N, len(classes)) probabilities, each network run once per turn read
        (:meth:`_read`)."""
        return self._read(self.factors, crops)

    def classify(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        """(N, len(classes)) probabilities: the factors' probabilities of each code's parts,
        multiplied."""
        if not len(crops):
            return np.ones((0, len(self.classes)), np.float32)
        return self.codes(self.all_factor_probs(crops)).astype(np.float32)

    def codes(self, probs: Sequence[np.ndarray]) -> np.ndarray:
        """(N, len(classes)) code probabilities of the factors' ``probs`` (in the order of
        ``factors``): each code's parts multiplied, normalised."""
        out = np.ones((len(probs[0]), len(self.classes)), np.float64)
        for f, p in zip(self.factors, probs, strict=True):
            index = {c: k for k, c in enumerate(f.classes)}
            for j, code in enumerate(self.classes):
                label = part_of(code, f.part)
                if label is not None:
                    out[:, j] *= p[:, index[label]] if label in index else 0.0
        return out / np.maximum(out.sum(1, keepdims=True), 1e-12)

    def _read(self, factors: Sequence[Factor], crops: Sequence[np.ndarray]
              ) -> list[np.ndarray]:
        """Each of ``factors``' (N, len(classes)) probabilities of ``crops``: every crop read
        as it is cut, and each crop not read as ``none`` at :attr:`sure` or more (by the factor
        of those networks that reads ``none``) read again at the other quarter turns
        (``turns``: 4 for networks trained on every orientation, 1 for networks trained on
        crops as they are cut), its log-probabilities averaged over every turn read.

        WHY: reading every crop at four turns was most of a photo's time, and most crops are
        an outline's corner with no index, read as such at the first turn (see
        :data:`TURN_SURE`). WHY only those: an index read at one turn is surer than at four
        (the turns are the check on it), and outlines read so gave more false cards."""
        n = len(crops)
        if not n:
            return [np.zeros((0, len(f.classes))) for f in factors]
        upright = [cv2.resize(c, (self.size, self.size), interpolation=cv2.INTER_LINEAR)
                   for c in crops]
        sessions = {id(f.session): f.session for f in factors}
        total = {k: [_log(o) for o in _infer(s, upright)] for k, s in sessions.items()}
        count = np.ones((n, 1))
        if self.turns > 1:
            again = np.arange(n)
            judge = next((f for f in self.factors if id(f.session) in sessions
                          and part_of(NONE, f.part) in f.classes), None)
            if judge is not None:
                first = self._calibrated(judge, total[id(judge.session)][judge.output])
                blank = first[:, judge.classes.index(part_of(NONE, judge.part))]
                again = np.flatnonzero(blank < self.sure)
            if len(again):
                _go_on()
                turned = [np.rot90(upright[i], k) for i in again for k in range(1, self.turns)]
                for key, s in sessions.items():
                    for t, o in zip(total[key], _infer(s, turned), strict=True):
                        t[again] += _log(o).reshape(len(again), self.turns - 1, -1).sum(1)
                count[again] = self.turns
        return [self._calibrated(f, total[id(f.session)][f.output] / count) for f in factors]

    @staticmethod
    def _calibrated(factor: Factor, logp: np.ndarray) -> np.ndarray:
        """Probabilities of mean log-probabilities, at the factor's temperature."""
        z = logp / factor.temperature
        p = np.exp(z - z.max(1, keepdims=True))
        return p / p.sum(1, keepdims=True)


def _log(p: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(p, np.float64), 1e-12))


def reader_input(crops: Sequence[np.ndarray]) -> np.ndarray:
    """The corner networks' input of square BGR crops of their input size: (N, 3, S, S) RGB
    in [0, 1]. (The 8-bit reader's ranges are measured on this input: ``quantize_reader``.)"""
    x = np.stack([cv2.cvtColor(np.ascontiguousarray(c), cv2.COLOR_BGR2RGB) for c in crops])
    return np.ascontiguousarray(x.astype(np.float32).transpose(0, 3, 1, 2) / 255)


def _infer(session: Any, crops: Sequence[np.ndarray]) -> list[np.ndarray]:
    """A network's outputs for square BGR crops of its input size."""
    return session.run(None, {session.get_inputs()[0].name: reader_input(crops)})


@dataclass
class PhotoReader:
    """Images in, card detections out: card outlines read at their index corners (with the
    whole-card classifier ``cards_model`` as a second witness and the pip-suit reader ``pips``
    as a third for the suit, when there are), then the spotter's indices read and paired where
    no outline was accepted.

    ``min_card_confidence`` is the least probability of a card outline's code, ``min_score`` the
    spotter's least peak for an index, ``back_score`` for a face-down card, ``min_confidence``
    the least classifier probability of an index's code on its own (below it an index counts
    only paired with another index near it, their joint reading at least ``min_joint`` and each
    giving that code at least ``min_each``). The defaults were chosen on the
    *training* split's photos (models/HISTORY.md), favouring few false cards over many found
    ones: a false card stops a game, a missed one only waits for the next frame."""

    classifier: CornerClassifier
    spotter: Any = None
    min_score: float = SPOT_SCORE
    min_confidence: float = INDEX_ALONE
    back_score: float = SPOT_BACK
    min_card_confidence: float = 0.98
    min_joint: float = PAIR_JOINT
    min_each: float = PAIR_EACH
    cards_model: Any = None
    pips: Any = None
    pip_floor: float = PIP_FLOOR
    pip_court_floor: float = PIP_COURT_FLOOR

    @classmethod
    def load(cls, classifier: str | Path | None = None, spotter: str | Path | None = None,
             threads: int = 1, cards: Any = None) -> PhotoReader:
        """The reader of the models in models/ (or those given); ``cards``: a whole-card
        classifier already loaded (a :class:`vision.classifier.CardClassifier`), else the
        default one is."""
        from vision.classifier import DEFAULT_MODEL, CardClassifier
        from vision.index_spotter import IndexSpotter, SpotterError
        from vision.pip_suits import DEFAULT_PIP_MODEL, PipSuitReader

        clf = CornerClassifier.load(classifier, threads)
        try:
            spots = IndexSpotter.load(spotter, threads)
        except SpotterError as exc:
            raise PhotoModelError(str(exc)) from exc
        if cards is None and DEFAULT_MODEL.is_file():
            cards = CardClassifier.load(DEFAULT_MODEL, threads)
        pips = PipSuitReader.load() if DEFAULT_PIP_MODEL.is_file() else None
        return cls(clf, spots, cards_model=cards, pips=pips)

    @property
    def classes(self) -> tuple[str, ...]:
        return self.classifier.classes

    # -------------------------------------------------------------------- stage 1: spotter

    def spot(self, image: np.ndarray) -> list[Corner]:
        """Indices and face-down cards found by the index spotter (:mod:`vision.index_spotter`),
        as corners to be read; an index's box is the square of its size grown by
        :data:`SPOT_GROW` (the spotter sizes an index by √(w·h), the reader's crops are cut
        around the longer side)."""
        out = []
        for s in self.spotter.spots(image, least=min(self.min_score, self.back_score)):
            box = s.box
            if s.kind == "index":
                c, half = (box[:2] + box[2:]) / 2, (box[2] - box[0]) / 2 * SPOT_GROW
                box = np.float32([c[0] - half, c[1] - half, c[0] + half, c[1] + half])
            out.append(Corner(box, s.score, s.kind))
        return out

    # -------------------------------------------------------------------- stage 2: classifier

    def read_corners(self, image: np.ndarray, corners: Sequence[Corner]) -> list[Corner]:
        """Each index with its class probabilities (face-down cards pass through)."""
        idx = [c for c in corners if c.kind != "back"]
        probs = self.classifier.classify([corner_crop(image, c.box) for c in idx])
        read = [Corner(c.box, c.score, c.kind, pr.astype(np.float32))
                for c, pr in zip(idx, probs, strict=True)]
        return read + [c for c in corners if c.kind == "back"]

    # -------------------------------------------------------------------- stage 3: cards

    def detect(self, image: np.ndarray, stop: threading.Event | None = None) -> list[Any]:
        """Every card in ``image`` as :class:`vision.recognise.Detection`, by confidence: the
        card outlines that read as a card (:meth:`read_outlines`), then the cards of the
        spotter's indices (:meth:`spot`) that lie in none of them (a card cut off by the frame,
        one on top of another, one held in a hand), a card seen twice made one
        (:func:`one_per_code`). Once ``stop`` is set it raises :class:`PhotoStopped` at its
        next checkpoint (between its stages and before its longer steps).

        WHY the spotter runs in a second thread beside the outlines: it needs only the image,
        and in ``cardtable detect`` the UNO check beside this reading ends first and leaves a
        core idle (interleaved A/B, models/HISTORY.md: standard photos 0.04-0.08 s faster at the
        median)."""
        return self.cards_and_indices(image, stop)[0]

    def cards_and_indices(self, image: np.ndarray, stop: threading.Event | None = None
                          ) -> tuple[list[Any], list[Corner]]:
        """:meth:`detect`'s cards, and the spotter's indices and face-down peaks that lie in
        no card outline read, with their readings: what :meth:`located` weighs as witnesses
        where no card was found, so that the spotter need not run twice. A card's quad takes
        in those of its own indices that lie just outside it (:func:`take_in_indices`)."""
        if image is None or getattr(image, "ndim", 0) != 3 or image.shape[2] != 3 \
                or min(image.shape[:2]) < 16:
            raise PhotoImageError("expected a BGR image (H, W, 3) of at least 16x16 pixels, "
                                  f"got {getattr(image, 'shape', type(image).__name__)}")
        token = _STOP.set(stop)
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="index-spotter") as pool:
                spots = pool.submit(self.spot, image)
                whole, blank = self.read_outlines(image)
                _go_on()
                rest = [c for c in spots.result()
                        if not any(_contains(d.quad, _centre(c.box)) for d in whole)]
            _go_on()
            read = self.read_corners(image, rest)
            found = one_per_code(whole + self.cards(read))
            found = take_in_indices(found, read, self.classes, self.min_each, self.min_score)
            return one_per_code(found + self.faint_backs(image, found, read, blank)), read
        finally:
            _STOP.reset(token)

    def faint_backs(self, image: np.ndarray, found: Sequence[Any], corners: Sequence[Corner],
                    blank: Sequence[np.ndarray]) -> list[Any]:
        """Plain face-down cards, in a photo where cards were ``found``, where a faint
        face-down peak of the spotter (``corners`` of kind ``back`` at ``min_score`` or more,
        in none of the cards found: under ``back_score``) lies inside one of the whole outlines
        with no index, ``blank`` (:meth:`read_outlines`, wholly in view or cut by the frame),
        that is of one colour inside (:data:`PLAIN_STD`), overlaps no card found and is sized
        like the face-up ones where there are some (:data:`PLAIN_SIZE`), as ``BACK`` at the
        outline, at the peak's heat.

        WHY (eighty-third session, RULE 96): the peak stands in for the two tests of
        :func:`plain_backs` that a plain back can fail while plainly being one: a strong edge
        against the table (a black back on a dark table) and lying wholly in view (RULE 70:
        an outline the frame cuts is a wall panel's shape as much as a card's). Neither
        witness is enough alone: a peak under ``back_score`` lies on too many things (heat 0.2
        found 5 of the training split's backs for 12 false ones), and a plain outline with no
        index may be a patch of wall or table. On the validation groups (backs the spotter
        never trained on) two backs were found this way, none false on the training split.
        WHY only beside cards found (RULES 93 and 95, without it, failed): a UNO face held
        alone, where the photo reader finds nothing, drew faint peaks on parts of one colour
        and was answered ``BACK``; a faint peak is evidence that a scene of cards makes
        likelier."""
        from vision.recognise import Detection

        peaks = [c for c in corners if c.kind == "back" and c.score >= self.min_score
                 and not any(_contains(d.quad, _centre(c.box)) for d in found)]
        if not found or not peaks or not blank:
            return []
        ref = _face_area([d for d in found if d.code != BACK])
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        out: list[Any] = []
        for quad in blank:
            heat = max((c.score for c in peaks if _contains(quad, _centre(c.box))), default=0.0)
            if heat and _apart_and_card_sized(quad, [*found, *out], ref, PLAIN_SIZE) \
                    and _plain_std(grey, quad) <= PLAIN_STD:
                out.append(Detection(BACK, float(heat), _order(quad)))
        return out

    def read_outlines(self, image: np.ndarray) -> tuple[list[Any], list[np.ndarray]]:
        """(cards, the whole outlines with no index, :data:`BACK_MAX_INDEX`, for
        :meth:`faint_backs`). Cards found as whole outlines (:mod:`vision.photo_cards`) and read at
        both index corners (:func:`read_quad`), times the whole-card classifier's reading of the
        rectified face (:meth:`whole_card`, weight :data:`WHOLE_WEIGHT`); below
        ``min_card_confidence`` an outline is still its card when both corners read that code on
        their own (:func:`corners_agree`). The pips of an outline read as a card (:meth:`pip_suits`)
        settle spade against club and heart against diamond (:data:`PIP_FLOOR`,
        :data:`PIP_COURT_FLOOR`). In a greyscale photo an outline's code must reach
        :data:`GREY_CONFIDENCE`. An outline not read as a card may be a joker (:meth:`jokers`: by
        its word, never by its corners, :data:`OUTLINE_CODES`) or, with no index and wholly in the
        photo, a face-down card (:func:`face_down`, :func:`plain_backs`; sixty-sixth session, RULE
        70: an outline the frame cuts is the frame's shape as much as the thing's, and a face-down
        card has no index to confirm it: at their camera's 4:3, the CC BY webcam frames' white wall
        panel, cut by the frame, made 29 of the training split's webcam group's 31 false cards); any
        other is dropped, and of two readings of one card (an outline inside another) the more
        confident stays.

        Then the pieces of regions cut at two notches (:func:`vision.photo_cards.card_quads`
        with ``split``: cards that touch each other, or merge with the background or a hand)
        that overlap no card found so far are read the same way, as face-up cards only. WHY
        after, and only those: a whole region's outline is the surer one, a piece of a card
        already read would only cost its reading, and a piece has no rim of its own to tell a
        face-down card by (in a first trial, with one cut per region and no area bound,
        pieces read as backs too gave 11 false backs of the training split for 1 found)."""
        from vision.photo_cards import card_quads, clear_of_edge

        outlines = card_quads(image, split=True)
        _go_on()
        least = self.outline_least(image)
        whole = [o.quad for o in outlines if not o.piece]
        found, unread, blank = self.read_quads(image, whole, least, backs=True)
        _go_on()
        # pieces of regions: only where no whole outline was read as a card, only face-up
        more = [o.quad for o in outlines if o.piece
                and not any(_overlaps(o.quad, d.quad) for d in found)]
        found += self.read_quads(image, more, least)[0]
        found += self.jokers(image, unread, found)
        h, w = image.shape[:2]
        in_view = [(q, p) for q, p in blank if clear_of_edge(q, w, h)]  # wholly in view
        found += face_down(image, in_view, found)
        found += plain_backs(image, in_view, found)
        found.sort(key=lambda d: -d.confidence)
        kept: list[Any] = []
        for d in found:
            if not any(_overlaps(d.quad, k.quad) for k in kept):
                kept.append(d)
        return kept, [q for q, _ in blank]

    def read_quads(self, image: np.ndarray, quads: Sequence[np.ndarray], least: float,
                   backs: bool = False
                   ) -> tuple[list[Any], list[np.ndarray], list[tuple[np.ndarray, float]]]:
        """The outlines ``quads`` read as cards at code probability ``least`` (the reading of
        :meth:`read_outlines`): (cards, the outlines not read as a card, and with ``backs``
        the outlines with no index at all (:data:`BACK_MAX_INDEX`), with their probability
        of ``BACK``)."""
        from vision.photo_cards import cut, index_squares
        from vision.recognise import Detection

        crops = [cut(image, sq, CORNER_SIZE) for q in quads for sq in index_squares(q)]
        # (outline, index corner, class): each outline's four index crops read
        probs = self.classifier.classify(crops).reshape(len(quads), 4, len(self.classes))
        none = self.classes.index(NONE)
        reads = [read_quad(p, self.classes) for p in probs]
        # the whole-card classifier reads only the outlines whose reading is used: those read
        # as a card, and those with no index in any corner (maybe a face-down card)
        row = {i: j for j, i in enumerate(
            i for i, (code, _, _) in enumerate(reads)
            if code is not None or (backs and 1 - probs[i, :, none].min() <= BACK_MAX_INDEX))}
        _go_on()
        whole, back = self.whole_card(image, [quads[i] for i in row])
        read = [i for i in row if reads[i][0] is not None]
        suits = {i: s for i, s in zip(read, self.pip_suits(
            image, [quads[i] for i in read], [probs[i] for i in read]),
            strict=True) if not np.isnan(s).any()}  # outlines with pips only
        found = []
        cards: set[int] = set()
        blank = []
        for i, j in row.items():
            quad = quads[i]
            code, conf, dist = reads[i]
            if code is None:
                blank.append((quad, float(back[j])))
                continue
            if whole is not None:
                dist = dist * np.power(whole[j], WHOLE_WEIGHT)
                dist = (dist / max(float(dist.sum()), 1e-12)).astype(np.float32)
                k = int(np.argmax(dist))
                code, conf = self.classes[k], float(dist[k])
            if i in suits:
                dist = fuse_suits(dist, suits[i], self.classes, self.pip_floor,
                                  self.pip_court_floor)
                k = int(np.argmax(dist))
                code, conf = self.classes[k], float(dist[k])
            if conf < least:
                agreed = corners_agree(probs[i], self.classes)
                if agreed is None:
                    continue
                code, conf = agreed, float(dist[self.classes.index(agreed)])
            if code not in OUTLINE_CODES:
                continue
            found.append(Detection(code, conf, _order(_grown(quad)), probs=dist))
            cards.add(i)
        return found, [q for i, q in enumerate(quads) if i not in cards], blank

    def located(self, image: np.ndarray, cands: Sequence[Any], corners: Sequence[Corner]
                ) -> tuple[Any, ...]:
        """The card of a photo in which :meth:`detect` found none, read through the
        single-card locator: each of its proposals ``cands``
        (:func:`vision.card_locator.candidates`) within :data:`vision.single_card.FUSED_MARGIN`
        of the best geometric score is read as a card outline is (:meth:`read_quads`), that
        reading times the readings of the spotter's indices whose centres lie in it
        (``corners``, as :meth:`cards_and_indices` read them; a product of experts,
        :func:`joint_reading`); the surest code over the proposals is the photo's
        card when it reaches the outline's least probability (none otherwise).

        WHY (sixty-fourth session, RULE 64): a card held up to a webcam has a hand across its
        edge and the room behind it, and the outline finder (:mod:`vision.photo_cards`) often
        finds no outline of it, nor the spotter two sure indices; the locator, made for such
        photos, does find it (its best-scored proposal fits 95 of the 120 labelled webcam
        frames of the CC BY training split, :mod:`vision.locate_eval`). The photo reader found
        nothing in 56 of that split's 557 photos (102 labels); read so, 25 more labels were
        found for 1 more false card. No new bar: the outline's own, and the margin within which
        the UNO reader reads proposals with corners. Measured once after on the held-out split:
        427 → 435 of 504 found, 6 → 7 false (a QC read QS at 0.982); the real UNO photos
        without ``--deck``: unchanged; rendered UNO photos read by plain ``detect``: unchanged
        at its decision seeds, and at RULE 65's one of 2,160 (a wild +4) answered as the
        standard 4C.

        WHY the spotter's indices too (RULE 65): a loose proposal (the fingers or the room
        taken in) puts its index squares beside the printed indices, which the spotter finds
        where they are; an index it read too unsure to be a card on its own is a witness of
        the card it lies in, as the two indices of a pair are (:data:`PAIR_JOINT`). On the
        same 56 photos: 35 labels found, no false card, against 25 and 1. The held-out split,
        once after: unchanged (435 found, 7 false; models/HISTORY.md)."""
        from vision.recognise import Detection
        from vision.single_card import FUSED_MARGIN

        near = [np.asarray(q, np.float32) for _, q, s in cands
                if s > -0.5 and s >= cands[0][2] - FUSED_MARGIN]
        found = self.read_quads(image, near, 0.0)[0] if near else []
        if not found:
            return ()
        spots = [c for c in corners if c.probs is not None and c.score >= self.min_score]

        def witnessed(d: Any) -> np.ndarray:
            dist = d.probs
            for c in spots:
                if _contains(d.quad, _centre(c.box)):
                    dist = joint_reading(dist, c.probs, self.classes)
            return dist

        dist, d = max(((witnessed(d), d) for d in found), key=lambda pair: float(pair[0].max()))
        k = int(np.argmax(dist))
        if dist[k] < self.outline_least(image):
            return ()
        card = Detection(self.classes[k], float(dist[k]), d.quad, probs=dist)
        return tuple(take_in_indices([card], spots, self.classes, self.min_each,
                                     self.min_score))

    def outline_least(self, image: np.ndarray) -> float:
        """The least code probability of a card outline in ``image``: ``min_card_confidence``,
        raised to :data:`GREY_CONFIDENCE` in a greyscale photo."""
        return max(self.min_card_confidence, GREY_CONFIDENCE) if greyscale(image) \
            else self.min_card_confidence

    def jokers(self, image: np.ndarray, outlines: Sequence[np.ndarray],
               faces: Sequence[Any]) -> list[Any]:
        """Jokers among ``outlines`` not read as a card, as ``JK`` detections (quad grown as a
        face's): an outline whose word squares at both ends (:func:`vision.photo_cards.
        word_squares`, of one quarter turn) the corner reader reads as ``JK`` with probability
        at least :data:`JOKER_MIN` each; it overlaps none of the face-up cards ``faces`` and,
        where there are some, is about their size (:data:`BACK_SIZE`, as a face-down card).

        WHY the word: this deck prints moons and stars where other cards have their index, and
        the reader reads them as an index of some other card (most joker outlines of the
        training split read KD, at 0.54-0.93), so a joker's outline was never a card; its word
        "Joker" is what the reader learned ``JK`` from (the labelled boxes). Both ends must read
        it: one end alone read ``JK`` on 10 of the training split's other outlines at 0.95. No
        rim-contrast test (as a face-down card has): two words are evidence of a card, and on
        the training split the test lost 5 of the 21 jokers found and removed no false card.

        Only outlines that pass the overlap and size tests are read, and only by the network
        that reads ``JK`` (the rank's: a joker has no suit, so its probability is the rank
        network's alone): the top squares of both quarter turns, then a bottom square only
        where its top read the word: on 120 training photos (shared, loaded CPU) 10.5 ms CPU
        per photo of :meth:`detect`'s 178; all four squares read by both networks had made
        :meth:`detect` 242 ms against 164 without the rule (60 photos)."""
        from vision.photo_cards import cut, word_squares
        from vision.recognise import Detection

        word = next((f for f in self.classifier.factors if part_of("JK", f.part) in f.classes),
                    None)
        if word is None or not len(outlines):
            return []
        ref = _face_area(faces)
        cand = [q for q in outlines if _apart_and_card_sized(q, faces, ref)]
        if not cand:
            return []
        squares = [word_squares(q) for q in cand]
        jk = word.classes.index(part_of("JK", word.part))
        # the tops of both quarter turns first; a bottom only where its top read the word
        top = self.classifier.factor_probs(word, [cut(image, sq[k], CORNER_SIZE)
                                                  for sq in squares for k in (0, 2)])
        top = top[:, jk].reshape(len(cand), 2)
        ends = list(zip(*np.nonzero(top >= JOKER_MIN), strict=True))
        if not ends:
            return []
        bottom = self.classifier.factor_probs(
            word, [cut(image, squares[i][2 * t + 1], CORNER_SIZE) for i, t in ends])[:, jk]
        both = np.zeros(len(cand))
        for (i, t), p in zip(ends, bottom, strict=True):
            both[i] = max(both[i], min(float(top[i, t]), float(p)))
        return [Detection("JK", float(p), _order(_grown(q)))
                for q, p in zip(cand, both, strict=True) if p >= JOKER_MIN]

    def pip_suits(self, image: np.ndarray, quads: Sequence[np.ndarray],
                  probs: Sequence[np.ndarray]) -> np.ndarray:
        """(N, 4) the pip reader's suits (:meth:`vision.pip_suits.PipSuitReader.card_suits`)
        of the outlines (NaN rows: no pips, or no reader), each grown as the card's quad
        (:data:`OUTLINE_GROW`) and rectified portrait in the quarter turn its index corners
        read (:func:`_turn`; ``probs``: each outline's four index crops' readings).

        WHY grown: an outline may be a court card's inner frame or lie a little inside the
        card's edge, and the grown one holds every pip; on the training split it found 6–9
        more cards than the outline itself at the same floors, and 0–2 fewer false ones."""
        out = np.full((len(quads), 4), np.nan)
        if self.pips is None or not len(quads) or \
                min(self.pip_floor, self.pip_court_floor) >= 1.0:
            return out
        from vision.photo_cards import portrait

        none = self.classes.index(NONE)
        turned = []
        for quad, p in zip(quads, probs, strict=True):
            q0 = portrait(_grown(quad))
            turned.append(np.roll(q0, 1, 0) if _turn(p, none) else q0)
        return self.pips.card_suits(image, turned)

    def whole_card(self, image: np.ndarray, quads: Sequence[np.ndarray]
                   ) -> tuple[np.ndarray | None, np.ndarray]:
        """The whole-card classifier's reading of each outline, rectified portrait and read both
        ways up: ((N, len(classes)) probabilities over the standard codes, ``none`` 0, or None
        without a classifier; (N,) probability of ``BACK``, 0 without one)."""
        if self.cards_model is None or not len(quads):
            return None, np.zeros(len(quads))
        from vision.photo_cards import portrait

        size = (160, 224)
        frame = np.float32([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]])
        crops = [cv2.warpPerspective(image, cv2.getPerspectiveTransform(portrait(q), frame),
                                     size) for q in quads]
        p = self.cards_model.predict(crops, both_ways=True)
        index = {c: k for k, c in enumerate(self.cards_model.classes)}
        out = np.zeros((len(quads), len(self.classes)), np.float64)
        for j, code in enumerate(self.classes):
            if code != NONE and code in index:
                out[:, j] = p[:, index[code]]
        back = p[:, index[BACK]] if BACK in index else np.zeros(len(quads))
        return out / np.maximum(out.sum(1, keepdims=True), 1e-12), np.asarray(back, np.float64)

    def cards(self, corners: Sequence[Corner]) -> list[Any]:
        """Read corners → cards: face-down cards above ``back_score`` as they are, then pairs
        of indices within reach of each other whose joint reading (:func:`joint_reading`)
        names a code at ``min_joint`` or more, each index giving it ``min_each`` or more
        (:func:`_pair`; surest pairs first, each index in one pair), then each index left
        that reads a code at ``min_confidence`` on its own.

        WHY: a card's two indices are two independent readings, as an outline's two corners
        are (:func:`read_quad`); two unsure readings of one code are strong evidence where
        each alone is not."""
        from vision.recognise import Detection

        out: list[Detection] = []
        named = []
        none = self.classes.index(NONE)
        for c in corners:
            if c.kind == "back":
                if c.score >= self.back_score:
                    out.append(Detection(BACK, c.score, _box_quad(c.box)))
                continue
            assert c.probs is not None
            if c.score >= self.min_score and int(np.argmax(c.probs)) != none:
                named.append(c)
        pairs, alone = _pair(named, self.classes, self.min_joint, self.min_each)
        for group, dist in [*pairs, *[((c,), c.probs) for c in alone]]:
            k = int(np.argmax(dist))
            if len(group) == 1 and dist[k] < self.min_confidence:
                continue
            conf = float(dist[k] * np.mean([c.score for c in group]) ** 0.25)
            if len(group) == 1:
                quad = _box_quad(_grow(group[0].box, 1.2))
            else:
                quad = _around([_box_quad(c.box) for c in group])
            out.append(Detection(self.classes[k], conf, quad, probs=dist))
        out.sort(key=lambda d: -d.confidence)
        return out


def one_per_code(found: Sequence[Any]) -> list[Any]:
    """``found`` by confidence, where two detections of one face lie over one another
    (:func:`_overlaps`) made one: the surer one, its quad the least rectangle around both.

    WHY: a deck holds each face once (and two jokers, which would have to lie almost on one
    another to be made one), so two such readings are one card seen twice. On the
    training split 4 of its 24 false cards were this: an outline of a card's inner frame that
    misses its printed indices, with the spotter's pair of those indices just outside it; a
    joker's picture read by its word next to the joker itself; one joker's word spotted as two
    indices. Face-down cards all share ``BACK`` and stay apart.

    A face other than the joker is made one also where the two quads merely touch
    (:func:`_touch`; eighty-first session, RULE 89): the spotter's box of one index lies on the
    corner of its card's outline, and neither centre need lie in the other (on the training
    split four cards were each given twice so). Two jokers may lie side by side."""
    kept: list[Any] = []
    for d in sorted(found, key=lambda d: -d.confidence):
        twin = next((i for i, k in enumerate(kept) if k.code == d.code != BACK
                     and (_overlaps(k.quad, d.quad)
                          or d.code != "JK" and _touch(k.quad, d.quad))), None)
        if twin is None:
            kept.append(d)
            continue
        kept[twin] = replace(kept[twin], quad=_around([kept[twin].quad, d.quad]))
    return kept


def take_in_indices(found: Sequence[Any], corners: Sequence[Corner], classes: Sequence[str],
                    each: float, least: float) -> list[Any]:
    """``found`` with each face-up card's quad widened to take in the spotted indices of it
    that lie just outside: an index of ``corners`` (heat ``least`` or more) whose centre lies in
    no card's quad, within one index size of a card's quad, and whose reading is that card's
    code (its likeliest, at ``each`` or more) widens the nearest such card's quad to the least
    rectangle around both (as :func:`one_per_code` joins two readings of one card). Codes,
    confidences and the cards found stay as they are.

    WHY (eighty-first session, RULE 87): a card's quad is where it lies, and its printed index
    is part of it. A card read from an outline or a locator proposal cut short (a finger across
    its end, the frame's edge, a rim found a little inside) can leave one of its own indices
    just outside its quad, where the spotter finds it and reads the card's code; a caller that
    asks which card lies at that index (a zone, a hand, the scoring of a labelled photo) would
    get none. On the CC BY training split: 4 such indices of 1,414. WHY its likeliest code, not
    just ``each`` of it: an index of a neighbouring card read unsure between its own code and
    the card's widened the card over that neighbour (RULE 86, withdrawn; models/HISTORY.md)."""
    out = list(found)
    for c in corners:
        if c.kind != "index" or c.probs is None or c.score < least \
                or float(c.probs.max()) < each:
            continue
        top, centre = classes[int(np.argmax(c.probs))], _centre(c.box)
        if top == NONE or any(_contains(d.quad, centre) for d in out):
            continue
        near = [(gap, i) for i, d in enumerate(out)
                if d.code == top and (gap := _outside(d.quad, centre)) <= _size(c.box)]
        if near:
            i = min(near)[1]
            out[i] = replace(out[i], quad=_around([out[i].quad, _box_quad(c.box)]))
    return out


def greyscale(image: np.ndarray) -> bool:
    """Whether a BGR photo has no colour anywhere (no pixel's channels differ by more than
    :data:`GREY_SPREAD`): then a suit's colour cannot be seen, only its shape
    (:data:`GREY_CONFIDENCE`)."""
    b, g, r = cv2.split(image)
    spread = cv2.subtract(cv2.max(cv2.max(b, g), r), cv2.min(cv2.min(b, g), r))
    return cv2.minMaxLoc(spread)[1] <= GREY_SPREAD


def face_down(image: np.ndarray, blank: Sequence[tuple[np.ndarray, float]],
              faces: Sequence[Any]) -> list[Any]:
    """Face-down cards among outlines with no index (``blank``: (outline, P(BACK)) each, past
    :data:`BACK_MAX_INDEX`) that the whole-card classifier gives ``BACK`` at :data:`BACK_MIN`
    or more, as ``BACK`` detections.

    WHY these tests: outlines with no index are mostly not cards — fragments of a face (a big
    pip, a court figure's frame), patches of table or wall — and the whole-card classifier,
    trained on renders, calls many of them ``BACK``. A face-down card is a whole card: about
    the size of the face-up cards found in the same photo (:data:`BACK_SIZE`; a photo with no
    face-up card gives no size and no back), lying apart from them, with an edge against the
    table (:data:`BACK_EDGE`). On the training split these tests kept 11 of the 12 outlines
    they passed right, where the classifier alone (P ≥ 0.5) got 1 of 7."""
    from vision.photo_cards import edge_contrast
    from vision.recognise import Detection

    ref = _face_area(faces)
    if ref is None:
        return []
    return [Detection(BACK, p, _order(quad)) for quad, p in blank
            if p >= BACK_MIN and _apart_and_card_sized(quad, faces, ref)
            and edge_contrast(image, quad) >= BACK_EDGE]


def plain_backs(image: np.ndarray, blank: Sequence[tuple[np.ndarray, float]],
                found: Sequence[Any]) -> list[Any]:
    """Plain face-down cards among outlines with no index (``blank``, as for
    :func:`face_down`): one colour inside (:data:`PLAIN_STD`), a strong edge against the table
    (:data:`PLAIN_EDGE`), a card's shape (:data:`PLAIN_ASPECT`) and size in the photo
    (:data:`PLAIN_AREA`), lying on none of the cards ``found`` and sized like the face-up ones
    when there are (:data:`PLAIN_SIZE`), as ``BACK`` detections at :data:`PLAIN_CONFIDENCE`.

    WHY: a deck with plain backs (the shared photos' black deck) shows nothing the whole-card
    classifier learned as a back, and a photo of face-down cards alone gives :func:`face_down`
    no size to go by; what such a card does show is an even patch of one colour with a
    card's outline. See :data:`PLAIN_STD` for how the tests were chosen."""
    from vision.photo_cards import edge_contrast
    from vision.recognise import Detection

    faces = [d for d in found if d.code != BACK]
    ref = _face_area(faces)
    shaped = [q for q, _ in blank if _card_shaped(q, image.shape[:2])]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if shaped else None
    out: list[Any] = []
    for quad in shaped:
        if any(_overlaps(quad, d.quad) for d in [*found, *out]) \
                or not _apart_and_card_sized(quad, faces, ref, PLAIN_SIZE):
            continue
        if _plain_std(grey, quad) <= PLAIN_STD and edge_contrast(image, quad) >= PLAIN_EDGE:
            out.append(Detection(BACK, PLAIN_CONFIDENCE, _order(quad)))
    return out


def _card_shaped(quad: np.ndarray, shape: tuple[int, int]) -> bool:
    """Whether ``quad`` has a card's shape and size in a photo of ``shape`` (:data:`PLAIN_ASPECT`,
    :data:`PLAIN_AREA`)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    (_, _), (w, h), _ = cv2.minAreaRect(q)
    aspect = max(w, h) / max(min(w, h), 1e-6)
    return aspect <= PLAIN_ASPECT and cv2.contourArea(q) >= PLAIN_AREA * shape[0] * shape[1]


def _plain_std(grey: Any, quad: np.ndarray) -> float:
    """The standard deviation of ``grey`` (the photo's) in the middle of ``quad`` rectified to
    :data:`PLAIN_VIEW` (a tenth in from each side)."""
    from vision.detect import crop_card
    from vision.photo_cards import portrait

    w, h = PLAIN_VIEW
    view = crop_card(grey, portrait(quad), PLAIN_VIEW)
    return float(view[h // 10:h - h // 10, w // 10:w - w // 10].astype(np.float32).std())


def _face_area(faces: Sequence[Any]) -> float | None:
    """The median area of the face-up cards ``faces`` as outlines (their quads are the
    outlines grown by :data:`OUTLINE_GROW`), or None when there are none."""
    if not faces:
        return None
    areas = [cv2.contourArea(d.quad.astype(np.float32)) for d in faces]
    return float(np.median(areas)) / OUTLINE_GROW ** 2


def _apart_and_card_sized(quad: np.ndarray, faces: Sequence[Any], ref: float | None,
                          size: float = BACK_SIZE) -> bool:
    """Whether an outline overlaps none of the face-up cards ``faces`` and, when their median
    outline area ``ref`` is known, lies within ``size`` of it (:data:`BACK_SIZE`; a plain
    face-down card's is :data:`PLAIN_SIZE`): the tests a face-down card or a joker (neither read
    by its corners) must pass to be a whole card of this photo."""
    if any(_overlaps(quad, d.quad) for d in faces):
        return False
    area = float(cv2.contourArea(quad.astype(np.float32)))
    return ref is None or size * ref <= area <= ref / size


def _pair(named: Sequence[Corner], classes: Sequence[str], least: float, each: float
          ) -> tuple[list[tuple[tuple[Corner, Corner], np.ndarray]], list[Corner]]:
    """Read indices paired into cards: ((the two indices, their joint distribution) per pair,
    the indices left alone). Two indices pair when their centres are within
    :data:`PAIR_REACH` index sizes, their joint reading (:func:`joint_reading`) names a code
    at ``least`` or more, and each gives that code ``each`` or more; the surest pairs first,
    each index in one pair at most."""
    cand = []
    for i, a in enumerate(named):
        for j in range(i + 1, len(named)):
            b = named[j]
            if _apart(a.box, b.box) > PAIR_REACH:
                continue
            assert a.probs is not None and b.probs is not None
            dist = joint_reading(a.probs, b.probs, classes)
            k = int(np.argmax(dist))
            if dist[k] >= least and min(a.probs[k], b.probs[k]) >= each:
                cand.append((-float(dist[k]), i, j, dist))
    used: set[int] = set()
    pairs = []
    for _, i, j, dist in sorted(cand, key=lambda t: t[:3]):
        if i in used or j in used:
            continue
        used |= {i, j}
        pairs.append(((named[i], named[j]), dist))
    return pairs, [c for i, c in enumerate(named) if i not in used]


def _apart(a: np.ndarray, b: np.ndarray) -> float:
    """How far apart two index boxes' centres lie, in index sizes (the larger box's): one
    card's two indices are at most :data:`PAIR_REACH` apart."""
    return float(np.linalg.norm(_centre(a) - _centre(b))) / max(_size(a), _size(b))


def _turn(probs: np.ndarray, none: int) -> int:
    """Which quarter turn of an outline is the card's (0 or 1, rows ``2h`` and ``2h + 1``):
    the one whose two corners hold more index (less ``none``)."""
    return int(probs[2, none] + probs[3, none] < probs[0, none] + probs[1, none])


def read_quad(probs: np.ndarray, classes: Sequence[str]
              ) -> tuple[str | None, float, np.ndarray]:
    """The code of a card outline from its four index crops' probabilities (rows in the order
    of :func:`vision.photo_cards.index_squares`): (code or None, confidence, distribution).

    Product of experts: the two indices of one card agree, so P(code) ∝ P₁(code)·P₂(code),
    where a corner read as ``none`` (a finger on it, glare) is a neutral witness rather than a
    veto (:data:`NEUTRAL`). Of the two quarter turns the one whose corners hold more index
    (less ``none``, :func:`_turn`) is the card's; an outline with no index in either of its
    corners is no card (None)."""
    none, _ = _code_columns(tuple(classes))
    h = _turn(probs, none)
    a, b = probs[2 * h], probs[2 * h + 1]
    dist = joint_reading(a, b, classes)
    if 2 - a[none] - b[none] < MIN_INDEX:  # how much index the two corners hold
        return None, 0.0, dist
    k = int(dist.argmax())
    return classes[k], float(dist[k]), dist


def joint_reading(a: np.ndarray, b: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """Two readings of one card's indices combined (product of experts): P(code) ∝
    P₁(code)·P₂(code) over the codes, where a reading of ``none`` (a finger on the index,
    glare) is a neutral witness (:data:`NEUTRAL`) rather than a veto; ``none`` gets 0."""
    none, codes = _code_columns(tuple(classes))
    joint = (a[codes] + a[none] * NEUTRAL) * (b[codes] + b[none] * NEUTRAL)
    dist = np.zeros(len(classes), np.float32)
    dist[codes] = joint / max(float(joint.sum()), 1e-12)
    return dist


@cache
def _code_columns(classes: tuple[str, ...]) -> tuple[int, np.ndarray]:
    """The column of ``none`` among ``classes`` and the columns of the codes (all the others)."""
    none = classes.index(NONE)
    return none, np.array([k for k in range(len(classes)) if k != none])


def corners_agree(probs: np.ndarray, classes: Sequence[str], least: float = AGREE
                  ) -> str | None:
    """The code that both index corners of an outline (its turn by :func:`_turn`) read on
    their own, each with probability at least ``least`` over the codes, or None.

    WHY: two corners of one card are two independent readings; when both name the same code
    with some confidence, that is strong evidence even where the product with the whole-card
    classifier (trained on other printings) stays below the outline threshold."""
    none, codes = _code_columns(tuple(classes))
    h = _turn(probs, none)
    a, b = probs[2 * h][codes], probs[2 * h + 1][codes]
    ka, kb = int(a.argmax()), int(b.argmax())
    if ka != kb or min(float(a[ka]), float(b[kb])) < least:
        return None
    return classes[int(codes[ka])]


def _contains(quad: np.ndarray, point: np.ndarray) -> bool:
    return cv2.pointPolygonTest(np.asarray(quad, np.float32).reshape(-1, 1, 2),
                                (float(point[0]), float(point[1])), False) >= 0


def _outside(quad: np.ndarray, point: np.ndarray) -> float:
    """How far ``point`` lies outside ``quad``, in pixels (0 or less inside it)."""
    return -cv2.pointPolygonTest(np.asarray(quad, np.float32).reshape(-1, 1, 2),
                                 (float(point[0]), float(point[1])), True)


def _overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    """Two outlines of one card: either one's centre lies inside the other."""
    return _contains(a, b.mean(0)) or _contains(b, a.mean(0))


def _touch(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two quads share any area (their convex hulls do)."""
    hulls = [cv2.convexHull(np.asarray(q, np.float32).reshape(-1, 2)) for q in (a, b)]
    return cv2.intersectConvexConvex(*hulls)[0] > 0


def _around(quads: Sequence[np.ndarray]) -> np.ndarray:
    """The least rectangle around ``quads``, its corners ordered (:func:`_order`): one card's
    quad from several sightings of it."""
    pts = np.concatenate([np.asarray(q, np.float32).reshape(-1, 2) for q in quads])
    return _order(cv2.boxPoints(cv2.minAreaRect(pts)))


def _centre(box: np.ndarray) -> np.ndarray:
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])


def _grown(quad: np.ndarray) -> np.ndarray:
    """A card outline grown by :data:`OUTLINE_GROW` about its centre: the card's quad."""
    q = np.asarray(quad, np.float32)
    return (q - q.mean(0)) * OUTLINE_GROW + q.mean(0)


def _size(box: np.ndarray) -> float:
    return float(max(box[2] - box[0], box[3] - box[1], 1.0))


def _grow(box: np.ndarray, f: float) -> np.ndarray:
    c = _centre(box)
    half = np.array([box[2] - box[0], box[3] - box[1]]) * f / 2
    return np.array([c[0] - half[0], c[1] - half[1], c[0] + half[0], c[1] + half[1]])


def _box_quad(box: np.ndarray) -> np.ndarray:
    x0, y0, x1, y1 = (float(v) for v in box)
    return np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


def _order(pts: np.ndarray) -> np.ndarray:
    from vision.synth.scenes import canonical_quad

    return canonical_quad(np.asarray(pts, np.float32))
