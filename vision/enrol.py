"""Deck enrolment: one photo of each card of the user's own deck adapts recognition to it.

WHY prototypes: the classifier learned from renders, and a real deck's printing (its fonts, its
ellipse, its exact colours) is the largest gap left between renders and photos. One photo per card
is too little to fine-tune a network on a 2-core CPU in seconds, but enough to place one point per
card in the classifier's own embedding space (its penultimate features, the ONNX model's second
output). A new crop is then read by blending the classifier's probabilities with a softmax over
cosine similarities to the enrolled cards. Both constants of the blend are fixed a priori (not
fitted on any test photo). The profile is a small ``.npz``: codes, prototypes, constants and the
class list of the model it was made with (a profile only fits that model).

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
to 97.4% of cards right, and familiar printings lost nothing (models/README.md, "Deck
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
from vision.classifier import CardClassifier, _softmax
from vision.single_card import SingleCardError, locate_card, read_image, read_labels
from vision.strip_classifier import NO_INDEX

if TYPE_CHECKING:
    from vision.corner_index import CornerFusion
    from vision.recognise import Detection, TableReader

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}
PHOTOS, MAT = "photos", "mat"
PROTO_TEMPERATURE = 0.05  # cosine similarities are compared at this softness
BLEND = 0.7  # weight of the enrolled prototypes against the plain classifier


class EnrolError(ValueError):
    """Enrolment photos that cannot be used, or a profile that does not fit the model."""


@dataclass(frozen=True)
class EnrolPhoto:
    """One enrolment photo: its code, where it is, and how the plain classifier read it."""

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
    (models/README.md, "Deck enrolment")."""

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

    def check_model(self, classifier: CardClassifier) -> None:
        """Refuse a profile whose prototypes are features of another whole-card classifier:
        other classes, or other weights (retrained since with the same classes, or a profile
        saved before its classifier was recorded), whose features the prototypes do not
        match."""
        if tuple(classifier.classes) != self.model_classes:
            raise EnrolError(
                "this deck profile was made with another classifier (its class list differs): "
                "run `cardtable enrol` again with the current model"
            )
        if classifier.digest != self.model_digest:
            raise EnrolError(
                "this deck profile was made with another classifier (retrained since, or the "
                "profile is older than the record of it): run `cardtable enrol` again with the "
                "current model")

    def predict(self, classifier: CardClassifier, crops: list[np.ndarray],
                both_ways: bool = False) -> np.ndarray:
        """Probabilities (N, C) over the classifier's classes, adapted to the enrolled deck;
        ``both_ways`` also reads each crop turned 180° and averages, as
        :meth:`CardClassifier.predict` does."""
        if both_ways and len(crops):
            turned = [cv2.rotate(c, cv2.ROTATE_180) for c in crops]
            p = self.predict(classifier, list(crops) + turned)
            return (p[: len(crops)] + p[len(crops):]) / 2
        self.check_model(classifier)
        logits, feats = classifier.run(crops)
        p_clf = _softmax(logits / classifier.temperature)
        if len(self.codes) == 0 or len(feats) == 0:
            return p_clf
        f = feats / np.maximum(np.linalg.norm(feats, axis=1, keepdims=True), 1e-9)
        p_proto = _softmax((f @ self.prototypes.T) / self.temperature)
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
          corners: CornerFusion | None = None) -> DeckProfile:
    """Build the deck profile from photos on disk (see :func:`enrol_images`), reading them one
    at a time (a deck's full-size photos need not all be in memory at once)."""

    def images() -> Iterator[np.ndarray]:
        for photo in photos:
            try:
                yield read_image(photo.path)
            except SingleCardError as exc:
                raise EnrolError(f"{photo.path}: {exc}") from exc

    return enrol_images(photos, images(), classifier, corners)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)


def enrol_images(photos: Sequence[EnrolPhoto], images: Iterable[np.ndarray],
                 classifier: CardClassifier, corners: CornerFusion | None = None
                 ) -> DeckProfile:
    """Build the deck profile: each photo's card is located, rectified and embedded, upright and
    turned 180° (a card may lie either way); a code's prototype is the mean of its views. With
    ``corners`` (UNO decks), each card's two index corners are read by the strip network too
    and a code's corner prototype is the mean of those readings (codes the strip network does
    not know get none)."""
    unknown = sorted({p.code for p in photos} - set(classifier.classes))
    if unknown:
        raise EnrolError(f"the classifier has no class for {', '.join(unknown)}")
    views: dict[str, list[np.ndarray]] = {}
    corner_views: dict[str, list[np.ndarray]] = {}
    read: list[EnrolPhoto] = []
    for photo, image in zip(photos, images, strict=True):
        try:
            loc = locate_card(image, classifier=classifier)
        except SingleCardError as exc:
            raise EnrolError(f"{photo.path}: {exc}") from exc
        crops = [loc.crop, cv2.rotate(loc.crop, cv2.ROTATE_180)]
        emb = classifier.embed(crops)
        probs = classifier.predict(crops[:1])[0]
        i = int(probs.argmax())
        read.append(EnrolPhoto(photo.path, photo.code, classifier.classes[i], float(probs[i])))
        views.setdefault(photo.code, []).extend(emb)
        if corners is not None and photo.code in corners.codes:
            rows = corners.corner_probs(image, loc.quad)
            corner_views.setdefault(photo.code, []).extend(
                r for r in rows if not np.isnan(r).any())
    return _profile(views, corner_views, classifier,
                    tuple(corners.strip.classes) if corners else (), tuple(read), PHOTOS,
                    corners.strip.digest if corners else "")


def _index_part(p: np.ndarray, strip_classes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Corner readings (M, S) split into what they say of an index, renormalised over the
    other classes with ``NO_INDEX``'s column zero, and their belief (M, 1) that the corner shows
    no index (all zero for a network without that class).

    WHY: a corner that shows no index says nothing about the card; matched as it is against
    the enrolled corners, it matched the card whose own corners show none (a wild card's), and
    the enrolled deck's reading moved to that card (models/README.md, forty-seventh session)."""
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
             read: tuple[EnrolPhoto, ...], source: str, strip_digest: str = ""
             ) -> DeckProfile:
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
                       model_digest=classifier.digest, source=source)


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
