"""Synthetic single-card photos: one rendered card lying on a table, seen at an angle, or held
up to a webcam.

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
    face = _face(code, rng, face)
    fh, fw = face.shape[:2]
    table = _plain_backdrop(size, rng, (20, 110), 6)
    scale = rng.uniform(0.45, 0.75) * h / fh
    cx, cy = w / 2 + rng.uniform(-0.1, 0.1) * w, h / 2 + rng.uniform(-0.08, 0.08) * h
    ang = np.radians(rng.uniform(-40, 40))
    photo, quad = _lay_face(table, face, (cx, cy), scale, ang, 0.02, rng, cv2.INTER_AREA)
    return np.clip(photo, 0, 255).astype(np.uint8), quad


def _lay_face(background: np.ndarray, face: np.ndarray, centre: tuple[float, float],
              scale: float, ang: float, jitter: float, rng: np.random.Generator,
              interpolation: int) -> tuple[np.ndarray, np.ndarray]:
    """``face`` scaled, turned by ``ang`` (radians) about ``centre`` and laid on ``background``
    (float32) with its rounded corners; its corners moved by ``jitter`` × the half width (a
    slight perspective). (photo, the card's quad clockwise from its top-left corner)."""
    h, w = background.shape[:2]
    fh, fw = face.shape[:2]
    hw, hh = fw * scale / 2, fh * scale / 2
    rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    quad = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]) @ rot.T + centre
    quad = (quad + rng.normal(0, jitter * hw, quad.shape)).astype(np.float32)
    src = np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]])
    m = cv2.getPerspectiveTransform(src, quad)
    warped = cv2.warpPerspective(face, m, (w, h), flags=interpolation)
    alpha = cv2.warpPerspective(card_mask((fw, fh)), m, (w, h))[..., None] / 255.0
    return background * (1 - alpha) + warped * alpha, quad


def held_card_photo(code: str, rng: np.random.Generator, size: tuple[int, int] = (640, 480),
                    face: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A webcam frame of one card held up close: (BGR photo, the card's full quad).

    WHY: cards held to a webcam are large, often run off the frame, sit in front of a light
    wall, a face and a hand, fingers cover part of them (the lower edge, often a thumb across
    the big central symbol) and the webcam washes them out; a locator tuned on cards lying on a
    table picks a fragment there. The quad may reach outside the frame."""
    w, h = size
    face = _face(code, rng, face)
    fh, fw = face.shape[:2]
    wall = rng.uniform(120, 235, 3) * rng.uniform(0.8, 1.0)
    photo = np.empty((h, w, 3), np.float32)
    photo[:] = wall
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    photo *= (1 + rng.uniform(-0.3, 0.3) * (xx / w - 0.5) + rng.uniform(-0.3, 0.3) *
              (yy / h - 0.5))[..., None]
    for _ in range(int(rng.integers(0, 3))):  # furniture, a door: dark, warm rectangles
        x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
        photo[int(y0):int(y0 + rng.uniform(40, 300)), int(x0):int(x0 + rng.uniform(40, 300))] = \
            rng.uniform(20, 120, 3)
    skin = np.array([rng.uniform(50, 150), rng.uniform(80, 170), rng.uniform(120, 220)])
    if rng.random() < 0.7:  # the player's head behind the card
        c = (int(rng.uniform(0.2, 0.8) * w), int(rng.uniform(0.2, 0.7) * h))
        cv2.ellipse(photo, c, (int(0.15 * w), int(0.28 * h)), 0, 0, 360, skin.tolist(), -1)
        cv2.ellipse(photo, (c[0], c[1] - int(0.2 * h)), (int(0.16 * w), int(0.12 * h)), 0, 0,
                    360, rng.uniform(10, 40, 3).tolist(), -1)
    scale = rng.uniform(0.55, 1.3) * h / fh
    cx = w / 2 + rng.uniform(-0.3, 0.3) * w
    cy = h / 2 + rng.uniform(-0.2, 0.35) * h
    ang = np.radians(rng.uniform(-12, 12))
    photo, quad = _lay_face(photo, face, (cx, cy), scale, ang, 0.03, rng, cv2.INTER_LINEAR)
    hw, hh = fw * scale / 2, fh * scale / 2
    # the holding hand: fingers over the card's lower edge
    bx, by = quad[2:].mean(0)
    for _ in range(int(rng.integers(1, 4))):
        fx = int(bx + rng.uniform(-0.8, 0.8) * hw)
        fy = int(by - rng.uniform(0, 0.35) * hh)
        cv2.ellipse(photo, (fx, fy), (int(rng.uniform(0.12, 0.25) * hw),
                    int(rng.uniform(0.2, 0.5) * hh)), float(rng.uniform(-40, 40)), 0, 360,
                    (skin * rng.uniform(0.9, 1.1)).tolist(), -1, cv2.LINE_AA)
    if rng.random() < 0.5:  # a thumb across the middle, over the big central symbol
        cx, cy = quad.mean(0)
        cv2.ellipse(photo, (int(cx + rng.uniform(-0.6, 0.6) * hw),
                            int(cy + rng.uniform(-0.3, 0.4) * hh)),
                    (int(rng.uniform(0.35, 0.7) * hw), int(rng.uniform(0.12, 0.25) * hh)),
                    float(rng.uniform(-30, 30)), 0, 360,
                    (skin * rng.uniform(0.9, 1.1)).tolist(), -1, cv2.LINE_AA)
    if rng.random() < 0.5:  # a washed-out webcam: low contrast, lifted blacks
        haze = rng.uniform(0.1, 0.45)
        photo = photo * (1 - haze) + rng.uniform(190, 255) * haze
    photo = photo * rng.uniform(0.8, 1.1, 3)  # the webcam's colour cast
    photo = cv2.GaussianBlur(photo, (0, 0), float(rng.uniform(0.5, 2.0)))
    photo += rng.normal(0, rng.uniform(2, 8), photo.shape)
    return np.clip(photo, 0, 255).astype(np.uint8), quad


def tint_light(photo: np.ndarray, rng: np.random.Generator, strength: float = 0.35
               ) -> np.ndarray:
    """``photo`` under strongly coloured light that the camera did not balance away: each
    channel scaled by ``exp(u)``, ``u`` uniform in ±``strength`` (0.35: gains 0.70-1.42, a
    tungsten bulb against a cool window, a green-tinted fluorescent tube), normalised so the
    brightest channel keeps its level.

    WHY: real webcams and phones tint (auto white balance is fooled by a wall of one colour, a
    lamp, a screen); a red card under warm light must still read red. Applied to a finished
    photo, so a tinted set holds exactly the scenes of its untinted one."""
    gain = np.exp(rng.uniform(-strength, strength, 3))
    out = photo.astype(np.float32) * (gain / gain.max())
    return np.clip(out, 0, 255).astype(np.uint8)


def tinted_held_photo(code: str, rng: np.random.Generator, size: tuple[int, int] = (640, 480),
                      face: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`held_card_photo` under strongly tinted light (:func:`tint_light`)."""
    photo, quad = held_card_photo(code, rng, size, face)
    return tint_light(photo, rng), quad


def closeup_card_photo(code: str, rng: np.random.Generator, size: tuple[int, int] = (640, 480),
                       face: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A close-up of one card on a dark backdrop that it nearly or wholly fills: (BGR photo,
    the card's full quad, which may reach beyond the photo on any side).

    WHY: a phone held close over a card gives a photo that is nearly all card, upright or
    across, sometimes cut on two or all four sides; a locator that needs a background around
    the card finds nothing there, or a fragment (the oval, the field)."""
    w, h = size
    face = _face(code, rng, face)
    fh, fw = face.shape[:2]
    back = _plain_backdrop(size, rng, (5, 60), 4)
    across = rng.random() < 0.5  # the card's long side along the photo's width
    long_side = (w if across else h) * rng.uniform(0.8, 1.3)
    scale = long_side / fh
    ang = np.radians(rng.uniform(-12, 12) + (90 if across else 0))
    cx = w / 2 + rng.uniform(-0.08, 0.08) * w
    cy = h / 2 + rng.uniform(-0.08, 0.08) * h
    photo, quad = _lay_face(back, face, (cx, cy), scale, ang, 0.02, rng, cv2.INTER_LINEAR)
    yy, xx = np.mgrid[:h, :w].astype(np.float32)  # the phone's own shadow, uneven light
    photo *= (1 + rng.uniform(-0.25, 0.25) * (xx / w - 0.5) + rng.uniform(-0.25, 0.25) *
              (yy / h - 0.5))[..., None] * rng.uniform(0.75, 1.05)
    photo = cv2.GaussianBlur(photo, (0, 0), float(rng.uniform(0.4, 1.5)))
    photo += rng.normal(0, rng.uniform(2, 6), photo.shape)
    return np.clip(photo, 0, 255).astype(np.uint8), quad


def _face(code: str, rng: np.random.Generator, face: np.ndarray | None) -> np.ndarray:
    """The given face, or one rendered for ``code`` at the photos' face size."""
    return render_face(code, rng, size=(200, 300)) if face is None else face


def _plain_backdrop(size: tuple[int, int], rng: np.random.Generator, level: tuple[float, float],
                    noise: float) -> np.ndarray:
    """A plain surface of ``size`` = (W, H): one random colour per channel in ``level``, with
    sensor noise of standard deviation ``noise`` (float32, unclipped)."""
    w, h = size
    back = np.empty((h, w, 3), np.float32)
    back[:] = rng.uniform(*level, 3)
    back += rng.normal(0, noise, back.shape)
    return back
