"""Card classifier at run time: a rectified card crop in, calibrated class probabilities out.

The network (trained by ``vision/train``, exported to ONNX) sees every crop the same way it saw
its training renders: resized to a small square and *white-balanced by the card's own border*.
WHY the border: every UNO and standard card has a white margin, a free white reference in every
photo; dividing by it removes most of the lighting's colour cast, which otherwise decides whether
a red card reads as yellow (the renders-only probe of issue 5 got card colours right on only
51-88% of real photos). Runs on onnxruntime only: no torch, no ultralytics.

The model's sidecar JSON (``card_classifier.json`` beside ``card_classifier.onnx``) holds the class
list (data-driven: new classes such as domino tiles come with a retrained model, not code), the
input size and the softmax temperature fitted on held-out renders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, cached_property, partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.digest import weights_digest
from vision.parallel import each_at_once

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "card_classifier.onnx"


def training_path(seed: int, folder: Path = DEFAULT_MODEL.parent) -> Path:
    """Where ``cardtable train --part card --seed N`` writes its network (seed 0: the shipped
    model's name), and so where the readers look for it."""
    return folder / ("card_classifier.onnx" if seed == 0 else f"card_classifier_seed{seed}.onnx")


LATER_SEEDS = (4, 7, 8)
LATER_TRAININGS = tuple(training_path(seed) for seed in LATER_SEEDS)
"""Further trainings of the whole-card recipe (``cardtable train --part card --seed N``, whose
renders also draw recent printings' details, and these three, on crops of their own, other
typefaces; seeds 7 and 8 also cut their close-ups at any side of the card:
:meth:`vision.train.data.CardRecipe.for_seed`): the photo
of one card is read by the shipped model and every one of these that is shipped
(:func:`with_later_trainings`)."""
WHITE_TARGET = 235.0
MIN_CROP = 12


class ClassifierError(ValueError):
    """A model that cannot be loaded, or a crop that cannot be classified."""


def _check_crop(crop: Any, i: int) -> np.ndarray:
    if not isinstance(crop, np.ndarray) or crop.ndim != 3 or crop.shape[2] != 3:
        shape = getattr(crop, "shape", type(crop).__name__)
        raise ClassifierError(f"crop {i}: expected a BGR image of shape (H, W, 3), got {shape}")
    if min(crop.shape[:2]) < MIN_CROP:
        raise ClassifierError(
            f"crop {i}: {crop.shape[1]}x{crop.shape[0]} pixels is too small to read a card; "
            f"give at least {MIN_CROP}x{MIN_CROP}"
        )
    if crop.dtype != np.uint8:
        raise ClassifierError(f"crop {i}: expected uint8 pixels, got {crop.dtype}")
    return crop


def border_gain(img: np.ndarray, band: tuple[float, float] = (0.03, 0.1),
                above_percentile: float = 40.0) -> np.ndarray:
    """Per-channel gains (BGR) that make the card's border white: the median of the ring ``band``
    of the crop's size in from its edge, over its pixels brighter than ``above_percentile``, so
    that a sliver of table inside the crop, a rounded corner or a finger does not pull the
    reference down. The colour correction is kept moderate (0.7-1.4 times the grey gain): a
    border can be tinted by a coloured glare."""
    return border_gains(img[None], band, above_percentile)[0]


def border_gains(imgs: np.ndarray, band: tuple[float, float] = (0.03, 0.1),
                 above_percentile: float = 40.0) -> np.ndarray:
    """(N, 3) :func:`border_gain` of each of (N, H, W, 3) ``imgs`` (BGR uint8), all at once:
    a batch of crops costs a few array operations, not a few for every crop. The median is
    taken exactly as one crop's (the pixels are whole numbers, so a sort gives it)."""
    n, h, w = imgs.shape[:3]
    m = min(h, w)
    a, b = max(1, int(round(band[0] * m))), max(2, int(round(band[1] * m)))
    ring = np.zeros((h, w), bool)
    ring[a:h - a, a:w - a] = True
    ring[b:h - b, b:w - b] = False
    px = imgs[:, ring].astype(np.float32)  # (N, R, 3)
    lum = px.sum(2)
    bright = lum >= np.percentile(lum, above_percentile, axis=1)[:, None]
    # the median of each crop's bright pixels: the others sorted to the end
    ordered = np.sort(np.where(bright[..., None], px, np.inf), axis=1)
    count = bright.sum(1)
    rows = np.arange(n)
    ref = (ordered[rows, (count - 1) // 2] + ordered[rows, count // 2]) / 2
    gain = np.clip(WHITE_TARGET / np.maximum(ref, 1.0), 0.6, 4.0)
    grey = np.clip(WHITE_TARGET / np.maximum(ref.mean(axis=1), 1.0), 0.6, 4.0).astype(np.float64)
    low, high = (grey * 0.7).astype(np.float32), (grey * 1.4).astype(np.float32)
    return np.clip(gain, low[:, None], high[:, None]).astype(np.float32)


def apply_gain(img: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """``img`` (BGR uint8) with each channel scaled by ``gain``."""
    return np.clip(img.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def white_balance(img: np.ndarray, band: tuple[float, float] = (0.03, 0.1)) -> np.ndarray:
    """The crop scaled channel by channel so that its border becomes white (:func:`border_gain`
    over the brightest 60% of the ring)."""
    return apply_gain(img, border_gain(img, band))


def preprocess_crop(crop: np.ndarray, size: int) -> np.ndarray:
    """A BGR card crop as the network sees it: portrait, ``size``×``size``, white-balanced (BGR).

    Landscape crops are turned a quarter to portrait (a rectifier may hand over either)."""
    return white_balance(_square(crop, size))


def _square(crop: np.ndarray, size: int) -> np.ndarray:
    """:func:`preprocess_crop` before the white balance."""
    if crop.shape[1] > crop.shape[0] * 1.15:
        crop = cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE)
    interp = cv2.INTER_AREA if min(crop.shape[:2]) > size else cv2.INTER_LINEAR
    return cv2.resize(crop, (size, size), interpolation=interp)


def geometric_mean(probs: np.ndarray, floor: float = 1e-12) -> np.ndarray:
    """The renormalised geometric mean of the rows of ``probs`` (readings of one thing, each a
    distribution over the same classes): the mean of their log-probabilities, floored at
    ``floor``. WHY geometric: a class one reading all but rules out stays unlikely, where an
    arithmetic mean would let one confident misreading carry the others."""
    logp = np.log(np.maximum(probs, floor)).mean(axis=0)
    out = np.exp(logp - logp.max())
    return out / out.sum()


def views(crops: list[np.ndarray], both_ways: bool) -> list[np.ndarray]:
    """What a classifier reads of ``crops``: the crops, then with ``both_ways`` each turned
    180° (a rectifier cannot tell a card's top from its bottom, and the two readings' errors
    are partly independent)."""
    if not both_ways:
        return list(crops)
    return list(crops) + [cv2.rotate(_check_crop(c, i), cv2.ROTATE_180)
                          for i, c in enumerate(crops)]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def cpu_session(path: Path, threads: int) -> Any:
    """An onnxruntime session of ``path`` on the CPU with ``threads`` threads per operator and
    one between them (a model here is one chain of operators)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


@dataclass(frozen=True)
class CardClassifier:
    """An ONNX card classifier with its class list, input size and temperature."""

    session: Any
    classes: tuple[str, ...]
    input_size: int
    temperature: float
    meta: dict
    path: Path | None = None
    """The ``.onnx`` file it was loaded from (None: made in memory)."""

    @cached_property
    def digest(self) -> str:
        """:func:`vision.digest.weights_digest` of its file (computed once): what a deck
        profile enrolled with it records (:meth:`vision.enrol.DeckProfile.check_model`)."""
        return weights_digest([self.path])

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL, threads: int = 2) -> CardClassifier:
        """Load ``path`` (``.onnx``) and its sidecar ``.json``; clear errors if either is bad."""
        path = Path(path)
        meta_path = path.with_suffix(".json")
        if not path.is_file():
            raise ClassifierError(
                f"no classifier model at {path}: run `cardtable train` or give --model"
            )
        try:
            meta = json.loads(meta_path.read_text())
            classes = tuple(str(c) for c in meta["classes"])
            size = int(meta["input_size"])
            temperature = float(meta.get("temperature", 1.0))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ClassifierError(
                f"classifier metadata {meta_path} missing or malformed ({exc}); "
                "it must hold classes, input_size and temperature"
            ) from exc
        try:
            session = cpu_session(path, threads)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ClassifierError(f"cannot load ONNX model {path}: {exc}") from exc
        n_out = session.get_outputs()[0].shape[-1]
        if isinstance(n_out, int) and n_out != len(classes):
            raise ClassifierError(
                f"{path} has {n_out} outputs but {meta_path} lists {len(classes)} classes"
            )
        return cls(session, classes, size, temperature, meta, path)

    def batch(self, crops: list[np.ndarray]) -> np.ndarray:
        """Crops → network input (N, 3, S, S) float32 RGB in [0, 1]."""
        if len(crops) == 0:
            return np.zeros((0, 3, self.input_size, self.input_size), np.float32)
        # each crop as preprocess_crop makes it, white-balanced all at once (border_gains)
        small = np.stack([_square(_check_crop(c, i), self.input_size)
                          for i, c in enumerate(crops)])
        rows = apply_gain(small, border_gains(small)[:, None, None, :])
        x = rows[..., ::-1].astype(np.float32) / 255.0
        return np.ascontiguousarray(x.transpose(0, 3, 1, 2))

    def run(self, crops: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Raw logits (N, C) and penultimate features (N, F) of the crops."""
        return self.run_input(self.batch(crops))

    def run_input(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`run` of a batch already made the network's input (:meth:`batch`)."""
        if len(x) == 0:
            n_feat = int(self.meta.get("feature_dim", 0))
            return np.zeros((0, len(self.classes)), np.float32), np.zeros((0, n_feat), np.float32)
        logits, feats = self.session.run(None, {self.session.get_inputs()[0].name: x})
        return logits, feats

    def probabilities(self, logits: np.ndarray, n: int, both_ways: bool) -> np.ndarray:
        """Calibrated probabilities (n, C) of the ``n`` crops whose views' ``logits`` these are
        (:func:`views`): with ``both_ways``, each crop's and its turned copy's averaged."""
        p = _softmax(logits / self.temperature)
        return (p[:n] + p[n:]) / 2 if both_ways and n else p

    def predict(self, crops: list[np.ndarray], both_ways: bool = False) -> np.ndarray:
        """Calibrated class probabilities (N, C), columns in the order of ``classes``.

        ``both_ways`` also reads each crop turned 180° and averages: a rectifier cannot tell a
        card's top from its bottom, and the two readings' errors are partly independent."""
        return self.read(crops, both_ways)[0]

    def read(self, crops: list[np.ndarray], both_ways: bool = False,
             own: CardClassifier | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict`'s probabilities (N, C) and the raw penultimate features of every
        view read (N, F; with ``both_ways`` 2N, the crops then the crops turned), from one
        network call. WHY: an enrolled deck's profile matches the features of the very views
        whose probabilities it blends (:meth:`vision.enrol.DeckProfile.predict`). ``own``: as
        :meth:`Ensemble.read` takes it; a single network's features are its own."""
        if own is not None and own is not self:
            raise ClassifierError("a single network gives only its own features")
        logits, feats = self.run(views(crops, both_ways))
        return self.probabilities(logits, len(crops), both_ways), feats

    def embed(self, crops: list[np.ndarray]) -> np.ndarray:
        """L2-normalised penultimate features (N, F): what deck enrolment compares."""
        _, feats = self.run(crops)
        return feats / np.maximum(np.linalg.norm(feats, axis=1, keepdims=True), 1e-9)

    def classify(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        """(code, confidence) of the most probable class of each crop."""
        probs = self.predict(crops)
        return [(self.classes[int(i)], float(p[i])) for p, i in zip(probs, probs.argmax(1),
                                                                     strict=True)]


@dataclass(frozen=True)
class Ensemble:
    """Several trainings of one recipe read as one classifier: the mean of their calibrated
    probabilities (``classes`` and ``predict`` as :class:`CardClassifier`'s).

    WHY: two trainings of one whole-card recipe that differ only in their seed (measured on the
    curled-S recipe's) disagree on about one in seven rendered cards held close to a webcam
    (30-35 of 216), each right on about half of those; the mean of the shipped model and its
    second training read 13 more of 1,296 renders at one decision seed and as many at the
    other (models/HISTORY.md, "Two trainings of the whole-card classifier read as one")."""

    members: tuple[CardClassifier, ...]

    def __post_init__(self) -> None:
        if not self.members:
            raise ClassifierError("an ensemble needs at least one classifier")
        if any(m.classes != self.members[0].classes for m in self.members):
            raise ClassifierError("the classifiers of an ensemble must share their classes")

    @property
    def classes(self) -> tuple[str, ...]:
        return self.members[0].classes

    def predict(self, crops: list[np.ndarray], both_ways: bool = False) -> np.ndarray:
        """The members' calibrated probabilities (N, C), averaged."""
        return self.read(crops, both_ways)[0]

    def read(self, crops: list[np.ndarray], both_ways: bool = False,
             own: CardClassifier | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict` and the features of every view read by the member ``own`` (the
        first if None), as :meth:`CardClassifier.read` gives them, that member read once."""
        own = self.members[0] if own is None else own
        if not any(m is own for m in self.members):
            raise ClassifierError("that network is not a member of this ensemble")
        seen = views(crops, both_ways)
        inputs: dict[int, np.ndarray] = {}  # each input size's batch made once
        for m in self.members:
            if m.input_size not in inputs:
                inputs[m.input_size] = m.batch(seen)
        # the members run at once, each exactly as alone (vision.parallel)
        outs = each_at_once([partial(m.run_input, inputs[m.input_size]) for m in self.members])
        probs = [m.probabilities(logits, len(crops), both_ways)
                 for m, (logits, _) in zip(self.members, outs, strict=True)]
        feats = next(f for m, (_, f) in zip(self.members, outs, strict=True) if m is own)
        return np.mean(probs, axis=0), feats


@cache
def _later_trainings() -> tuple[CardClassifier, ...]:
    return tuple(CardClassifier.load(path, threads=1) for path in LATER_TRAININGS
                 if path.is_file())


def with_later_trainings(classifier: CardClassifier, path: str | Path | None
                        ) -> CardClassifier | Ensemble:
    """``classifier``, loaded from ``path``, with the shipped later trainings beside it
    (:data:`LATER_TRAININGS`, loaded once) when it is the shipped model and any of them is
    there; else ``classifier`` alone (a model of the user's own, ``--model``)."""
    if path is None or Path(path).resolve() != DEFAULT_MODEL:
        return classifier
    later = _later_trainings()
    return Ensemble((classifier, *later)) if later else classifier
