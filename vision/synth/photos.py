"""Synthetic single-card photos: one rendered card lying on a table, seen at an angle.

WHY: tests of card location, classification and enrolment need photos whose true quad and code
are known; the real photo sets are either measurement-only or not of UNO cards.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.synth.faces import card_mask, render_face


def single_card_photo(code: str, rng: np.random.Generator, size: tuple[int, int] = (640, 480),
                      face: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(BGR photo of ``size`` = (W, H), the card's quad clockwise from its top-left corner)."""
    w, h = size
    if face is None:
        face = render_face(code, rng, size=(200, 300))
    fh, fw = face.shape[:2]
    table = np.empty((h, w, 3), np.float32)
    table[:] = rng.uniform(20, 110, 3)
    table += rng.normal(0, 6, table.shape)
    scale = rng.uniform(0.45, 0.75) * h / fh
    cx, cy = w / 2 + rng.uniform(-0.1, 0.1) * w, h / 2 + rng.uniform(-0.08, 0.08) * h
    ang = np.radians(rng.uniform(-40, 40))
    hw, hh = fw * scale / 2, fh * scale / 2
    rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    quad = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]) @ rot.T + [cx, cy]
    quad = (quad + rng.normal(0, 0.02 * hw, quad.shape)).astype(np.float32)
    src = np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]])
    m = cv2.getPerspectiveTransform(src, quad)
    warped = cv2.warpPerspective(face, m, (w, h), flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(card_mask((fw, fh)), m, (w, h))[..., None] / 255.0
    photo = table * (1 - alpha) + warped * alpha
    return np.clip(photo, 0, 255).astype(np.uint8), quad
