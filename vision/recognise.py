"""Recognition: localisation + the card classifier → detections (code, confidence, box, quad).

:class:`TableReader` is the one object a live pipeline holds: ``read(frame)`` returns a
:class:`TableView` with the detections and the observation (:mod:`vision.layout`). It re-finds the
mat every few frames, reuses the classifier's reading of a card that has not moved or changed
(so a still table costs localisation only), and drops frames unprocessed while ``blind`` is set:
the tracker never looks during a shuffle and never keeps a frame. A whole card's reading is
fused with the reading of its printed corner indices (:mod:`vision.table_corners`), a standard
card's suit with the shapes of its pips (:mod:`vision.pip_suits`), and a card
the classifier is still unsure of is settled by the rest of its frame
(:mod:`vision.consistency`: one deck, one light, one font).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.consistency import frame_consistent
from vision.corner_index import read_corners
from vision.detect import Located, crop_card, locate_cards
from vision.geometry import DEFAULT_MAT, GeometryError, MatSpec, TableGeometry
from vision.photo_size import read_at_photo_size
from vision.pip_suits import fuse_suits, standard_mass
from vision.sources import Frame
from vision.table_corners import fuse_table_card

CROP_SIZE = (80, 120)
REUSE_MM = 3.0
REUSE_DIFF = 12.0
"""Largest local grey-level change (5×5 blocks of a 20×30 thumbnail, global brightness removed)
for which a card at the same place is taken to be the same card: a different digit or symbol
changes a block by far more, sensor noise and slow lighting drift by far less."""
UNSURE_BELOW = 0.95
"""A card read with less than this probability gets a second look from wider crops."""
SECOND_LOOK_SCALES = (1.04, 1.08)
"""Crops 4% and 8% wider than the card: within the misfit the classifier was trained on (a
quad off by up to ~3% per side), while a tighter crop cuts the white border it balances by."""
PIP_FLOOR = 0.02
"""Probability that the pip reader's suit of a number card (A–10) says nothing
(:func:`vision.pip_suits.fuse_suits`). Set on tuning seeds (standard tables 11,600,000+,
12,000,000+ and 12,500,000+, 20 each, with the first, number-cards-only reader): cards right
2,973, 2,975 and 2,967 of 3,000 at floors 0.1, 0.02 and 0.3 (that reader had read the suit of
all but one of 2,626 number cards of 80 tuning tables)."""
COURT_FLOOR = 0.2
"""The same for a court card (J, Q, K), whose suit is printed large once or twice beside a
picture whose pieces may pass for pips. Set on the same 60 tuning tables: cards right 2,985,
2,990 and 2,991 of 3,000 (layouts with no error 49, 54 and 55 of 60) at floors 1 (courts
untouched), 0.5 and 0.2; on 40 more (13,000,000+ and 13,500,000+) 1,995, 1,996 and 1,996 of
2,000 at 0.5, 0.2 and 0.1."""
PIP_GATE = 0.01
"""Least probability of the standard faces for a card's pips to be read: a UNO table's cards
pay nothing for the standard deck's suit expert."""
STILL_DIFF = 6.0
"""A frame whose every 8×8-pixel block (at 1/8 scale) moved less than this in grey level is the
same table as the last one: its view is reused without localising again."""


@dataclass(frozen=True, slots=True, eq=False)
class Detection:
    """One physical card seen: its code (or ``BACK``), calibrated confidence, quad, zone.

    ``probs`` holds the classifier's whole distribution (columns = ``classes`` of the reader), so
    the protocol prior (:mod:`vision.prior`) can re-decode a reveal jointly.
    """

    code: str
    confidence: float
    quad: np.ndarray
    quad_mm: np.ndarray | None = None
    zone: str | None = None
    covered: bool = False
    probs: np.ndarray | None = None

    @property
    def box(self) -> tuple[float, float, float, float]:
        x, y = self.quad[:, 0], self.quad[:, 1]
        return float(x.min()), float(y.min()), float(x.max()), float(y.max())

    def to_json(self, width: int, height: int) -> dict[str, Any]:
        """The detection as CONVENTIONS.md writes it (box clipped to the image)."""
        x0, y0, x1, y1 = self.box
        box = [max(0.0, x0), max(0.0, y0), min(float(width), x1), min(float(height), y1)]
        return {"code": self.code, "confidence": round(float(self.confidence), 4),
                "box": [round(v, 1) for v in box],
                "quad": [[round(float(x), 1), round(float(y), 1)] for x, y in self.quad]}


@dataclass(frozen=True, slots=True, eq=False)
class TableView:
    """What one frame showed. ``blind``: dropped unseen. ``error``: why nothing could be read."""

    index: int
    detections: tuple[Detection, ...] = ()
    obstructions: tuple[np.ndarray, ...] = ()
    observation: Any = None
    blind: bool = False
    error: str | None = None
    reused: int = 0

    @property
    def hand_in_view(self) -> bool:
        return bool(self.obstructions)


@dataclass
class _Cached:
    centre: np.ndarray
    thumb: np.ndarray
    probs: np.ndarray
    final: np.ndarray
    """The reading after the frame's say (:mod:`vision.consistency`)."""


@dataclass
class TableReader:
    """Frames in, :class:`TableView` out. Set ``blind = True`` during a blind window.

    ``classifier`` is a :class:`vision.classifier.CardClassifier` (or anything with ``classes``
    and ``predict(crops, both_ways=...)``); ``corners`` (4 image points, clockwise from the mat's
    top-left) replace the markers when given; ``fanned`` and ``rows_per_column`` describe the
    layout (see :func:`vision.detect.locate_cards` and :func:`vision.layout.build_view`);
    ``columns`` is how many columns the runner expects in the work area (a prior for splitting
    bands of sideways-overlapping columns). ``strip`` is a
    :class:`vision.strip_classifier.StripClassifier`: when given, a covered card of a fanned
    layout is read from its visible corner instead of its whole (mostly covered) crop, and a
    whole card's reading is fused with the readings of its two index corners. ``pips`` is a
    :class:`vision.pip_suits.PipSuitReader`: when given, a standard card's suit (spade or
    club, heart or diamond) is also read from the shapes of its pips.
    """

    classifier: Any
    mat: MatSpec = DEFAULT_MAT
    corners: np.ndarray | None = None
    fanned: bool | None = None
    rows_per_column: int | None = None
    columns: int | None = None
    strip: Any = None
    pips: Any = None
    model_path: Path | None = None
    """The file ``classifier`` was loaded from (:meth:`load` sets it). The photo of one UNO card
    (:func:`uno_card_detection`) is read with the shipped later trainings beside it when this is
    the shipped model (:func:`vision.classifier.with_later_trainings` decides, and loads them at
    the first such photo); a deck enrolled from photos is read by ``classifier`` alone."""
    profile: Any = None
    """An enrolled deck (:class:`vision.enrol.DeckProfile`, ``cardtable enrol``), used where it
    was photographed: one enrolled on the mat (``cardtable enrol --mat``) adapts the cards on
    the mat (whole card and corners, not a covered card's sliver), one enrolled from photos of
    single cards the photo of one UNO card (:func:`uno_card_detection`). WHY not across: a
    profile made from photos of single cards, blended into the table's readings, lost 105 of
    1,000 cards of rendered tables printed in one of four styles and changed nothing in the
    other three (read right either way; models/HISTORY.md, "Deck enrolment")."""
    geometry_every: int = 15
    reuse: bool = True
    both_ways: bool = True
    blind: bool = False
    geometry: TableGeometry | None = None
    _frames: int = 0
    _cache: list[_Cached] = field(default_factory=list)
    _last_small: np.ndarray | None = None
    _last_view: TableView | None = None

    def __post_init__(self) -> None:
        if self.corners is not None:
            self.geometry = TableGeometry.from_corners(self.corners, self.mat)

    @classmethod
    def load(cls, model: str | Path | None = None, profile: str | Path | None = None,
             **options: Any) -> TableReader:
        """A reader with the classifier at ``model`` (default: the shipped one) and the deck
        enrolled in ``profile`` (a ``cardtable enrol`` file; checked against the classifier)."""
        from vision.classifier import DEFAULT_MODEL, CardClassifier
        from vision.pip_suits import DEFAULT_PIP_MODEL, PipSuitReader
        from vision.strip_classifier import DEFAULT_STRIP_MODEL, StripClassifier

        if "strip" not in options and DEFAULT_STRIP_MODEL.is_file():
            options["strip"] = StripClassifier.load(DEFAULT_STRIP_MODEL)
        if "pips" not in options and DEFAULT_PIP_MODEL.is_file():
            options["pips"] = PipSuitReader.load(DEFAULT_PIP_MODEL)
        options.setdefault("model_path", Path(model or DEFAULT_MODEL))
        classifier = CardClassifier.load(options["model_path"], threads=1)
        if profile is not None:
            from vision.enrol import DeckProfile

            options["profile"] = DeckProfile.load(profile)
            options["profile"].check_model(classifier)
            if options.get("strip") is not None:
                # a profile from photos of single cards adapts what reads one card's corners
                # (the wide networks); one enrolled on the mat, the table's strip
                strip = options["strip"]
                if not options["profile"].on_mat:
                    from vision.strip_classifier import single_card_strip

                    strip = single_card_strip(strip)
                options["profile"].check_strip(strip.classes, strip.digest)
        return cls(classifier, **options)

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(self.classifier.classes)

    @property
    def mat_profile(self) -> Any:
        """The deck profile if it was enrolled on the mat (else None): the table's adapter."""
        return self.profile if self.profile is not None and self.profile.on_mat else None

    @property
    def photo_profile(self) -> Any:
        """The deck profile if it was enrolled from photos of single cards (else None)."""
        return self.profile if self.profile is not None and not self.profile.on_mat else None

    def _whole(self, crops: list[np.ndarray]) -> np.ndarray:
        """Whole-card probabilities of table crops, adapted to a deck enrolled on the mat."""
        if self.mat_profile is not None:
            return self.mat_profile.predict(self.classifier, crops, both_ways=self.both_ways)
        return np.asarray(self.classifier.predict(crops, both_ways=self.both_ways))

    def _adapted(self, strip_probs: np.ndarray) -> np.ndarray:
        """Strip readings (..., S) of whole cards' corners, adapted to a deck enrolled on the
        mat."""
        if self.mat_profile is None:
            return strip_probs
        flat = strip_probs.reshape(-1, strip_probs.shape[-1])
        return self.mat_profile.adapt_corners(flat, self.strip.classes, self.strip.digest).reshape(
            strip_probs.shape)

    def _locate_table(self, image: np.ndarray) -> None:
        if self.corners is not None:
            return
        due = self.geometry is None or self._frames % self.geometry_every == 0
        if not due:
            return
        try:
            self.geometry = TableGeometry.from_markers(image, self.mat)
        except GeometryError:
            if self.geometry is None:
                raise

    def read(self, frame: Frame | np.ndarray) -> TableView:
        """Read one frame. While ``blind`` the frame is not looked at, only counted."""
        index = frame.index if isinstance(frame, Frame) else self._frames
        if self.blind:
            self._frames += 1
            self._cache.clear()  # what lay there before the shuffle is no evidence after it
            self._last_small = self._last_view = None
            return TableView(index, blind=True)
        image = frame.image if isinstance(frame, Frame) else frame
        try:
            self._locate_table(image)
        except GeometryError as exc:
            self._frames += 1
            return TableView(index, error=str(exc))
        self._frames += 1
        assert self.geometry is not None
        small = cv2.resize(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY),
                           (max(1, image.shape[1] // 8), max(1, image.shape[0] // 8)),
                           interpolation=cv2.INTER_AREA).astype(np.int16)
        if self.reuse and self._still(small) and self._last_view is not None:
            last = self._last_view
            return TableView(index, last.detections, last.obstructions, last.observation,
                             reused=len(last.detections))
        self._last_small = small
        loc = locate_cards(image, self.geometry, fanned=self.fanned, columns=self.columns,
                           rows=self.rows_per_column)
        detections, reused = self._recognise(image, loc.cards)
        from vision.layout import build_view

        view = build_view(detections, self.mat, rows_per_column=self.rows_per_column)
        self._last_view = TableView(index, detections, loc.obstructions, view, reused=reused)
        return self._last_view

    def _still(self, small: np.ndarray) -> bool:
        """Whether ``small`` (1/8-scale grey) shows the same table as the last full read."""
        last = self._last_small
        if last is None or last.shape != small.shape:
            return False
        diff = cv2.blur(np.abs(small - last).astype(np.float32), (8, 8))
        return float(diff.max()) < STILL_DIFF

    def _recognise(self, image: np.ndarray, cards: tuple[Located, ...]
                   ) -> tuple[tuple[Detection, ...], int]:
        if not cards:
            self._cache = []
            return (), 0
        crops = [crop_card(image, c.quad, CROP_SIZE) for c in cards]
        thumbs = [_thumb(c) for c in crops]
        probs: list[np.ndarray | None] = [None] * len(cards)
        source: list[int] = []  # the cached card each card's reading came from
        centres = np.array([c.centre_mm for c in cards])
        if self.reuse and self._cache:
            old_centres = np.array([o.centre for o in self._cache])
            close = np.linalg.norm(old_centres[None] - centres[:, None], axis=2) < REUSE_MM
            for i, t in enumerate(thumbs):
                for j in np.flatnonzero(close[i]):
                    if _same_card(self._cache[j].thumb, t):
                        probs[i] = self._cache[j].probs
                        source.append(int(j))
                        break
        todo = [i for i, p in enumerate(probs) if p is None]
        classes = self.classes
        if self.strip is not None:
            covered = [i for i in todo if cards[i].covered]
            todo = [i for i in todo if not cards[i].covered]
            if covered:
                # not adapted to an enrolled deck: its corner prototypes are of whole cards'
                # corners, and a fanned card's sliver read against them came out sure and
                # wrong where the plain reading was unsure and right enough for the runner's
                # prior (the demo recording: 40 deviations instead of 0)
                fresh = self.strip.predict(image, [cards[i].quad for i in covered])
                for i, p in zip(covered, fresh, strict=True):
                    probs[i] = _to_classes(p, self.strip.classes, classes)
        if todo:
            fresh = self._whole([crops[i] for i in todo])
            for i, p in zip(todo, fresh, strict=True):
                probs[i] = np.asarray(p, np.float32)
            self._second_look(image, cards, probs, todo)
            if self.strip is not None:  # the printed corner indices as a second witness
                read = self._adapted(read_corners(self.strip, image,
                                                  [cards[i].quad for i in todo]))
                for i, corners in zip(todo, read, strict=True):
                    probs[i] = fuse_table_card(probs[i], corners, classes,  # type: ignore[arg-type]
                                               self.strip.classes)
            if self.pips is not None:  # a standard card's suit, from its pips
                std = [i for i in todo if standard_mass(probs[i], classes) >= PIP_GATE]  # type: ignore[arg-type]
                suits = self.pips.card_suits(image, [cards[i].quad for i in std])
                for i, s in zip(std, suits, strict=True):
                    probs[i] = fuse_suits(probs[i], s, classes, PIP_FLOOR,  # type: ignore[arg-type]
                                          COURT_FLOOR)
        # the frame's sure cards calibrate its unsure ones (one deck, one light, one font); the
        # cache keeps each card's own reading, so the frame's say is taken afresh whenever any
        # card is new, moved or gone, and reused when the very same cards lie there
        if len(source) == len(set(source)) == len(cards) == len(self._cache):
            final = [self._cache[j].final for j in source]
        else:
            final = frame_consistent(crops, probs, classes,  # type: ignore[arg-type]
                                     UNSURE_BELOW, [c.covered for c in cards])
        out = []
        for c, p in zip(cards, final, strict=True):
            k = int(np.argmax(p))
            out.append(Detection(classes[k], float(p[k]), c.quad, c.quad_mm, c.zone, c.covered,
                                 p))
        if self.reuse:
            self._cache = [_Cached(c, t, p, f) for c, t, p, f in  # type: ignore[misc]
                           zip(centres, thumbs, probs, final, strict=True)]
        out.sort(key=lambda d: -d.confidence)
        return tuple(out), len(cards) - len(todo)

    def _second_look(self, image: np.ndarray, cards: tuple[Located, ...],
                     probs: list[np.ndarray | None], todo: list[int]) -> None:
        """Re-read the cards the classifier is unsure of from slightly larger crops, and
        average the readings (in place).

        WHY: a crop's edge decides which ring of pixels white-balances it and where its corner
        indices fall; a card that is a near-tie in one crop (2 or 3, green or yellow under a
        colour cast) often is not in a crop a few per cent wider, whose errors are partly
        independent. Only unsure cards (a few per frame) pay for the extra reads.
        """
        unsure = [i for i in todo if float(np.max(probs[i])) < UNSURE_BELOW]  # type: ignore[arg-type]
        if not unsure:
            return
        crops = [crop_card(image, _grown(cards[i].quad, s), CROP_SIZE)
                 for i in unsure for s in SECOND_LOOK_SCALES]
        more = np.asarray(self._whole(crops), np.float32)
        k = len(SECOND_LOOK_SCALES)
        for n, i in enumerate(unsure):
            probs[i] = (probs[i] + more[n * k:(n + 1) * k].sum(axis=0)) / (k + 1)


def _grown(quad: np.ndarray, scale: float) -> np.ndarray:
    """``quad`` scaled about its centre."""
    centre = quad.mean(axis=0)
    return (centre + (quad - centre) * scale).astype(np.float32)


def _to_classes(p: np.ndarray, have: tuple[str, ...], want: tuple[str, ...]) -> np.ndarray:
    """Probabilities over ``have`` re-indexed to ``want`` (classes it cannot tell get 0)."""
    out = np.zeros(len(want), np.float32)
    index = {c: k for k, c in enumerate(want)}
    for c, v in zip(have, p, strict=True):
        if c in index:
            out[index[c]] = v
    total = float(out.sum())
    return out / total if total > 0 else out


def _thumb(crop: np.ndarray) -> np.ndarray:
    t = cv2.resize(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY), (20, 30),
                   interpolation=cv2.INTER_AREA).astype(np.float32)
    return t - float(t.mean())


def _same_card(a: np.ndarray, b: np.ndarray) -> bool:
    return float(cv2.blur(np.abs(a - b), (5, 5)).max()) < REUSE_DIFF


def detect_still(image: np.ndarray, reader: TableReader) -> tuple[Detection, ...]:
    """All cards of one still image: on the mat when its markers (or corners) are seen, else
    the single most card-like region (a photo of one card, as in enrolment)."""
    return on_mat_or_off(image, reader, partial(single_card_detection, reader=reader))


def on_mat_or_off(image: np.ndarray, reader: TableReader,
                  off_mat: Callable[[np.ndarray], Sequence[Any]]) -> tuple[Any, ...]:
    """The cards of a still image: read on the mat when the mat is seen, else by ``off_mat``
    (a photo → its detections) on the photo at most :data:`vision.photo_size.PHOTO_SIDE` px
    on its longer side (:func:`vision.photo_size.read_at_photo_size`). Every reading of a
    still image goes through here, so every deck's photo is read at the same size."""
    on_mat = mat_detections(image, reader)
    return on_mat if on_mat is not None else read_at_photo_size(image, off_mat)


def still_view(image: np.ndarray, reader: TableReader) -> TableView:
    """A still image read on the mat as a table of its own: nothing reused from an earlier
    image, the mat found afresh (unless its corners were given)."""
    reader.reuse = False
    reader.geometry = None if reader.corners is None else reader.geometry
    return reader.read(image)


def mat_detections(image: np.ndarray, reader: TableReader) -> tuple[Detection, ...] | None:
    """The cards of a still image read on the mat, or None when the mat is not seen."""
    view = still_view(image, reader)
    return view.detections if view.error is None else None


def single_card_detection(image: np.ndarray, reader: TableReader,
                          cands: Sequence[Any] | None = None,
                          networks: Any | None = None) -> tuple[Detection, ...]:
    """The single most card-like region of a photo read as one card by the whole-card
    classifier (none when no region is card-shaped). ``cands``: the photo's
    :func:`vision.card_locator.candidates` when already found; ``networks``: what reads the
    located card (:func:`single_card_networks`), the reader's one classifier when None."""
    from vision.card_locator import SingleCardError, locate_card

    try:
        found = locate_card(image, CROP_SIZE, classifier=reader.classifier, cands=cands)
    except SingleCardError:
        return ()
    whole = reader.classifier if networks is None else networks
    p = np.asarray(whole.predict([found.crop], both_ways=reader.both_ways)[0])
    k = int(np.argmax(p))
    from vision.synth.scenes import canonical_quad

    return (Detection(reader.classes[k], float(p[k]), canonical_quad(found.quad), probs=p),)


def single_card_networks(reader: TableReader) -> Any:
    """What reads the whole face of a photo's one card: the reader's classifier with the shipped
    later trainings beside it (:func:`vision.classifier.with_later_trainings`), or the one
    classifier alone when the model is the user's own. A deck enrolled from photos adapts
    their reading (:meth:`vision.enrol.DeckProfile.predict`; until RULE 52 it replaced them by
    the one network whose features its prototypes are).

    WHY for the UNO check too (fifty-fourth session, RULE 49): averaged, the networks give a
    photo of standard cards a high P(UNO) far less often than the first one alone (4 of the CC
    BY training split's 557 photos at 0.9 or more, against 18) and a rendered UNO card more
    often (520 of 648 held to a webcam, against 507)."""
    from vision.classifier import with_later_trainings

    return with_later_trainings(reader.classifier, reader.model_path)


def uno_card_detection(image: np.ndarray, reader: TableReader,
                       cands: Sequence[Any] | None = None) -> Detection | None:
    """The one card of a photo read as a UNO face with its two printed corner indices
    (:func:`vision.single_card.read_single_card` with a :class:`vision.corner_index.
    CornerFusion` over the UNO faces, read at jittered quads); None when the reader has no
    corner-strip model or no region is card-shaped. ``probs`` holds the fused distribution at
    the UNO faces' columns of the reader's classes, zero elsewhere.

    WHY: this is the reading ``python -m vision.single_card --deck uno`` has measured since the
    third session, when the corners took its held-up renders from 66% to 82% right
    (models/README.md), and the figure the README gives for real UNO photos. A photo the
    whole-card classifier calls surely UNO is read over the UNO faces alone."""
    from protocol_runner.cards import uno_faces
    from vision.card_locator import SingleCardError
    from vision.corner_index import CornerFusion
    from vision.single_card import read_single_card_probs
    from vision.synth.scenes import canonical_quad

    if reader.strip is None:
        return None
    fusion = CornerFusion.over(reader.strip, reader.classes, [c.code for c in uno_faces()])
    try:
        found, code, conf, probs, codes = read_single_card_probs(
            image, single_card_networks(reader), fusion.codes, reader.photo_profile, fusion,
            cands=cands)
    except SingleCardError:
        return None
    full = np.zeros(len(reader.classes))
    full[[reader.classes.index(c) for c in codes]] = probs
    return Detection(code, conf, canonical_quad(found.quad), probs=full)
