"""Where a card lies in a photo, as a learned mask: one more proposal for the single-card locator.

WHY: the locator (:mod:`vision.card_locator`) proposes boxes from classical segmentations (edges,
brightness, saturation, whiteness, colour clusters); each is fooled somewhere a person holds a
card up to a webcam. A card held close runs off the frame, a thumb and the palm cut its outline,
a white wall or shirt joins its border. Those proposals still hold a box that fits the card in
most such photos, but it is often not among those the readers are asked about. A small
network trained on rendered photos (``cardtable train --part mask``, :mod:`vision.train.mask`)
sees the card as a whole: its mask's largest blobs are proposed beside the others, every
proposal is weighed by how well it agrees with the mask (:func:`mask_agreement`), and the same
geometry, evidence and readers choose among them all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "card_mask.onnx"
THRESHOLD = 0.5  # a pixel of the mask at this probability or more is card
LEAST_SHARE = 0.005  # a blob smaller than this share of the photo proposes nothing
BLOBS = 2  # the largest blobs proposed


class CardMaskError(ValueError):
    """The mask model is missing or malformed, or the image is not a BGR photo."""


@dataclass(frozen=True)
class CardMask:
    """An ONNX network from a BGR photo (scaled to ``size`` = (W, H)) to the probability that
    each pixel shows a card."""

    session: Any
    size: tuple[int, int]

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL, threads: int = 1) -> CardMask:
        """Load ``path`` (``.onnx``) and its sidecar ``.json`` (which holds the input size).
        WHY one thread by default: the mask is small (a few ms), and ``cardtable detect`` runs
        the photo reader on the other core at the same time."""
        from vision.classifier import cpu_session

        path = Path(path)
        if not path.is_file():
            raise CardMaskError(f"no card-mask model at {path}: build it with "
                                "`cardtable train --part mask` (needs the [train] extra)")
        meta_path = path.with_suffix(".json")
        try:
            meta = json.loads(meta_path.read_text())
            w, h = (int(v) for v in meta["input_size"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CardMaskError(f"card-mask metadata {meta_path} missing or malformed ({exc}); "
                                "it must hold input_size [W, H]") from exc
        try:
            session = cpu_session(path, threads)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise CardMaskError(f"cannot load ONNX model {path}: {exc}") from exc
        return cls(session, (w, h))

    def predict(self, image: np.ndarray) -> np.ndarray:
        """The card probability of each pixel of ``image`` scaled to ``size``: float32 (H, W)
        in [0, 1]."""
        if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
            raise CardMaskError("expected a BGR image of shape (H, W, 3)")
        if image.shape[0] == 0 or image.shape[1] == 0:
            raise CardMaskError(f"the image is empty ({image.shape[0]}×{image.shape[1]} pixels)")
        x = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA).astype(np.float32) / 255
        x = np.ascontiguousarray(x.transpose(2, 0, 1)[None])
        return self.session.run(None, {self.session.get_inputs()[0].name: x})[0][0, 0]

    def blobs(self, image: np.ndarray) -> list[np.ndarray]:
        """The outlines (float32 (N, 2) points) of the ``BLOBS`` largest card blobs of the
        mask of ``image``, largest first, in ``image``'s pixels."""
        return mask_blobs(self.predict(image), image.shape[:2])


@cache
def default_card_mask() -> CardMask:
    """The shipped mask model, loaded once per process (the locator calls it for every photo)."""
    return CardMask.load()


SKEW_MAX = 15.0
"""The most, in degrees, that a corner of a blob's four-cornered outline may differ from a
right angle for it to be proposed as a card (:func:`blob_quad`). WHY: a card held up to a
camera or lying on a table is seen nearly square-on; its corners differ from right angles by
at most 10 degrees in every rendered kind (tuning seed 7). A blob the fingers across a card
bite into, or one the mask joins to the wall beside it, simplifies to a slanted outline
(16-56 degrees off) that still scored best among a real photo's proposals. Chosen on the CC BY
training split's real frames (``python -m vision.locate_eval --split train``, with ``--source
phone``): best-scored fits 90 -> 95 of 120 webcam frames and 190 -> 195 of 269 phone photos;
10, 12, 20 and 25 degrees, and sparing outlines at the photo's edge, had fewer best-scored fits
(RULE 63, models/HISTORY.md). On the held-out split's 22 webcam frames it fitted 2 fewer
(17 -> 15): real cards tilted towards the camera show outlines 15-16 degrees off square, more
than any render."""


def corner_skew(quad: np.ndarray) -> float:
    """The largest difference, in degrees, between a corner angle of ``quad`` and a right
    angle."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    u = np.roll(q, 1, axis=0) - q
    v = np.roll(q, -1, axis=0) - q
    cos = (u * v).sum(1) / np.maximum(np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1),
                                      1e-9)
    return float(np.abs(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))) - 90.0).max())


def blob_quad(blob: np.ndarray) -> np.ndarray | None:
    """The four-cornered outline of ``blob`` (its convex hull simplified until four corners
    are left), or None when it has none (a blob of three corners or a round one) or when a
    corner of it is more than :data:`SKEW_MAX` off a right angle (no card's outline).

    WHY not its rotated bounding box: a card held close runs off the frame, and the part in
    view is the card's quad cut by the frame's edge: its rotated box is another shape, tilted
    and larger (on rendered close-held cards of tuning seed 7, the first network's boxes
    overlapped the card by more than 0.8 in 81 of 108, its four-cornered outlines in 108). In
    perspective a whole card is a four-cornered shape too, no rectangle."""
    hull = cv2.convexHull(blob.astype(np.float32))
    perimeter = cv2.arcLength(hull, True)
    for share in (0.01, 0.02, 0.03, 0.05, 0.08):
        corners = cv2.approxPolyDP(hull, share * perimeter, True)
        if len(corners) == 4:
            quad = corners.reshape(4, 2).astype(np.float32)
            return quad if corner_skew(quad) <= SKEW_MAX else None
        if len(corners) < 4:
            return None
    return None


def mask_blobs(mask: np.ndarray, shape: tuple[int, int]) -> list[np.ndarray]:
    """The outlines of the ``BLOBS`` largest blobs of ``mask`` at ``THRESHOLD`` or more (none
    smaller than ``LEAST_SHARE`` of it), scaled to a photo of ``shape`` = (H, W)."""
    mh, mw = mask.shape
    cnts, _ = cv2.findContours((mask >= THRESHOLD).astype(np.uint8), cv2.RETR_EXTERNAL,
                               cv2.CHAIN_APPROX_SIMPLE)
    cnts = sorted((c for c in cnts if cv2.contourArea(c) >= LEAST_SHARE * mh * mw),
                  key=cv2.contourArea, reverse=True)[:BLOBS]
    scale = np.float32([shape[1] / mw, shape[0] / mh])
    return [c.reshape(-1, 2).astype(np.float32) * scale for c in cnts]


def mask_agreement(prob: np.ndarray, quad: np.ndarray, shape: tuple[int, int]) -> float:
    """How well ``quad`` (in a photo of ``shape`` = (H, W)) agrees with the mask ``prob`` of
    that photo: the soft IoU of the quad's pixels and the mask's probabilities, 0 to 1.

    WHY soft: the mask is unsure at a card's edges and under a thumb, and a hard threshold would
    make a box one pixel larger lose or win by whole rows."""
    mh, mw = prob.shape
    inside = np.zeros((mh, mw), np.float32)
    scale = np.float32([mw / shape[1], mh / shape[0]])
    cv2.fillPoly(inside, [np.round(quad * scale).astype(np.int32)], 1.0)
    inter = float((prob * inside).sum())
    return inter / max(float(inside.sum()) + float(prob.sum()) - inter, 1e-6)
