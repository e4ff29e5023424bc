"""Photos larger than the readers were made for, and labelled photos read at another size or
aspect than their set's (``cardtable eval --resize``).

WHY: every real photo the readers were built, tuned and measured on is at most 1280 px on its
longer side (the CC BY photos 640 × 640, stretched to that square by their export; the UNO
photos up to 1280 × 840), and so are the renders. A phone takes 4032 × 3024 photos, at the
camera's own aspect. How the readers do on such photos is a question the labelled sets can
answer only resized: their labels are fractions of the photo, so they hold at any size
(models/HISTORY.md, sixty-fifth session: at 4032 × 4032 the CC BY training split lost 47 of
its 1,228 found cards and a photo took 1.5 s of CPU; at 853 × 640 it lost 85, its false cards
17 → 50). So a larger photo is read reduced to at most 1280 px (:func:`read_at_photo_size`): its
card outlines are then found with the filter sizes they were tuned at, and the photo is read in
a seventh of the CPU time (sixty-sixth session, RULE 69).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np

PHOTO_SIDE = 1280
"""The longest side (px) at which a still photo without the mat is read: the largest size the
readers were trained or measured at (renders and a webcam's frames at 1280 × 720, the real UNO
photos up to 1280 × 840)."""

LARGEST = 20000
"""The largest side ``--resize`` accepts (px): far above any camera, below what runs out of
memory."""


def resized(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``image`` at ``size`` = (w, h): bicubic where it grows, area averaging where it
    shrinks (a camera's optics and sensor average; they do not alias)."""
    w, h = size
    grow = w * h > image.shape[0] * image.shape[1]
    return cv2.resize(image, (w, h), interpolation=cv2.INTER_CUBIC if grow else cv2.INTER_AREA)


def parse_size(text: str) -> tuple[int, int]:
    """``WxH`` (e.g. ``4032x3024``) as (w, h); a clear error otherwise."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"{text!r} is no size: give WxH, e.g. 4032x3024") from None
    if not (16 <= w <= LARGEST and 16 <= h <= LARGEST):
        raise ValueError(f"{text!r}: each side must be 16 to {LARGEST} px")
    return w, h


def working_copy(image: np.ndarray, side: int = PHOTO_SIDE) -> tuple[np.ndarray, float]:
    """``image`` reduced by the least whole factor k that brings its longer side to at most
    ``side`` (area averaging: each pixel the mean of k × k), and 1/k; a smaller image is
    itself, factor 1.

    WHY a whole factor: the copy is between half of ``side`` and ``side``, sizes the readers
    were made on, and ``cv2.resize`` averages whole blocks in under half the time of any other
    factor (a 4032 × 4032 photo: 20 ms against 53 ms to 1280 px)."""
    h, w = image.shape[:2]
    k = -(-max(h, w) // side)
    if k <= 1:
        return image, 1.0
    size = (max(1, round(w / k)), max(1, round(h / k)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), 1.0 / k


def read_at_photo_size(image: np.ndarray, read: Callable[[np.ndarray], Sequence[Any]]
                       ) -> tuple[Any, ...]:
    """``read`` (a still photo → its detections) run on the photo's :func:`working_copy`, each
    detection's ``quad`` mapped back to the photo's own pixels (each axis by its own factor, as
    the copy's sides are rounded; pixel centres onto pixel centres, as ``cv2.resize`` maps)."""
    small, f = working_copy(image)
    found = tuple(read(small))
    if f == 1.0:
        return found
    back = np.array([image.shape[1] / small.shape[1], image.shape[0] / small.shape[0]],
                    np.float32)
    return tuple(dataclasses.replace(d, quad=(np.asarray(d.quad, np.float32) + 0.5) * back - 0.5)
                 for d in found)
