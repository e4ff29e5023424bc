"""Synthetic single-card photos: one rendered card lying on a table, seen at an angle, held up
to a webcam, or held up in a cheap webcam's frame of a lit room (:func:`webcam_card_photo`).

WHY: tests of card location, classification and enrolment need photos whose true quad and code
are known; the real photo sets are either measurement-only or not of UNO cards.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import cv2
import numpy as np

from vision.synth.faces import card_mask, render_face
from vision.synth.real_rooms import RoomFrame, painted_out


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


HANDHELD_HEIGHTS = (0.5, 1.55)
"""The card's long side, in frame heights, of ``synthetic:handheld`` (log-uniform): the real
hand-held webcam photos' cards. WHY: the located card's short side in a quarter of those
photos (the 109 of 432 on every fourth row of labels.csv, no card code read; models/HISTORY.md,
fifty-second session) is 212 to 636 px
at the 5th to 95th percentiles of a 640-px frame, a long side of about 0.5 to 1.55 frames;
the ``webcam`` kind draws 0.22 to 1.25 (its median card is less than half the real one's) and
``near`` 1.3 to 2.2."""


def webcam_card_photo(code: str, rng: np.random.Generator, size: tuple[int, int] = (640, 480),
                      face: np.ndarray | None = None, near: bool = False,
                      heights: tuple[float, float] | None = None, gripped: bool = False,
                      top_in_view: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A frame of a cheap webcam at a person who holds one card up in a lit room: (BGR photo,
    the card's full quad, which may reach beyond the frame).

    WHY: in :func:`held_card_photo` the card's border is the only pure white; in a real
    webcam frame it is not. Here the room has light or white walls and a ceiling, often a
    blown-out window or a lamp with its glow, white door frames or picture mats; the player
    wears a shirt that may be white, a skin-toned face, neck, arm and hand surround the card
    (the thumb on its face, the fingers behind it); the card is small in the frame or large
    and cut off, tilted and turned in depth; the camera's auto-exposure often washes it all out
    (the border clips to the walls' 255), adds vignetting, a colour cast, motion or focus blur,
    a low-resolution sensor scaled up, chroma noise and heavy JPEG compression.

    ``near``: the card held so close that it runs off the frame's lower edge (its long side
    1.3 to 2.2 frame heights), its top edge in view: only its upper end, with one index
    corner, is seen. WHY: people hold a card right up to a webcam to show it. ``heights``: the
    range of the card's long side in frame heights (log-uniform) in place of the kind's own
    (``near`` or not), e.g. :data:`HANDHELD_HEIGHTS`. ``gripped``: the holding hand's fingers
    also lie across the card's whole lower end (:func:`_fingers_across`). ``top_in_view``: the
    card moved the least way that brings both its top corners into the frame
    (:func:`_top_in_view`), every draw as without it."""
    w, h = size
    face = _face(code, rng, face)
    fh, fw = face.shape[:2]
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    photo = _room(size, rng, yy, xx)
    # skin from dark to pale: red strongest, then green, then blue (BGR)
    skin = rng.uniform(70, 245) * np.array([rng.uniform(0.5, 0.75), rng.uniform(0.68, 0.86), 1.0])
    _person(photo, rng, skin, w, h)
    # the card: small in the frame to larger than it, anywhere, tilted and turned in depth
    lo, hi = heights or ((1.3, 2.2) if near else (0.22, 1.25))
    scale = float(np.exp(rng.uniform(np.log(lo), np.log(hi)))) * h / fh
    cx = w / 2 + rng.uniform(-0.4, 0.4) * w * (0.5 if near else 1.0)
    cy = h / 2 + rng.uniform(-0.35, 0.4) * h
    if near:  # the card's top edge 2-30% of the frame down
        cy = (0.02 + 0.28 * (cy / h - 0.15) / 0.75) * h + fh * scale / 2
    ang = np.radians(rng.uniform(-25, 25) + (90 if rng.random() < 0.15 else 0))
    hw, hh = fw * scale / 2, fh * scale / 2
    if top_in_view:
        cx, cy = _top_in_view((cx, cy), (hw, hh), ang, size)
    # the holding hand behind the card: palm and arm from below the card to the frame's edge
    down = np.array([-np.sin(ang), np.cos(ang)])  # the card's downward direction
    bottom = np.array([cx, cy]) + down * hh * rng.uniform(0.7, 1.0)
    palm = (skin * rng.uniform(0.85, 1.1)).tolist()
    sleeve = (skin * rng.uniform(0.9, 1.1) if rng.random() < 0.5 else
              rng.uniform(20, 250) * rng.uniform(0.8, 1.0, 3)).tolist()
    arm_w = max(6, int(rng.uniform(1.0, 1.5) * hw * 2))  # a forearm is wider than a card
    palm_c = bottom + down * hh * rng.uniform(0.1, 0.4)
    end = (int(palm_c[0] + rng.uniform(-0.3, 0.3) * w), h + arm_w)
    cv2.line(photo, (int(palm_c[0]), int(palm_c[1])), end, sleeve, arm_w, cv2.LINE_AA)
    cv2.ellipse(photo, (int(palm_c[0]), int(palm_c[1])),
                (max(3, int(rng.uniform(0.7, 1.1) * hw)), max(3, int(rng.uniform(0.3, 0.55) * hh))),
                float(np.degrees(ang)), 0, 360, palm, -1, cv2.LINE_AA)
    card_gain = rng.uniform(0.75, 1.15)  # the card in the room's light or in the player's shadow
    photo, quad = _lay_face(photo, face.astype(np.float32) * card_gain, (cx, cy), scale, ang,
                            0.06, rng, cv2.INTER_AREA)
    _glare_and_thumbs(photo, rng, quad, ang, bottom, skin, (hw, hh))
    if gripped:
        _fingers_across(photo, rng, quad, skin)
    return _webcam(photo, rng, yy, xx), quad


TOP_MARGIN = 0.03
"""How far inside the frame :func:`_top_in_view` puts the card's top corners, a share of the
frame's width and height: more than the corners' perspective jitter moves them, mostly."""


def _top_in_view(centre: tuple[float, float], half: tuple[float, float], ang: float,
                 size: tuple[int, int]) -> tuple[float, float]:
    """``centre`` moved the least way that brings the top corners of a card of half sizes
    ``half`` turned by ``ang`` at least :data:`TOP_MARGIN` inside a frame of ``size`` = (W, H);
    along an axis where the two corners lie further apart than the frame allows, they are
    centred on it.

    WHY: people show a webcam a card as they hold a phone, its top end and so its top-left
    index in view; the real hand-held photos read that corner right in 87% (models/HISTORY.md,
    fifty-eighth session), while ``handheld``, drawn anywhere, shows it in 55%. A move, not a
    new draw, keeps every other draw of the photo as ``handheld``'s at the same seed."""
    hw, hh = half
    right, down = np.array([np.cos(ang), np.sin(ang)]), np.array([-np.sin(ang), np.cos(ang)])
    c = np.array(centre, np.float64)
    top = np.stack([c - hw * right - hh * down, c + hw * right - hh * down])
    frame = np.array(size, np.float64)
    lo, hi = TOP_MARGIN * frame, (1 - TOP_MARGIN) * frame
    a, b = top.min(0), top.max(0)
    shift = np.where(b - a > hi - lo, (lo + hi - a - b) / 2,
                     np.maximum(lo - a, 0) - np.maximum(b - hi, 0))
    return float(c[0] + shift[0]), float(c[1] + shift[1])


GRIP_COVER = (0.25, 0.55)
"""The share of the card's length that ``synthetic:gripped``'s fingers cover from its lower
edge (uniform)."""


def _fingers_across(photo: np.ndarray, rng: np.random.Generator, quad: np.ndarray,
                    skin: np.ndarray) -> None:
    """Drawn into ``photo``: the fingers of a hand that grips the card at ``quad`` from one
    side, lying across its face side by side from its lower edge up to :data:`GRIP_COVER` of
    its length, each running in from beyond that side to a tip anywhere from a fifth of the
    way across to beyond the far side, with a dark crease between them, and the ball of the
    hand over the lower corner on that side.

    WHY: a real webcam player holds the card the way one holds a phone, four fingers wrapped
    across its lower half: its lower index and the lower half of its big central symbol are
    hidden, and what is seen of the card is shorter than a card (the real hand-held photos
    whose reading was wrong, fifty-seventh session). The thumbs of
    :func:`_glare_and_thumbs` never span the card's width."""
    q = np.asarray(quad, np.float64)
    top, bottom = (q[0] + q[1]) / 2, (q[3] + q[2]) / 2
    left, right = (q[0] + q[3]) / 2, (q[1] + q[2]) / 2
    down, across = bottom - top, right - left
    length, width = float(np.linalg.norm(down)), float(np.linalg.norm(across))
    down, across = down / length, across / width
    side = 1.0 if rng.random() < 0.5 else -1.0  # the hand comes from the right or the left
    cover = rng.uniform(*GRIP_COVER) * length
    n = int(rng.integers(3, 5))
    thick = cover / n
    centre = q.mean(0)
    angle = float(np.degrees(np.arctan2(across[1], across[0])))
    for i in range(n):
        y = length / 2 - (i + 0.5) * thick + rng.normal(0, 0.08 * thick)
        root = side * width * rng.uniform(0.6, 0.9)  # beyond the near edge
        tip = -side * width * rng.uniform(-0.3, 0.6)  # from a fifth across to beyond the far edge
        mid = centre + down * y + across * (root + tip) / 2
        axes = (max(3, int(abs(root - tip) / 2)), max(2, int(0.6 * thick)))
        tone = (skin * rng.uniform(0.85, 1.1)).tolist()
        crease = (skin * rng.uniform(0.45, 0.65)).tolist()
        c = (int(mid[0]), int(mid[1]))
        tilt = angle + float(rng.uniform(-8, 8))
        cv2.ellipse(photo, c, axes, tilt, 0, 360, crease, -1, cv2.LINE_AA)
        cv2.ellipse(photo, c, (max(2, axes[0] - 2), max(1, axes[1] - 2)), tilt, 0, 360, tone,
                    -1, cv2.LINE_AA)
    ball = centre + down * length * rng.uniform(0.4, 0.6) + across * side * width * 0.5
    cv2.ellipse(photo, (int(ball[0]), int(ball[1])),
                (max(3, int(rng.uniform(0.3, 0.5) * width)),
                 max(3, int(rng.uniform(0.15, 0.3) * length))),
                angle, 0, 360, (skin * rng.uniform(0.8, 1.0)).tolist(), -1, cv2.LINE_AA)


def held_in_room(code: str, rng: np.random.Generator, room: RoomFrame,
                 face: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`webcam_card_photo` in a real frame (:mod:`vision.synth.real_rooms`): the rendered
    card laid over the card the real hand holds there, a little larger so that it covers it,
    at its turn give or take a few degrees and lit as the real card is
    (:attr:`vision.synth.real_rooms.RoomFrame.light`), then the same glare, thumbs and webcam.

    WHY: the drawn rooms and players are what the card mask learned to tell a card from; on
    real frames it took the player and the room for card."""
    h, w = room.image.shape[:2]
    face = _face(code, rng, face)
    fh, fw = face.shape[:2]
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    skin = rng.uniform(70, 245) * np.array([rng.uniform(0.5, 0.75), rng.uniform(0.68, 0.86), 1.0])
    photo, quad, ang, scale = _over_real_card(room, face, rng, 1.3, 5.0, 0.04)
    down = np.array([-np.sin(ang), np.cos(ang)])
    hw, hh = fw * scale / 2, fh * scale / 2
    bottom = room.card.mean(0) + down * hh * rng.uniform(0.7, 1.0)
    _glare_and_thumbs(photo, rng, quad, ang, bottom, skin, (hw, hh))
    return _webcam(photo, rng, yy, xx), quad


def lying_in_room(code: str, rng: np.random.Generator, room: RoomFrame,
                  face: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`single_card_photo` on a real surface: a phone photo of one card lying on a table,
    floor or sofa (:data:`vision.synth.real_rooms.SOURCES` ``phone``), the rendered card laid
    over the real one a little larger, at its turn give or take a few degrees and lit as it is
    (:attr:`vision.synth.real_rooms.RoomFrame.light`), then a phone's colour cast, blur and
    noise. (BGR photo of the frame's size, the card's quad.)

    WHY: the drawn tables are plain colours with noise; real ones have grain, patterns, edges
    and other things lying on them."""
    photo, quad, _, _ = _over_real_card(room, _face(code, rng, face), rng, 1.25, 3.0, 0.03)
    return _phone(photo, rng), quad


def _over_real_card(room: RoomFrame, face: np.ndarray, rng: np.random.Generator, grow: float,
                    turn: float, jitter: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``face`` laid over the real card of ``room`` (float32 photo, the laid card's quad, its
    angle in radians and its scale): large enough to cover the real card both ways (a UNO face
    is narrower than a poker card), times U(1.05, ``grow``); turned as the real card is, give or
    take ``turn`` degrees; lit as it is (:attr:`vision.synth.real_rooms.RoomFrame.light`);
    its corners jittered by ``jitter`` (:func:`_lay_face`)."""
    fh, fw = face.shape[:2]
    top, right, _, left = room.card
    cover = max(float(np.linalg.norm(left - top)) / fh, float(np.linalg.norm(right - top)) / fw)
    scale = cover * rng.uniform(1.05, grow)
    ang = float(np.arctan2(*(right - top)[::-1])) + np.radians(rng.uniform(-turn, turn))
    centre = tuple(float(v) for v in room.card.mean(0))
    lit = face.astype(np.float32) * room.light.astype(np.float32) * rng.uniform(0.85, 1.15)
    photo, quad = _lay_face(room.image.astype(np.float32), lit, centre, scale, ang, jitter, rng,
                            cv2.INTER_AREA)
    return photo, quad, ang, scale


def empty_surface(room: RoomFrame, rng: np.random.Generator) -> np.ndarray:
    """The real phone photo ``room`` with its card painted out (:func:`painted_out`), through
    the same phone as :func:`lying_in_room`: a real surface with no card on it."""
    return _phone(painted_out(room).astype(np.float32), rng)


def _phone(photo: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A phone's faults on a real photo (float32 BGR): a colour cast, exposure, a little blur
    and sensor noise (uint8)."""
    photo = photo * rng.uniform(0.85, 1.15) * rng.uniform(0.92, 1.08, 3)
    photo = cv2.GaussianBlur(photo, (0, 0), float(rng.uniform(0.3, 1.2)))
    photo += rng.normal(0, rng.uniform(1, 6), photo.shape)
    return np.clip(photo, 0, 255).astype(np.uint8)


def empty_room(room: RoomFrame, rng: np.random.Generator) -> np.ndarray:
    """The real frame ``room`` with its card painted out (:func:`painted_out`), through the
    same webcam as :func:`webcam_card_photo`: a real player in a real room, holding no card."""
    h, w = room.image.shape[:2]
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    return _webcam(painted_out(room).astype(np.float32), rng, yy, xx)


def _glare_and_thumbs(photo: np.ndarray, rng: np.random.Generator, quad: np.ndarray,
                      ang: float, bottom: np.ndarray, skin: np.ndarray,
                      half: tuple[float, float]) -> None:
    """Drawn into ``photo``: a glare spot on the card at ``quad`` (turned by ``ang``, ``half``
    its half width and height before its corners were jittered) in three photos of ten, and one
    or two thumbs on its face from its holding edge (``bottom``) in."""
    h, w = photo.shape[:2]
    hw, hh = half
    down = np.array([-np.sin(ang), np.cos(ang)])
    if rng.random() < 0.3:  # glare: the lamp or the window in the card's gloss
        g = np.zeros((h, w), np.float32)
        gc = quad.mean(0) + rng.uniform(-0.5, 0.5, 2) * (hw, hh)
        cv2.ellipse(g, (int(gc[0]), int(gc[1])), (max(2, int(rng.uniform(0.2, 0.6) * hw)),
                    max(2, int(rng.uniform(0.1, 0.3) * hh))), float(rng.uniform(0, 180)), 0,
                    360, 1.0, -1)
        g = cv2.GaussianBlur(g, (0, 0), max(1.0, 0.1 * hw))
        photo += g[..., None] * rng.uniform(60, 200)
    # the thumb on the card's face, from the holding edge inwards
    for _ in range(int(rng.integers(1, 3))):
        t = bottom - down * hh * rng.uniform(0.0, 0.4) + rng.uniform(-0.7, 0.7) * hw * \
            np.array([np.cos(ang), np.sin(ang)])
        cv2.ellipse(photo, (int(t[0]), int(t[1])), (max(2, int(rng.uniform(0.1, 0.22) * hw)),
                    max(3, int(rng.uniform(0.25, 0.5) * hh))),
                    float(np.degrees(ang) + rng.uniform(-35, 35)), 0, 360,
                    (skin * rng.uniform(0.9, 1.15)).tolist(), -1, cv2.LINE_AA)


def _room(size: tuple[int, int], rng: np.random.Generator, yy: np.ndarray, xx: np.ndarray
          ) -> np.ndarray:
    """A lit room behind the player (float32, may exceed 255 where a light source is): a light
    or white wall lit unevenly, the ceiling, dark furniture, a white door frame or picture mat,
    a window and a lamp (both brighter than white paper)."""
    w, h = size
    if rng.random() < 0.5:  # a white or off-white wall
        wall = rng.uniform(175, 245) * rng.uniform(0.93, 1.0, 3)
    else:
        wall = rng.uniform(90, 235, 3)
    photo = np.empty((h, w, 3), np.float32)
    photo[:] = wall
    photo *= (1 + rng.uniform(-0.35, 0.35) * (xx / w - 0.5) + rng.uniform(-0.4, 0.2) *
              (yy / h - 0.5))[..., None]
    if rng.random() < 0.4:  # the ceiling, lighter or darker than the wall
        edge = int(rng.uniform(0.05, 0.3) * h)
        photo[:edge] *= rng.uniform(0.8, 1.2)
    for _ in range(int(rng.integers(0, 4))):  # furniture, shelves, a door, a picture
        x0, y0 = int(rng.uniform(-0.1, 1) * w), int(rng.uniform(-0.1, 1) * h)
        bw, bh = int(rng.uniform(0.05, 0.5) * w), int(rng.uniform(0.05, 0.6) * h)
        if rng.random() < 0.35:  # a white frame round it: a door frame, a picture's mat
            rim = int(rng.uniform(0.01, 0.04) * w) + 1
            cv2.rectangle(photo, (x0 - rim, y0 - rim), (x0 + bw + rim, y0 + bh + rim),
                          (rng.uniform(225, 255) * np.ones(3)).tolist(), -1)
        cv2.rectangle(photo, (x0, y0), (x0 + bw, y0 + bh), rng.uniform(15, 200, 3).tolist(), -1)
    if rng.random() < 0.45:  # a window: daylight far brighter than the room, bars across it
        x0, y0 = int(rng.uniform(-0.2, 0.8) * w), int(rng.uniform(-0.2, 0.4) * h)
        bw, bh = int(rng.uniform(0.2, 0.6) * w), int(rng.uniform(0.3, 0.8) * h)
        sky = rng.uniform(260, 450) * rng.uniform(0.9, 1.0, 3)
        cv2.rectangle(photo, (x0, y0), (x0 + bw, y0 + bh), sky.tolist(), -1)
        bar = rng.uniform(30, 240)
        for _ in range(int(rng.integers(0, 3))):
            bx = int(x0 + rng.uniform(0.2, 0.8) * bw)
            cv2.line(photo, (bx, y0), (bx, y0 + bh), (bar, bar, bar), int(rng.integers(2, 9)))
    if rng.random() < 0.35:  # a lamp and its glow
        lamp = np.zeros((h, w), np.float32)
        c = (int(rng.uniform(0, 1) * w), int(rng.uniform(0, 0.6) * h))
        r = int(rng.uniform(0.03, 0.1) * w)
        cv2.circle(lamp, c, r, 1.0, -1)
        lamp = lamp + 0.6 * cv2.GaussianBlur(lamp, (0, 0), 2.5 * r)
        photo += lamp[..., None] * rng.uniform(200, 500) * np.array([0.85, 0.95, 1.0])
    return photo


def _person(photo: np.ndarray, rng: np.random.Generator, skin: np.ndarray, w: int, h: int
            ) -> None:
    """The player behind the card, drawn into ``photo``: a shirt (white in a third of the
    frames), the neck, a skin-toned head with its hair, often off-centre or cut by the frame."""
    hx = int(rng.uniform(0.2, 0.8) * w)
    head_h = rng.uniform(0.25, 0.55) * h
    hy = int(rng.uniform(0.2, 0.55) * h)
    shirt = (rng.uniform(215, 255) * np.ones(3) if rng.random() < 0.33 else
             rng.uniform(10, 230, 3))
    shoulders = hy + int(head_h * 0.75)
    cv2.ellipse(photo, (hx, shoulders + int(0.5 * h)), (int(rng.uniform(0.3, 0.45) * w),
                int(0.55 * h)), 0, 0, 360, shirt.tolist(), -1, cv2.LINE_AA)
    cv2.rectangle(photo, (hx - int(0.2 * head_h), hy), (hx + int(0.2 * head_h), shoulders + 5),
                  (skin * 0.85).tolist(), -1)
    cv2.ellipse(photo, (hx, hy), (int(0.37 * head_h), int(0.5 * head_h)), 0, 0, 360,
                skin.tolist(), -1, cv2.LINE_AA)
    hair = rng.uniform(5, 90) * rng.uniform(0.6, 1.0, 3)
    if rng.random() < 0.15:
        hair = rng.uniform(150, 220) * np.array([0.7, 0.85, 1.0])  # fair or grey hair
    cv2.ellipse(photo, (hx, hy - int(0.25 * head_h)), (int(0.4 * head_h), int(0.3 * head_h)), 0,
                180, 360, hair.tolist(), -1, cv2.LINE_AA)
    for ex in (-1, 1):  # eyes
        cv2.circle(photo, (hx + int(ex * 0.15 * head_h), hy - int(0.05 * head_h)),
                   max(1, int(0.035 * head_h)), (30, 30, 30), -1)


def _webcam(photo: np.ndarray, rng: np.random.Generator, yy: np.ndarray, xx: np.ndarray
            ) -> np.ndarray:
    """What a cheap webcam makes of a scene (float32 radiance): auto-exposure that often
    washes it out, a colour cast, vignetting, motion or focus blur, a low-resolution sensor
    scaled up, chroma noise, clipping and JPEG compression at low quality (uint8 BGR)."""
    h, w = photo.shape[:2]
    photo = photo * rng.uniform(0.75, 1.6)  # exposure: >1 clips walls and the card's border
    photo = photo * rng.uniform(0.85, 1.12, 3)
    r2 = ((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) / 0.5
    photo *= (1 - rng.uniform(0, 0.35) * r2)[..., None]
    if rng.random() < 0.4:  # motion blur: the hand moves
        n = int(rng.integers(3, 16))
        k = np.zeros((n, n), np.float32)
        a = rng.uniform(0, np.pi)
        c = (n - 1) / 2
        cv2.line(k, (int(c - c * np.cos(a)), int(c - c * np.sin(a))),
                 (int(c + c * np.cos(a)), int(c + c * np.sin(a))), 1.0, 1)
        photo = cv2.filter2D(photo, -1, k / k.sum())
    photo = cv2.GaussianBlur(photo, (0, 0), float(rng.uniform(0.4, 1.6)))
    if rng.random() < 0.5:  # a low-resolution sensor, scaled up
        f = rng.uniform(0.35, 0.7)
        small = cv2.resize(photo, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA)
        photo = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    photo = np.clip(photo, 0, 255)
    if rng.random() < 0.5:  # lifted blacks, a flat tone curve
        lift = rng.uniform(10, 50)
        photo = lift + photo * (255 - lift) / 255
    grain = rng.normal(0, rng.uniform(2, 10), photo.shape)
    chroma = cv2.resize(rng.normal(0, rng.uniform(1, 6), (h // 4, w // 4, 3)), (w, h))
    photo = np.clip(photo + grain + chroma, 0, 255).astype(np.uint8)
    ok, jpeg = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(20, 75))])
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR)


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


def no_card_photo(rng: np.random.Generator, size: tuple[int, int] = (640, 480)) -> np.ndarray:
    """A photo with no card in it (BGR): half the time a webcam frame of a lit room with a
    person in it, else a plain surface of any level, unevenly lit, blurred and noisy.

    WHY: a network that learns where the card is from photos that all hold one learns that
    a photo with nothing in it is all card (a photo of one flat level, black to white, came
    out 65-88% card)."""
    w, h = size
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    if rng.random() < 0.5:
        photo = _room(size, rng, yy, xx)
        skin = rng.uniform(70, 245) * np.array([rng.uniform(0.5, 0.75), rng.uniform(0.68, 0.86),
                                                1.0])
        _person(photo, rng, skin, w, h)
        return _webcam(photo, rng, yy, xx)
    photo = _plain_backdrop(size, rng, (0, 255), float(rng.uniform(1, 8)))
    photo *= (1 + rng.uniform(-0.4, 0.4) * (xx / w - 0.5) + rng.uniform(-0.4, 0.4) *
              (yy / h - 0.5))[..., None]
    photo = cv2.GaussianBlur(photo, (0, 0), float(rng.uniform(0.4, 2.0)))
    return np.clip(photo, 0, 255).astype(np.uint8)


def single_card_kinds() -> dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]]:
    """The rendered single-card photos by kind (``synthetic:KIND`` of ``python -m
    vision.single_card``; the card mask's training data): each a function of (code, rng,
    face=None) to (BGR photo, the card's quad)."""
    return {"table": single_card_photo, "held": held_card_photo, "tinted": tinted_held_photo,
            "closeup": closeup_card_photo, "webcam": webcam_card_photo,
            "near": partial(webcam_card_photo, near=True),
            "handheld": partial(webcam_card_photo, heights=HANDHELD_HEIGHTS),
            "gripped": partial(webcam_card_photo, heights=HANDHELD_HEIGHTS, gripped=True),
            "shown": partial(webcam_card_photo, heights=HANDHELD_HEIGHTS, top_in_view=True),
            "shown-gripped": partial(webcam_card_photo, heights=HANDHELD_HEIGHTS, gripped=True,
                                     top_in_view=True)}


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
