"""Deck enrolment: one photo of each card of the user's own deck adapts recognition to it.

WHY prototypes: the classifier learned from renders, and a real deck's printing (its fonts, its
ellipse, its exact colours) is the largest gap left between renders and photos. One photo per card
is too little to fine-tune a network on a 2-core CPU in seconds, but enough to place one point per
card in the classifier's own embedding space (its penultimate features, the ONNX model's second
output). A new crop is then read by blending the reader's probabilities (all its whole-card
networks) with a softmax over cosine similarities to the enrolled cards. The similarities'
temperature is fixed a priori; the blend of a profile made from photos is what the reader
without a profile misses of those very photos (:func:`plain_shortfall`), so a deck it already
reads is left as it reads it (RULE 52), and a mat profile's is :data:`BLEND`. Neither is fitted
on any test photo. The profile is a small ``.npz``: codes, prototypes, constants and the class
list and digest of the model it was made with (a profile only fits that model).

The corner indices are adapted the same way (:meth:`DeckProfile.adapt_corners`): the strip
network (:mod:`vision.corner_index`) has no embedding output, so a card's corner prototype is its
mean probability vector over both index corners of its enrolment photo, compared by the
Hellinger affinity (the cosine of square-rooted probabilities), with the same temperature and
blend. WHY: the renders-only strip network reads some real corner fonts consistently as others
(a 1 as a 7); an enrolled deck's "reads like a 7" is then its own 1. Without this the unadapted
corners outvoted the adapted whole card (enrolment measured 75% without corners, 69% with;
with the corners adapted too, 91.4% of the other photos of the enrolled deck).

On the mat (:func:`enrol_mat`, ``cardtable enrol --mat``) the deck is laid out in a fixed order
and photographed, and each card is cut out as the table reader cuts it. WHY not the photos of
single cards: their prototypes, blended into the table's readings, lost 105 of 1,000 cards of
one rendered printing; enrolled on the mat, the table of an unfamiliar printing went from 87.8%
to 97.4% of cards right, and familiar printings lost nothing (models/HISTORY.md, "Deck
enrolment"). A profile records where it was enrolled and is used only there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from protocol_runner.cards import BACK
from vision.card_locator import (
    Candidate,
    Located,
    SingleCardError,
    candidates,
    locate_card,
    read_image,
)
from vision.classifier import CardClassifier, Ensemble, _softmax
from vision.photo_size import working_copy
from vision.single_card import read_labels, read_single_card_probs
from vision.strip_classifier import NO_INDEX

if TYPE_CHECKING:
    from vision.corner_index import CornerFusion
    from vision.recognise import Detection, TableReader

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}
PHOTOS, MAT = "photos", "mat"
PROTO_TEMPERATURE = 0.05  # cosine similarities are compared at this softness
BLEND = 0.7
"""Weight of the enrolled prototypes against the plain reading: a mat profile's, and the most
a photo profile's may be (:func:`plain_shortfall`)."""


class EnrolError(ValueError):
    """Enrolment photos that cannot be used, or a profile that does not fit the model."""


@dataclass(frozen=True)
class EnrolPhoto:
    """One enrolment photo: its code, where it is, and how the reader without a profile read
    it (its code and probability)."""

    path: str
    code: str
    read_as: str = ""
    confidence: float = 0.0


@dataclass(frozen=True)
class DeckProfile:
    """Prototype embeddings of the enrolled cards of one deck, for one classifier."""

    codes: tuple[str, ...]
    prototypes: np.ndarray  # (K, F) L2-normalised
    model_classes: tuple[str, ...]
    temperature: float = PROTO_TEMPERATURE
    blend: float = BLEND
    photos: tuple[EnrolPhoto, ...] = field(default=())
    corner_codes: tuple[str, ...] = ()
    corner_prototypes: np.ndarray | None = None  # (K2, S) unit vectors of sqrt probabilities
    strip_classes: tuple[str, ...] = ()
    strip_digest: str = ""
    """:func:`vision.digest.weights_digest` of the corner networks that read the
    corner prototypes ("" in a profile saved before it was recorded)."""
    model_digest: str = ""
    """The whole-card classifier's :attr:`vision.classifier.CardClassifier.digest` when the
    prototypes were made ("" in a profile saved before it was recorded)."""
    source: str = PHOTOS
    """Where the deck was photographed: ``PHOTOS`` (one card per photo, :func:`enrol`) or
    ``MAT`` (laid out on the mat, :func:`enrol_mat`). A profile is used only where it was made:
    prototypes of a card photographed alone do not match the same card read small on the mat
    (models/HISTORY.md, "Deck enrolment")."""

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"codes": list(self.codes), "model_classes": list(self.model_classes),
                "temperature": self.temperature, "blend": self.blend,
                "corner_codes": list(self.corner_codes),
                "strip_classes": list(self.strip_classes), "strip_digest": self.strip_digest,
                "model_digest": self.model_digest, "source": self.source}
        arrays = {"prototypes": self.prototypes.astype(np.float32)}
        if self.corner_prototypes is not None:
            arrays["corner_prototypes"] = self.corner_prototypes.astype(np.float32)
        with path.open("wb") as fh:
            np.savez_compressed(fh, meta=np.array(json.dumps(meta)), **arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> DeckProfile:
        """A saved profile (one saved before corner prototypes existed loads without them)."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                protos = z["prototypes"]
                corner = z["corner_prototypes"] if "corner_prototypes" in z.files else None
            return cls(tuple(meta["codes"]), protos, tuple(meta["model_classes"]),
                       float(meta["temperature"]), float(meta["blend"]),
                       corner_codes=tuple(meta.get("corner_codes", ())),
                       corner_prototypes=corner,
                       strip_classes=tuple(meta.get("strip_classes", ())),
                       strip_digest=str(meta.get("strip_digest", "")),
                       model_digest=str(meta.get("model_digest", "")),
                       source=str(meta.get("source", PHOTOS)))
        except (OSError, ValueError, KeyError) as exc:
            raise EnrolError(f"cannot read deck profile {path}: {exc}") from exc

    @property
    def on_mat(self) -> bool:
        """Whether it was enrolled on the mat (it then adapts the cards on the mat, and only
        them)."""
        return self.source == MAT

    def check_source(self, on_mat: bool, path: str | Path = "this deck profile") -> None:
        """Refuse a profile enrolled elsewhere than where it is to be used."""
        if self.on_mat != on_mat:
            where = ("on the mat (`cardtable enrol --mat`)" if self.on_mat
                     else "from photos of single cards")
            need = ("enrol the deck on the mat with `cardtable enrol --mat` (see `cardtable "
                    "enrol --mat --order`)" if on_mat else "enrol it from photos of single "
                    "cards with `cardtable enrol PHOTOS`")
            raise EnrolError(f"{path} was enrolled {where}, and a profile adapts only what it "
                             f"was enrolled from: {need}")

    def check_strip(self, strip_classes: Sequence[str], digest: str | None = None) -> None:
        """Refuse a profile whose corners were enrolled with another strip model: other
        classes, or (``digest`` given, the reading networks' :func:`weights_digest`) other
        weights, such as networks retrained since or a profile that never recorded them."""
        if not self.corner_codes:
            return
        if tuple(strip_classes) != self.strip_classes:
            raise EnrolError(
                "this deck profile's corners were enrolled with another strip model: run "
                "`cardtable enrol` again with the current models")
        if digest is not None and digest != self.strip_digest:
            raise EnrolError(
                "this deck profile's corners were enrolled with other corner networks than "
                "these (retrained since, or the profile is older than the record of them): run "
                "`cardtable enrol` again with the current models")

    def adapt_corners(self, probs: np.ndarray, strip_classes: Sequence[str],
                      digest: str | None = None) -> np.ndarray:
        """Corner readings (M, S) over ``strip_classes``, adapted to the enrolled deck like the
        whole-card reading: blended with a softmax over the Hellinger affinities to the enrolled
        cards' corner prototypes. A NaN row (a corner not seen) stays NaN; a profile without
        corner prototypes changes nothing."""
        if self.corner_prototypes is None or not self.corner_codes:
            return probs
        self.check_strip(strip_classes, digest)
        out = np.array(probs, np.float64)
        seen = ~np.isnan(out).any(axis=1)
        if not seen.any():
            return out
        p = out[seen] / np.maximum(out[seen].sum(1, keepdims=True), 1e-12)
        p, none = _index_part(p, self.strip_classes)
        root = _unit_rows(np.sqrt(np.maximum(p, 0.0)))
        p_proto = _softmax((root @ self.corner_prototypes.T) / self.temperature)
        full = np.zeros_like(p)
        full[:, [self.strip_classes.index(c) for c in self.corner_codes]] = p_proto
        out[seen] = (1 - none) * ((1 - self.blend) * p + self.blend * full)
        if NO_INDEX in self.strip_classes:
            out[seen, self.strip_classes.index(NO_INDEX)] = none[:, 0]
        return out

    def check_model(self, classifier: CardClassifier | Ensemble) -> None:
        """Refuse a profile whose prototypes are features of none of ``classifier``'s networks:
        other classes, or other weights (retrained since with the same classes, or a profile
        saved before its classifier was recorded), whose features the prototypes do not
        match."""
        self._own_network(classifier)

    def _own_network(self, classifier: CardClassifier | Ensemble) -> CardClassifier:
        """The network of ``classifier`` (one, or a member of an ensemble) whose features the
        prototypes are (see :meth:`check_model`)."""
        if tuple(classifier.classes) != self.model_classes:
            raise EnrolError(
                "this deck profile was made with another classifier (its class list differs): "
                "run `cardtable enrol` again with the current model"
            )
        for net in getattr(classifier, "members", (classifier,)):
            if net.digest == self.model_digest:
                return net
        raise EnrolError(
            "this deck profile was made with another classifier (retrained since, or the "
            "profile is older than the record of it): run `cardtable enrol` again with the "
            "current model")

    def predict(self, classifier: CardClassifier | Ensemble, crops: list[np.ndarray],
                both_ways: bool = False) -> np.ndarray:
        """Probabilities (N, C) over the classifier's classes, adapted to the enrolled deck:
        ``classifier``'s own reading (an :class:`vision.classifier.Ensemble` reads with all its
        networks) blended by :attr:`blend` with a softmax over the similarities of the crops'
        features to the prototypes, taken from the network they were made with.
        ``both_ways`` also reads each crop turned 180° and averages, as
        :meth:`CardClassifier.predict` does.

        WHY the whole classifier and not the prototypes' network alone: a profile used to
        replace the later trainings and the second way up by one network read one way, and
        enrolment then read a familiar deck worse than no enrolment (models/HISTORY.md, RULE
        52)."""
        net = self._own_network(classifier)
        p_clf, feats = classifier.read(crops, both_ways, own=net)  # net read once
        if len(self.codes) == 0 or len(crops) == 0:
            return p_clf
        f = feats / np.maximum(np.linalg.norm(feats, axis=1, keepdims=True), 1e-9)
        p_proto = _softmax((f @ self.prototypes.T) / self.temperature)
        p_proto = p_proto.reshape(len(feats) // len(crops), len(crops), -1).mean(0)
        full = np.zeros_like(p_clf)
        cols = [classifier.classes.index(c) for c in self.codes]
        np.add.at(full, (slice(None), cols), p_proto)
        return (1 - self.blend) * p_clf + self.blend * full


def enrolment_photos(source: str | Path) -> list[EnrolPhoto]:
    """The photos of ``source``: a ``labels.csv`` (image, code) or a folder of images named by
    code (``7R.jpg``; ``7R_2.jpg`` for a second photo of the same card)."""
    from protocol_runner.cards import parse_card

    source = Path(source)
    if source.is_file() and source.suffix.lower() == ".csv":
        items = [(r["path"], r["code"]) for r in read_labels(source)]
    elif source.is_dir():
        items = [(str(p), p.stem.split("_")[0]) for p in sorted(source.iterdir())
                 if p.suffix.lower() in IMAGE_SUFFIXES]
    else:
        raise EnrolError(f"{source} is neither a labels.csv nor a folder of card photos")
    if not items:
        raise EnrolError(f"no card photos in {source}: name them by code, e.g. 7R.jpg, +2B.png")
    photos = []
    for path, code in items:
        try:
            photos.append(EnrolPhoto(path, parse_card(code).code))
        except ValueError as exc:
            raise EnrolError(f"{path}: its name does not give a card code ({exc})") from exc
    return photos


def enrol(photos: list[EnrolPhoto], classifier: CardClassifier,
          corners: CornerFusion | None = None,
          networks: CardClassifier | Ensemble | None = None) -> DeckProfile:
    """Build the deck profile from photos on disk (see :func:`enrol_images`), reading them one
    at a time (a deck's full-size photos need not all be in memory at once), each at the size
    ``cardtable detect`` reads a photo at (:func:`vision.photo_size.working_copy`)."""

    def images() -> Iterator[np.ndarray]:
        for photo in photos:
            try:
                yield working_copy(read_image(photo.path))[0]
            except SingleCardError as exc:
                raise EnrolError(f"{photo.path}: {exc}") from exc

    return enrol_images(photos, images(), classifier, corners, networks)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)


def enrol_images(photos: Sequence[EnrolPhoto], images: Iterable[np.ndarray],
                 classifier: CardClassifier, corners: CornerFusion | None = None,
                 networks: CardClassifier | Ensemble | None = None) -> DeckProfile:
    """Build the deck profile: each photo's card is located, rectified and embedded by
    ``classifier``, upright and turned 180° (a card may lie either way); a code's prototype is
    the mean of its views. With ``corners`` (UNO decks), each card's two index corners are read
    by the strip network too and a code's corner prototype is the mean of those readings (codes
    the strip network does not know get none).

    Each photo is also read as it would be without a profile, by ``networks`` (the whole-card
    networks the reader uses; ``classifier`` when None) and ``corners``: that reading is what
    :attr:`EnrolPhoto.read_as` records, and its shortfall on the user's own photos is the
    profile's blend (:func:`plain_shortfall`)."""
    unknown = sorted({p.code for p in photos} - set(classifier.classes))
    if unknown:
        raise EnrolError(f"the classifier has no class for {', '.join(unknown)}")
    networks = classifier if networks is None else networks
    views: dict[str, list[np.ndarray]] = {}
    corner_views: dict[str, list[np.ndarray]] = {}
    read: list[EnrolPhoto] = []
    truth: list[float] = []
    for photo, image in zip(photos, images, strict=True):
        try:
            cands = candidates(image)  # found once for the prototypes and the plain reading
            loc = locate_card(image, classifier=classifier, cands=cands)
            code, p, p_true = _plain_reading(image, loc, cands, photo.code, networks, corners)
        except SingleCardError as exc:
            raise EnrolError(f"{photo.path}: {exc}") from exc
        crops = [loc.crop, cv2.rotate(loc.crop, cv2.ROTATE_180)]
        views.setdefault(photo.code, []).extend(classifier.embed(crops))
        read.append(EnrolPhoto(photo.path, photo.code, code, p))
        truth.append(p_true)
        if corners is not None and photo.code in corners.codes:
            rows = corners.corner_probs(image, loc.quad)
            corner_views.setdefault(photo.code, []).extend(
                r for r in rows if not np.isnan(r).any())
    return _profile(views, corner_views, classifier,
                    tuple(corners.strip.classes) if corners else (), tuple(read), PHOTOS,
                    corners.strip.digest if corners else "", plain_shortfall(truth))


def _plain_reading(image: np.ndarray, loc: Located, cands: Sequence[Candidate], code: str,
                   networks: CardClassifier | Ensemble, corners: CornerFusion | None
                   ) -> tuple[str, float, float]:
    """How the reader reads an enrolment photo without a profile: (its code, its probability,
    the probability of the photo's true ``code``). With ``corners``, as a photo of one UNO card
    is read (:func:`vision.single_card.read_single_card_probs`, from the photo's proposals
    ``cands``); without, the whole card at ``loc`` both ways up."""
    if corners is not None:
        _, read, p, probs, codes = read_single_card_probs(image, networks, None, None, corners,
                                                          cands=cands)
        return read, p, float(probs[codes.index(code)]) if code in codes else 0.0
    probs = networks.predict([loc.crop], both_ways=True)[0]
    k = int(probs.argmax())
    return networks.classes[k], float(probs[k]), float(probs[networks.classes.index(code)])


def plain_shortfall(truth: Sequence[float]) -> float:
    """The blend of a profile enrolled from photos: 1 − the mean probability the reader
    without a profile gives the true code of the user's own photos, at most :data:`BLEND`.

    WHY: the profile's prototypes are a second reader, right on the deck's own photos by
    construction, and the plain reader's shortfall on those photos is the one measure at hand
    of how much it misses on this deck. A printing the reader already reads gets almost no
    adaptation (a blend of 0.7, fixed a priori when the reader read 65% of the real photos,
    read a familiar deck worse than no profile); an unfamiliar one gets it in proportion to
    what is missing (models/HISTORY.md, RULE 52)."""
    if not truth:
        return BLEND
    return float(min(BLEND, max(0.0, 1.0 - float(np.mean(truth)))))


def _index_part(p: np.ndarray, strip_classes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Corner readings (M, S) split into what they say of an index, renormalised over the
    other classes with ``NO_INDEX``'s column zero, and their belief (M, 1) that the corner shows
    no index (all zero for a network without that class).

    WHY: a corner that shows no index says nothing about the card; matched as it is against
    the enrolled corners, it matched the card whose own corners show none (a wild card's), and
    the enrolled deck's reading moved to that card (models/HISTORY.md, forty-seventh session)."""
    p = np.array(p, np.float64)
    if NO_INDEX not in strip_classes:
        return p, np.zeros((len(p), 1))
    k = list(strip_classes).index(NO_INDEX)
    none = p[:, k:k + 1].copy()
    p[:, k] = 0.0
    return p / np.maximum(p.sum(1, keepdims=True), 1e-12), none


NO_INDEX_SHARE = 0.5
"""An enrolled card whose corners read no index with at least this mean belief gets no corner
prototype: its corner print is one the corner networks do not read as an index (a wild card's
corner), so nothing of a test card's corner should be matched to it."""


def _profile(views: dict[str, list[np.ndarray]], corner_views: dict[str, list[np.ndarray]],
             classifier: CardClassifier, strip_classes: tuple[str, ...],
             read: tuple[EnrolPhoto, ...], source: str, strip_digest: str = "",
             blend: float = BLEND) -> DeckProfile:
    """A code's prototype is the mean of its embeddings; its corner prototype the mean of its
    corners' readings of an index (:func:`_index_part`), square-rooted (codes with no corner
    seen, or whose corners mostly read no index, ``NO_INDEX_SHARE``, get none)."""
    codes = tuple(sorted(views))
    protos = _unit_rows(np.stack([np.mean(views[c], axis=0) for c in codes]))
    means = {c: _index_part(np.mean(v, axis=0)[None], strip_classes) for c, v in
             corner_views.items() if v}
    corner_codes = tuple(sorted(c for c, (_, none) in means.items()
                                if float(none[0, 0]) < NO_INDEX_SHARE))
    corner_protos = None
    if corner_codes:
        mean = np.vstack([means[c][0] for c in corner_codes])
        corner_protos = _unit_rows(np.sqrt(np.maximum(mean, 0.0))).astype(np.float32)
    return DeckProfile(codes, protos.astype(np.float32), tuple(classifier.classes),
                       photos=read, corner_codes=corner_codes, corner_prototypes=corner_protos,
                       strip_classes=strip_classes if corner_codes else (),
                       strip_digest=strip_digest if corner_codes else "",
                       model_digest=classifier.digest, source=source, blend=blend)


# ----------------------------------------------------------------------------- on the mat

MAT_ROWS = 4
"""Cards per column of an enrolment layout."""
MAT_COLUMNS = 13
"""Columns of ``MAT_ROWS`` cards the default mat's work area holds side by side."""
MAX_SHIFT = 3


def mat_order(deck: str) -> tuple[str, ...]:
    """The order a deck is laid out for :func:`enrol_mat`: every face, then one card face down.

    WHY every face and the back: on the mat each of them is a card the table must read, and
    the back is a printing too (a face-down card is the ``BACK`` class)."""
    from vision.synth.faces import STANDARD_FACE_CODES, UNO_FACE_CODES

    faces = {"uno": UNO_FACE_CODES, "standard": STANDARD_FACE_CODES}
    if deck not in faces:
        raise EnrolError(f"deck must be uno or standard, got {deck!r}")
    return (*faces[deck], BACK)


def mat_photos(deck: str) -> list[tuple[str, ...]]:
    """:func:`mat_order` cut into the photos it takes: as many cards per photo as the work
    area holds (``MAT_COLUMNS`` × ``MAT_ROWS``)."""
    order, per = mat_order(deck), MAT_COLUMNS * MAT_ROWS
    return [order[k:k + per] for k in range(0, len(order), per)]


def mat_photo_cards(image: np.ndarray, reader: TableReader, name: str) -> list[Detection]:
    """The cards of one enrolment photo in laying order: the work area's columns left to right
    (band after band), each top to bottom. A gap before the last card, or a card off the work
    area, is an error: it would shift every later card's code."""
    from vision.layout import zone_columns
    from vision.recognise import still_view

    view = still_view(image, reader)
    if view.error is not None:
        raise EnrolError(f"{name}: {view.error}")
    work = [d for d in view.detections if d.zone == "work"]
    off = len(view.detections) - len(work)
    if off:
        raise EnrolError(f"{name}: {off} card(s) lie outside the work area; lay every card in "
                         f"the work area, in columns of {MAT_ROWS}")
    cells = [(c, r, d) for c, col in enumerate(zone_columns(work, MAT_ROWS), start=1)
             for r, d in enumerate(col, start=1)]
    last = max((k for k, (_, _, d) in enumerate(cells) if d is not None), default=-1)
    for c, r, d in cells[:last]:
        if d is None:
            raise EnrolError(f"{name}: no card found at column {c}, row {r}: lay the cards in "
                             f"columns of {MAT_ROWS} with no gap, not touching, all in view")
    return [d for _, _, d in cells if d is not None]


def enrol_mat(photos: Sequence[tuple[str, np.ndarray]], codes: Sequence[str],
              reader: TableReader) -> DeckProfile:
    """Build a deck profile from photos of the deck laid out on the mat in ``codes`` order
    (:func:`mat_order`), continued from one photo to the next: each card is cut out as the
    table reads it (same crop size and scale, so the prototypes match what the table will
    compare them with), embedded upright and turned, and its two index corners read.

    WHY the checks: a card missed or laid out of order would enrol the wrong code for every
    card after it, so the count must match exactly, and an order that the plain reader agrees
    with better when shifted by a few places is refused."""
    from vision.corner_index import read_corners
    from vision.detect import crop_card
    from vision.recognise import CROP_SIZE

    classifier = reader.classifier
    if reader.profile is not None:
        raise EnrolError("enrol with a reader that has no deck profile")
    unknown = sorted(set(codes) - set(classifier.classes))
    if unknown:
        raise EnrolError(f"the classifier has no class for {', '.join(unknown)}")
    found: list[tuple[str, np.ndarray, list[Detection]]] = [
        (name, image, mat_photo_cards(image, reader, name)) for name, image in photos]
    counts = [len(cards) for _, _, cards in found]
    if sum(counts) != len(codes):
        each = ", ".join(f"{name}: {n}" for (name, _, _), n in zip(found, counts, strict=True))
        raise EnrolError(f"found {sum(counts)} cards ({each}) for the {len(codes)} of the "
                         f"enrolment order: check that every card lies flat in view, not "
                         f"touching another, and none is missing or extra")
    read = [d.code for _, _, cards in found for d in cards]
    agree = {s: sum(read[i] == codes[i + s] for i in range(len(codes)) if 0 <= i + s < len(codes))
             for s in range(-MAX_SHIFT, MAX_SHIFT + 1)}
    best = max(agree, key=lambda s: (agree[s], s == 0))
    if best != 0:
        raise EnrolError(f"the cards do not lie in the enrolment order: {agree[best]} of them "
                         f"read as the card {abs(best)} place(s) "
                         f"{'later' if best > 0 else 'earlier'} in the order, {agree[0]} as the "
                         "card of their place. Lay them again as `cardtable enrol --mat "
                         "--order` prints")
    strip = reader.strip
    views: dict[str, list[np.ndarray]] = {}
    corner_views: dict[str, list[np.ndarray]] = {}
    enrolled: list[EnrolPhoto] = []
    k = 0
    for name, image, cards in found:
        crops = [crop_card(image, d.quad, CROP_SIZE) for d in cards]
        emb = classifier.embed(crops + [cv2.rotate(c, cv2.ROTATE_180) for c in crops])
        rows = read_corners(strip, image, [d.quad for d in cards]) if strip is not None else None
        for i, d in enumerate(cards):
            code = codes[k]
            k += 1
            enrolled.append(EnrolPhoto(name, code, d.code, float(d.confidence)))
            views.setdefault(code, []).extend((emb[i], emb[len(cards) + i]))
            if rows is not None and code in strip.classes:
                corner_views.setdefault(code, []).extend(
                    r for r in rows[i] if not np.isnan(r).any())
    return _profile(views, corner_views, classifier,
                    tuple(strip.classes) if strip is not None else (), tuple(enrolled), MAT,
                    strip.digest if strip is not None else "")
