"""Training crops: a rendered face as a real rectified camera crop of it would look.

WHY: the classifier never sees a clean render at run time. It sees a card cut out of a photo by a
quad finder that is a few pixels off (slivers of table, a clipped border), lit unevenly, tinted by
the light, blurred, noisy, JPEG-compressed, sometimes with a glare spot, a shadow or a finger over
it, from a webcam that mirrors, at 180° as often as upright. UNO faces are drawn ``wide``: with
the print details (numeral weight, 6/9 bar, +2/+4 small cards) that real decks vary, except a
``PLAIN_SHARE`` of crops in the plain style of scenes and tuning photos (a model trained on wide
printings alone lost 6 ↔ 9 on plain renders). Each of those is drawn here from the generator,
then the crop goes through exactly the run-time preprocessing
(:func:`vision.classifier.preprocess_crop`: resize, white balance by the card's border).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classifier import preprocess_crop
from vision.synth.faces import card_mask, render_face

PLAIN_SHARE = 0.3  # of training crops whose UNO face keeps the plain style (no wide details)
CUT_SIDES = (("left",), ("right",), ("top", "left"), ("top", "right"), ("bottom", "left"),
             ("bottom", "right"), ("top", "bottom"), ("top", "bottom", "left"),
             ("top", "bottom", "right"), ("top", "left", "right"))
"""The sides a card held close runs off the photo at, for :func:`cut_view` (the top end alone,
the bottom cut away, is the other kind of :func:`training_crop`'s close-ups; turned, the
bottom end)."""


def _background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A table-ish backdrop: flat, noisy, wood-like stripes or a checker."""
    base = rng.integers(0, 256, 3).astype(np.float32)
    if rng.random() < 0.4:
        base *= rng.uniform(0.1, 0.5)  # dark tables and backdrops are common
    bg = np.empty((h, w, 3), np.float32)
    bg[:] = base
    kind = rng.integers(3)
    if kind == 1:
        y = np.arange(h, dtype=np.float32)[:, None]
        stripes = np.sin(y / rng.uniform(2, 9) + np.sin(np.arange(w) / rng.uniform(10, 40)))
        bg *= (1 + 0.15 * stripes)[..., None]
    elif kind == 2:
        s = int(rng.integers(6, 30))
        yy, xx = np.mgrid[:h, :w]
        bg *= (0.7 + 0.3 * (((yy // s) + (xx // s)) % 2))[..., None]
    bg += rng.normal(0, rng.uniform(0, 12), bg.shape)
    return bg


def _lighting(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    out = img.astype(np.float32)
    # uneven light: a linear gradient in a random direction
    t = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[:h, :w].astype(np.float32)
    ramp = (np.cos(t) * (xx / w - 0.5) + np.sin(t) * (yy / h - 0.5))
    out *= (1 + rng.uniform(0, 0.7) * ramp)[..., None]
    # a shadow edge across part of the card
    if rng.random() < 0.3:
        a, b = rng.uniform(-1, 1, 2)
        side = (a * (xx / w - 0.5) + b * (yy / h - 0.5) + rng.uniform(-0.3, 0.3)) > 0
        out[side] *= rng.uniform(0.45, 0.8)
    # a glare spot
    if rng.random() < 0.3:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        r = rng.uniform(0.05, 0.25) * w
        blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        out += (rng.uniform(80, 255) * blob)[..., None]
    # exposure, the light's colour, camera saturation and gamma
    out *= rng.uniform(0.45, 1.25)
    out *= rng.uniform(0.7, 1.3, 3)
    out = np.clip(out, 0, 255)
    grey = out.mean(axis=2, keepdims=True)
    out = grey + (out - grey) * rng.uniform(0.45, 1.35)
    out = 255 * (np.clip(out, 0, 255) / 255) ** rng.uniform(0.7, 1.4)
    if rng.random() < 0.3:  # a washed-out webcam: contrast lifted towards a tinted haze
        haze = rng.uniform(90, 230) * rng.uniform(0.85, 1.15, 3)
        out = out + (haze - out) * rng.uniform(0.1, 0.4)
    return np.clip(out, 0, 255).astype(np.uint8)


def _finger(img: np.ndarray, rng: np.random.Generator) -> None:
    """A skin-coloured blob entering from an edge (a hand over part of the card)."""
    h, w = img.shape[:2]
    skin = np.array([rng.uniform(60, 170), rng.uniform(90, 190), rng.uniform(130, 240)])
    edge = rng.integers(4)
    pos = rng.uniform(0.1, 0.9)
    centre = [(pos * w, 0), (w, pos * h), (pos * w, h), (0, pos * h)][edge]
    axes = (int(rng.uniform(0.08, 0.18) * w), int(rng.uniform(0.15, 0.35) * h))
    cv2.ellipse(img, (int(centre[0]), int(centre[1])), axes, float(rng.uniform(0, 180)), 0, 360,
                skin.tolist(), -1, cv2.LINE_AA)


def _camera(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    # resolution lost to distance: down to as few as ~24 px across, back up
    if rng.random() < 0.6:
        small_w = int(rng.uniform(min(24, w - 1), w))
        small = cv2.resize(img, (small_w, max(8, int(small_w * h / w))),
                           interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        k = float(rng.uniform(0.3, 1.8))
        img = cv2.GaussianBlur(img, (0, 0), k)
    if rng.random() < 0.2:  # motion blur
        n = int(rng.integers(3, 9))
        kern = np.zeros((n, n), np.float32)
        kern[n // 2] = 1.0 / n
        m = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), float(rng.uniform(0, 180)), 1)
        img = cv2.filter2D(img, -1, cv2.warpAffine(kern, m, (n, n)))
    noisy = img.astype(np.float32) + rng.normal(0, rng.uniform(0, 10), img.shape)
    img = np.clip(noisy, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 95))])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img


def cut_view(corners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The quad of the part of a card (``corners``: its quad in the scene, clockwise from the
    top-left) left in view where it runs off a photo at one to three of its sides
    (:data:`CUT_SIDES`), each cut at 10-45% of the card and a little askew; the part is kept
    taller than wide (else drawn again), as the single-card reader turns it upright.

    WHY: a card held close to a webcam runs off the photo at its sides and corners, not only at
    its bottom, and the reader reads the part in view stretched to a card's shape (its located
    quad, :func:`vision.card_locator.rectify`). On rendered cards held close, the whole-card
    reading of such parts (cut on two or three sides) lost about one in five, where the same
    cards read at their true quads lost one in thirty (``synthetic:handheld``,
    models/HISTORY.md)."""
    tl, tr, _, bl = corners.astype(np.float64)
    across, down = tr - tl, bl - tl
    for _ in range(20):
        sides = CUT_SIDES[int(rng.integers(len(CUT_SIDES)))]
        x0 = rng.uniform(0.1, 0.45) if "left" in sides else 0.0
        x1 = rng.uniform(0.55, 0.9) if "right" in sides else 1.0
        y0 = rng.uniform(0.1, 0.45) if "top" in sides else 0.0
        y1 = rng.uniform(0.55, 0.9) if "bottom" in sides else 1.0
        if (y1 - y0) * np.linalg.norm(down) >= (x1 - x0) * np.linalg.norm(across):
            break
    # each cut edge a little askew: its two ends moved independently, square to it
    xs = np.array([x0, x1, x1, x0]) + np.array([x0 > 0, x1 < 1, x1 < 1, x0 > 0]) * \
        rng.uniform(-0.04, 0.04, 4)
    ys = np.array([y0, y0, y1, y1]) + np.array([y0 > 0, y0 > 0, y1 < 1, y1 < 1]) * \
        rng.uniform(-0.04, 0.04, 4)
    return (tl + xs[:, None] * across + ys[:, None] * down).astype(np.float32)


def training_crop(code: str, rng: np.random.Generator, size: int,
                  wide: bool | None = None, recent: bool = False,
                  typefaces: tuple[str, ...] = (), any_cut: bool = False) -> np.ndarray:
    """One augmented, rectified and preprocessed crop of ``code`` (BGR, ``size``×``size``).

    ``wide`` None draws the print style (plain in ``PLAIN_SHARE`` of crops); True or False
    forces it, for comparing models on plain and wide renders of otherwise the same draws.
    ``recent``: wide printings also draw recent printings' details (the later trainings'
    crops; :func:`vision.synth.faces.widen_uno_style`), ``typefaces`` also these font files;
    ``any_cut``: half the close-ups cut the card at its sides and corners (:func:`cut_view`),
    not only at its bottom.
    """
    plain = rng.random() < PLAIN_SHARE
    if wide is None:
        wide = not plain
    # renders about as wide as the input (52-112 px at 64): larger ones buy nothing, smaller
    # ones would blur the fine print (the 6/9 bar, the small cards) a larger input is for
    fw = int(rng.uniform(52, 112) * max(1.0, size / 64))
    fh = int(fw * rng.uniform(1.38, 1.6))
    face = render_face(code, rng, size=(fw, fh), wide=wide, recent=recent,
                       typefaces=typefaces)
    # the card on a table, then cut out again through a slightly wrong quad
    m = int(0.2 * fw)
    bg = _background(rng, fh + 2 * m, fw + 2 * m)
    mask = card_mask((fw, fh), float(rng.uniform(0.03, 0.1)))[..., None].astype(np.float32) / 255
    bg[m:m + fh, m:m + fw] = face * mask + bg[m:m + fh, m:m + fw] * (1 - mask)
    scene = np.clip(bg, 0, 255).astype(np.uint8)
    for _ in range(int(rng.random() < 0.35) + int(rng.random() < 0.15)):
        _finger(scene, rng)
    scene = _lighting(scene, rng)
    corners = np.float32([[m, m], [m + fw, m], [m + fw, m + fh], [m, m + fh]])
    corners += rng.normal(0, rng.uniform(0.005, 0.03) * fw, corners.shape).astype(np.float32)
    u = rng.random()
    if u < 0.2 and any_cut and rng.random() < 0.5:
        corners = cut_view(corners, rng)
    elif u < 0.2:
        # a close-up that cuts the card off at the frame: only one end of it is in the crop
        keep = rng.uniform(0.5, 0.9)
        top, bottom = corners[[0, 1]], corners[[3, 2]]
        corners[[3, 2]] = top + (bottom - top) * keep
    elif u < 0.35:
        # a quad found around the card and some of the table or the hand next to it
        centre = corners.mean(0)
        corners = centre + (corners - centre) * rng.uniform(1.04, 1.18, (4, 1))
        corners = corners.astype(np.float32)
    ow, oh = fw, fh
    dst = np.float32([[0, 0], [ow, 0], [ow, oh], [0, oh]])
    crop = cv2.warpPerspective(scene, cv2.getPerspectiveTransform(corners, dst), (ow, oh),
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    crop = _camera(crop, rng)
    if rng.random() < 0.5:
        crop = cv2.rotate(crop, cv2.ROTATE_180)
    if rng.random() < 0.1:  # mirroring webcams
        crop = cv2.flip(crop, 1)
    return preprocess_crop(crop, size)
