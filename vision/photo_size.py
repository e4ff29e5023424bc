"""Labelled photos read at another size or aspect than their set's (``cardtable eval --resize``).

WHY: every real photo the readers were built, tuned and measured on is at most 1280 px on its
longer side (the CC BY photos 640 × 640, stretched to that square by their export; the UNO
photos up to 1280 × 840), and so are the renders. A phone takes 4032 × 3024 photos, at the
camera's own aspect. How the readers do on such photos is a question the labelled sets can
answer only resized: their labels are fractions of the photo, so they hold at any size
(models/README.md, sixty-fifth session: at 4032 × 4032 the CC BY training split lost 47 of
its 1,228 found cards and a photo took 1.5 s of CPU; at 853 × 640 it lost 85, its false cards
17 → 50).
"""

from __future__ import annotations

import cv2
import numpy as np

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
