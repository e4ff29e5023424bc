"""Deck enrolment: one photo of each card of the user's own deck adapts recognition to it.

WHY prototypes: the classifier learned from renders, and a real deck's printing (its fonts, its
ellipse, its exact colours) is the largest gap left between renders and photos. One photo per card
is too little to fine-tune a network on a 2-core CPU in seconds, but enough to place one point per
card in the classifier's own embedding space (its penultimate features, the ONNX model's second
output). A new crop is then read by blending the classifier's probabilities with a softmax over
cosine similarities to the enrolled cards. Both constants of the blend are fixed a priori (not
fitted on any test photo). The profile is a small ``.npz``: codes, prototypes, constants and the
class list of the model it was made with (a profile only fits that model).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.classifier import CardClassifier, _softmax
from vision.single_card import SingleCardError, locate_card, read_image, read_labels

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}
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

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"codes": list(self.codes), "model_classes": list(self.model_classes),
                "temperature": self.temperature, "blend": self.blend}
        with path.open("wb") as fh:
            np.savez_compressed(fh, prototypes=self.prototypes.astype(np.float32),
                                meta=np.array(json.dumps(meta)))
        return path

    @classmethod
    def load(cls, path: str | Path) -> DeckProfile:
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                protos = z["prototypes"]
            return cls(tuple(meta["codes"]), protos, tuple(meta["model_classes"]),
                       float(meta["temperature"]), float(meta["blend"]))
        except (OSError, ValueError, KeyError) as exc:
            raise EnrolError(f"cannot read deck profile {path}: {exc}") from exc

    def check_model(self, classifier: CardClassifier) -> None:
        if tuple(classifier.classes) != self.model_classes:
            raise EnrolError(
                "this deck profile was made with another classifier (its class list differs): "
                "run `cardtable enrol` again with the current model"
            )

    def predict(self, classifier: CardClassifier, crops: list[np.ndarray]) -> np.ndarray:
        """Probabilities (N, C) over the classifier's classes, adapted to the enrolled deck."""
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


def enrol(photos: list[EnrolPhoto], classifier: CardClassifier) -> DeckProfile:
    """Build the deck profile: each photo's card is located, rectified and embedded, upright and
    turned 180° (a card may lie either way); a code's prototype is the mean of its views."""
    unknown = sorted({p.code for p in photos} - set(classifier.classes))
    if unknown:
        raise EnrolError(f"the classifier has no class for {', '.join(unknown)}")
    views: dict[str, list[np.ndarray]] = {}
    read: list[EnrolPhoto] = []
    for photo in photos:
        try:
            loc = locate_card(read_image(photo.path), classifier=classifier)
        except SingleCardError as exc:
            raise EnrolError(f"{photo.path}: {exc}") from exc
        crops = [loc.crop, cv2.rotate(loc.crop, cv2.ROTATE_180)]
        emb = classifier.embed(crops)
        probs = classifier.predict(crops[:1])[0]
        i = int(probs.argmax())
        read.append(EnrolPhoto(photo.path, photo.code, classifier.classes[i], float(probs[i])))
        views.setdefault(photo.code, []).extend(emb)
    codes = tuple(sorted(views))
    protos = np.stack([np.mean(views[c], axis=0) for c in codes])
    protos /= np.maximum(np.linalg.norm(protos, axis=1, keepdims=True), 1e-9)
    return DeckProfile(codes, protos.astype(np.float32), tuple(classifier.classes),
                       photos=tuple(read))
