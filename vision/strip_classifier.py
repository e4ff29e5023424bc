"""Strip classifier at run time: read a covered card from the corner a fanned layout leaves visible.

WHY: in a fanned layout (columns overlapping sideways, rows overlapping downwards) a covered card
shows only its top-left corner, about ``CORNER_MM`` = 13 × 22 mm: the printed corner index and a
sliver of its field colour. The whole-card classifier (:mod:`vision.classifier`) reads that crop
as the cards lying on top of it. This network (trained by :mod:`vision.train.strip`) sees only
the corner patch, cut from the card's quad the same way in training and here. Runs on
onnxruntime only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache, partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from protocol_runner.cards import BACK, uno_faces
from vision.classifier import cpu_session
from vision.digest import weights_digest
from vision.parallel import each_at_once

DEFAULT_STRIP_MODEL = Path(__file__).resolve().parent.parent / "models" / "strip_classifier.onnx"
WIDE_STRIP_MODELS = (DEFAULT_STRIP_MODEL.with_name("strip_classifier_wide.onnx"),
                     DEFAULT_STRIP_MODEL.with_name("strip_classifier_wide_seed1.onnx"))
"""The corner-strip networks trained on wide printings too (``cardtable train --part strip
--wide`` and ``--wide --seed 1``), read in place of the shipped one where one card's index
corners are read (:func:`single_card_strip`); the table's fanned strips are read by the shipped
one alone. They also know ``NO_INDEX``, a corner that shows no index."""
CORNER_MM = (13.0, 22.0)
"""The part of a card that stays visible at the closest fanning (13 mm columns, 22 mm rows)."""
CARD_MM = (57.0, 88.0)
STRIP_SIZE = 32
WIDE_STRIP_SIZE = 64
"""The input side of the one-card corner networks (:data:`WIDE_STRIP_MODELS`; the table's
network reads ``STRIP_SIZE``). WHY larger: one card held up to a camera or photographed by a
phone shows its index at 4-12 px/mm, and at 32 px the 13 × 22 mm patch keeps about 1.5 px/mm
across its height: an italic 6 over its bar read as 8, a 9 as 6 (real webcam close-ups,
models/HISTORY.md, RULE 33). WHY 64, not 48: the classifier's input is a multiple of its stride,
32 (ultralytics trains a 48 request at 64). The table's patches are seen at about 1 px/mm and
gain nothing."""
STRIP_CLASSES: tuple[str, ...] = tuple(sorted([c.code for c in uno_faces()] + [BACK]))
NO_INDEX = "none"
"""The class of the one-card corner networks (``WIDE_STRIP_MODELS``) for a patch that shows
no index (the field, the oval, a corner without one): what a quad located wrong or a card
taken the wrong way round puts where the index should be. It says nothing about the card
(:func:`vision.corner_index.index_readings`). Not a class of the table's network, whose fanned
strips always show an index or a back."""


class StripClassifierError(ValueError):
    """A strip model that cannot be loaded (the message says how to get one)."""


def corner_patch_quad(quad: np.ndarray, card_mm: tuple[float, float] = CARD_MM) -> np.ndarray:
    """The top-left ``CORNER_MM`` patch of a card given by its whole-card ``quad`` (canonical
    order: top-left, top-right, bottom-right, bottom-left), in the same coordinates."""
    q = np.asarray(quad, np.float32)
    fx, fy = CORNER_MM[0] / card_mm[0], CORNER_MM[1] / card_mm[1]
    right = (q[1] - q[0]) * fx
    down = (q[3] - q[0]) * fy
    return np.float32([q[0], q[0] + right, q[0] + right + down, q[0] + down])


def cut_patch(image: np.ndarray, quad: np.ndarray, size: int = STRIP_SIZE) -> np.ndarray:
    """The corner patch of the card at ``quad`` (image px), as a network's ``size``-square
    input."""
    src = corner_patch_quad(quad)
    # sample at the image's own resolution first (as the camera saw it), then to the input size
    w = max(6, int(round(float(np.linalg.norm(src[1] - src[0])))))
    h = max(8, int(round(float(np.linalg.norm(src[3] - src[0])))))
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    M = cv2.getPerspectiveTransform(src, dst)
    low = cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_AREA,
                              borderMode=cv2.BORDER_REPLICATE)
    # a table camera's patch is smaller than the input and is enlarged; a close-up's (a single
    # card, a phone photo) is larger and must be averaged down, not point-sampled (aliasing
    # thins the index strokes into noise the network never saw)
    if max(w, h) > size:
        low = cv2.resize(low, (min(w, size), min(h, size)), interpolation=cv2.INTER_AREA)
    return cv2.resize(low, (size, size), interpolation=cv2.INTER_LINEAR)


def network_input(patches: Sequence[np.ndarray]) -> np.ndarray:
    """(N, 3, S, S) float32 RGB in [0, 1]: S-square BGR patches as a network reads them."""
    x = np.stack([cv2.cvtColor(p, cv2.COLOR_BGR2RGB) for p in patches]).astype(np.float32)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2) / 255.0)


def soften(probs: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax probabilities re-tempered: ``p ** (1 / T)``, renormalised (= softmax(logits/T))."""
    if temperature == 1.0:
        return probs
    logp = np.log(np.maximum(probs, 1e-12)) / temperature
    logp -= logp.max(axis=1, keepdims=True)
    out = np.exp(logp)
    return out / out.sum(axis=1, keepdims=True)


def fit_temperature(probs: np.ndarray, labels: np.ndarray) -> float:
    """The temperature that minimises the negative log-likelihood of ``labels`` (indices)."""
    grid = np.exp(np.linspace(np.log(0.5), np.log(8.0), 60))
    rows = np.arange(len(labels))
    nll = [-np.log(np.maximum(soften(probs, t)[rows, labels], 1e-12)).mean() for t in grid]
    return float(grid[int(np.argmin(nll))])


@dataclass
class StripClassifier:
    """Corner patches in, class probabilities out (columns = ``classes``)."""

    session: Any
    classes: tuple[str, ...]
    input_name: str
    temperature: float = 1.0
    """Softmax temperature fitted on held-out renders: the joint decoding (``vision.prior``)
    weighs and flags readings by these probabilities, so they must mean what they say."""
    path: Path | None = None
    """The file it was loaded from (:func:`single_card_strip` replaces the shipped one only)."""
    size: int = STRIP_SIZE
    """The side of its square input (the ``input`` of its JSON): what :func:`cut_patch` cuts."""

    @classmethod
    def load(cls, path: str | Path = DEFAULT_STRIP_MODEL, threads: int = 1) -> StripClassifier:
        path = Path(path)
        meta_path = path.with_suffix(".json")
        if not path.is_file() or not meta_path.is_file():
            raise StripClassifierError(
                f"{path}: no strip classifier (or its .json) here; build it with "
                "`cardtable train` (needs the [train] extra)")
        meta = json.loads(meta_path.read_text())
        session = cpu_session(path, threads)
        return cls(session, tuple(meta["classes"]), session.get_inputs()[0].name,
                   float(meta.get("temperature", 1.0)), path.resolve(),
                   int(meta.get("input", STRIP_SIZE)))

    @cached_property
    def digest(self) -> str:
        """:func:`weights_digest` of its file (computed once: a deck profile's adaptation checks
        it at every reading)."""
        return weights_digest([self.path])

    def predict_patches(self, patches: Sequence[np.ndarray]) -> np.ndarray:
        """(N, C) probabilities for BGR patches of its input ``size``."""
        if not len(patches):
            return np.zeros((0, len(self.classes)), np.float32)
        return self.predict_input(network_input(patches))

    def predict_input(self, x: np.ndarray) -> np.ndarray:
        """(N, C) probabilities for a batch already made the network's input
        (:func:`network_input`)."""
        out = np.asarray(self.session.run(None, {self.input_name: x})[0], np.float64)
        return soften(out, self.temperature).astype(np.float32)

    def predict(self, image: np.ndarray, quads: Sequence[np.ndarray]) -> np.ndarray:
        """(N, C) probabilities for the cards at ``quads`` (whole-card quads in image px)."""
        return self.predict_patches([cut_patch(image, q, self.size) for q in quads])


@dataclass(frozen=True)
class StripEnsemble:
    """Corner-strip networks over the same classes read as one: the renormalised geometric mean
    of their probabilities for each patch.

    WHY: one card's index corners are read by two trainings on wide printings
    (:func:`single_card_strip`), as the whole-card reader's members are read
    (:class:`vision.classifier.Ensemble`): an average keeps either's quirk from deciding alone.
    The shipped network (plain printings only) once stood beside one of them; never having seen
    a 6 or 9 without its bar, it decided the pair on such corners (models/HISTORY.md,
    forty-fifth session).
    """

    members: tuple[StripClassifier, ...]

    def __post_init__(self) -> None:
        first = self.members[0] if self.members else None
        if first is None or any((m.classes, m.size) != (first.classes, first.size)
                                for m in self.members):
            raise StripClassifierError("a strip ensemble needs one network or more, all over "
                                       "the same classes at the same input size")

    @property
    def classes(self) -> tuple[str, ...]:
        return self.members[0].classes

    @property
    def size(self) -> int:
        return self.members[0].size

    @cached_property
    def digest(self) -> str:
        """:func:`weights_digest` of its members' files (computed once)."""
        return weights_digest([m.path for m in self.members])

    def predict_patches(self, patches: Sequence[np.ndarray]) -> np.ndarray:
        """(N, C) probabilities: the members' renormalised geometric mean."""
        if not len(patches):
            return np.zeros((0, len(self.classes)), np.float32)
        x = network_input(patches)  # made once, read by every member, all at once
        probs = each_at_once([partial(m.predict_input, x) for m in self.members])
        logp = np.mean([np.log(np.maximum(p, 1e-12)) for p in probs], axis=0)
        out = np.exp(logp - logp.max(axis=1, keepdims=True))
        return (out / out.sum(axis=1, keepdims=True)).astype(np.float32)


@lru_cache(maxsize=1)
def _wide_strips() -> tuple[StripClassifier, ...]:
    return tuple(StripClassifier.load(p) for p in WIDE_STRIP_MODELS if p.is_file())


def single_card_strip(strip: StripClassifier) -> StripClassifier | StripEnsemble:
    """What reads one card's index corners: for the shipped ``strip``, the shipped wide networks
    in its place (:data:`WIDE_STRIP_MODELS`, those present, loaded once); ``strip`` itself when
    it is a model of the user's own or no wide network is there."""
    wide = _wide_strips() if strip.path == DEFAULT_STRIP_MODEL else ()
    return StripEnsemble(wide) if wide else strip
