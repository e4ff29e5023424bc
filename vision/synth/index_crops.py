"""Rendered corner-index crops of standard cards, cut as the photo reader cuts real ones.

WHY: the corner reader (:mod:`vision.photo_detect`) trained on the index crops of the CC BY
photos alone reads only about a quarter of the indices of scenes it has not seen: two decks, a
few hundred scenes, and it learns the scenes. Rendered cards give it every rank and suit in many
printings, at every angle, size, light and camera fault, so what it must learn is the glyph.

Each scene is one standard card (the MIT scans of ``assets/standard/`` recoloured, or an index
drawn here with the shipped DejaVu fonts) warped onto a random table at any angle, size and mild
perspective, often over another card, then photographed badly (uneven light, shadow, glare,
haze, colour cast, blur, low resolution, noise, salt-and-pepper, JPEG; stretched like the
640×640 photos). From it the crops are cut exactly as at run time: the detector's path
(:func:`vision.photo_detect.corner_crop` of the axis-aligned box around each printed index,
jittered like a detector's box) and the outline path (:func:`vision.photo_cards.index_squares`
of the card's jittered outline, each square labelled by the index whose centre it holds, else
``none``). A *dark* printing (like the black/gold deck of the photos: a black card, black suits
in white or silver, red suits in gold) is drawn in 40% of the scenes.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from protocol_runner.cards import RANKS, SUITS
from vision.photo_cards import CARD_H, CARD_W, clockwise, cut, index_squares
from vision.photo_detect import CORNER_SIZE, NONE, corner_crop
from vision.synth.faces import _SUIT_GLYPH, ASSETS, FONT_FILES, _font

FACE = (int(CARD_W), int(CARD_H))
"""Face size (W, H) in px: the rectified card frame of :mod:`vision.photo_cards`."""
CODES: tuple[str, ...] = tuple(f"{r}{s}" for s in SUITS for r in RANKS)
SCAN_SHARE = 0.5
"""Share of scenes whose card is an MIT scan (recoloured); the rest have a drawn index."""
DARK_SHARE = 0.4
"""Share of scenes with a dark printing (light ink on a black card)."""
SCENE = 320
"""Side of the rendered photo: half the CC BY photos' 640 px, with cards half as large (the
reader reads 32 px, so nothing it sees is lost, and a scene costs a quarter)."""
NONE_KEPT = 0.35
"""Share of an outline's empty index squares kept as ``none`` crops."""

Box = tuple[float, float, float, float]


class IndexCropError(ValueError):
    """A code the index renderer has no face for."""


def jitter_box(box: Box, rng: np.random.Generator) -> Box:
    """A box as an imperfect detector might return it: shifted and scaled a little."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2 + rng.uniform(-0.12, 0.12) * w
    cy = (y0 + y1) / 2 + rng.uniform(-0.12, 0.12) * h
    w *= rng.uniform(0.85, 1.2)
    h *= rng.uniform(0.85, 1.2)
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2


# ----------------------------------------------------------------------------- faces


@lru_cache(maxsize=64)
def _scan(code: str) -> tuple[np.ndarray, Box]:
    """The MIT scan of ``code`` at :data:`FACE` (corners outside the card white) and the box of
    its top-left index, measured as the ink of the index's connected parts."""
    img = cv2.imread(str(ASSETS / "standard" / f"{code}.png"), cv2.IMREAD_COLOR)
    if img is None:
        raise OSError(f"standard face asset missing or unreadable: {code}.png in "
                      f"{ASSETS / 'standard'}")
    img = cv2.resize(img, FACE, interpolation=cv2.INTER_AREA)
    w, h = FACE
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (6, 6), (w - 7, h - 7), 255, -1)
    img[(mask == 0) & (img.max(2) < 60)] = 255
    ink = (img.min(2) < 150).astype(np.uint8)
    ink[:, int(0.2 * w):] = 0
    ink[int(0.34 * h):] = 0
    ink[:4] = 0
    ink[:, :4] = 0
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink)
    parts = [s for s in stats[1:] if s[4] >= 6 and s[0] < 0.12 * w and s[1] < 0.24 * h]
    if not parts:
        raise OSError(f"no index found on the scan {code}.png")
    x0 = min(s[0] for s in parts)
    y0 = min(s[1] for s in parts)
    x1 = max(s[0] + s[2] for s in parts)
    y1 = max(s[1] + s[3] for s in parts)
    return img, (float(x0), float(y0), float(x1), float(y1))


def _glyph(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont,
           centre: tuple[float, float], fill: tuple[int, int, int]) -> Box:
    left, top, right, bottom = font.getbbox(text)
    x = centre[0] - (left + right) / 2
    y = centre[1] - (top + bottom) / 2
    draw.text((x, y), text, font=font, fill=fill)
    return x + left, y + top, x + right, y + bottom


def _drawn(code: str, rng: np.random.Generator) -> tuple[np.ndarray, Box]:
    """A white face with black or red print: the index (rank over suit, font, size, spacing and
    place drawn from ``rng``) at top-left and turned at bottom-right, and a few pips or a court
    frame; returns it at :data:`FACE` and the top-left index's box."""
    ss = 2
    w, h = FACE[0] * ss, FACE[1] * ss
    ink = (200, 0, 0) if code[-1] in "HD" else (0, 0, 0)
    img = Image.new("RGB", (w, h), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    rank, suit = code[:-1], code[-1]
    rank_h = rng.uniform(0.07, 0.13) * h
    family, suit_share = int(rng.integers(len(FONT_FILES))), rng.uniform(0.6, 0.95)
    text = "1O" if rank == "10" and rng.random() < 0.1 else rank
    width = _font(family, int(rank_h * 1.3)).getbbox(text)
    if width[2] - width[0] > 0.17 * w:  # a wide "10": printed narrower, as on real cards
        rank_h *= 0.17 * w / (width[2] - width[0])
    rank_font = _font(family, int(rank_h * 1.3))
    suit_font = _font(0, int(rank_h * 1.3 * suit_share))
    widths = [(f.getbbox(t)[2] - f.getbbox(t)[0]) for f, t in
              ((rank_font, text), (suit_font, _SUIT_GLYPH[suit]))]
    cx = rng.uniform(0.03, 0.07) * w + max(widths) / 2
    top = rng.uniform(0.03, 0.07) * h
    layer = Image.new("RGB", (w, h), (255, 255, 255))
    ld = ImageDraw.Draw(layer)
    rb = _glyph(ld, text, rank_font, (cx, top + rank_h / 2), ink)
    gap = rng.uniform(0.0, 0.25) * rank_h
    sb = suit_font.getbbox(_SUIT_GLYPH[suit])
    sb = _glyph(ld, _SUIT_GLYPH[suit], suit_font, (cx, rb[3] + gap + (sb[3] - sb[1]) / 2), ink)
    box = (min(rb[0], sb[0]), min(rb[1], sb[1]), max(rb[2], sb[2]), max(rb[3], sb[3]))
    corner = layer.crop((0, 0, w // 2, h // 2))
    img.paste(corner, (0, 0))
    img.paste(corner.rotate(180), (w - w // 2, h - h // 2))
    if rank in ("J", "Q", "K"):
        draw.rectangle((0.22 * w, 0.16 * h, 0.78 * w, 0.84 * h), outline=ink, width=ss * 3)
        _glyph(draw, rank, _font(2, int(0.3 * h)), (w / 2, h / 2), ink)
    else:
        pips = 1 if rank == "A" else int(rank)
        pip = _font(0, int((0.28 if rank == "A" else rng.uniform(0.1, 0.14)) * h))
        cols = 1 if pips <= 3 else 2
        rows = -(-pips // cols)
        for k in range(pips):
            px = w / 2 if cols == 1 else (0.33 if k % 2 == 0 else 0.67) * w
            py = (0.22 + 0.56 * (k // cols) / (rows - 1)) * h if rows > 1 else h / 2
            _glyph(draw, _SUIT_GLYPH[suit], pip, (px, py), ink)
    face = cv2.resize(cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR), FACE,
                      interpolation=cv2.INTER_AREA)
    return face, tuple(float(v) / ss for v in box)  # type: ignore[return-value]


def _recolour(face: np.ndarray, rng: np.random.Generator, dark: bool) -> np.ndarray:
    """The face reprinted: paper, black ink and red ink replaced by colours drawn from ``rng``
    (a light card, or a dark one with gold, white or silver ink). Ink is measured as how far a
    pixel is from white, its redness as red above the other channels."""
    b, g, r = cv2.split(face.astype(np.float32) * np.float32(1 / 255))
    ink = (1 - cv2.min(cv2.min(b, g), r))[..., None]
    red = np.clip((r - cv2.max(b, g)) * 1.6, 0, 1)[..., None]
    if dark:  # the black/gold deck: black suits in white or silver, red suits in gold
        paper = rng.uniform(0.02, 0.22, 3)
        black = rng.uniform(0.65, 0.95) * rng.uniform(0.92, 1.08, 3)
        reds = np.array([rng.uniform(0.2, 0.45), rng.uniform(0.55, 0.75), rng.uniform(0.75, 0.95)])
        if rng.random() < 0.25:  # or in red
            reds = np.array([rng.uniform(0.1, 0.35), rng.uniform(0.1, 0.35), rng.uniform(0.7, 1.0)])
    else:
        paper = 1 - rng.uniform(0, 0.08, 3)
        black = rng.uniform(0, 0.2, 3)
        reds = np.array([rng.uniform(0, 0.3), rng.uniform(0, 0.25), rng.uniform(0.6, 0.95)])
    paper, black, reds = (np.float32(255) * v.astype(np.float32) for v in (paper, black, reds))
    out = paper + ink * (black - paper + red * (reds - black))
    return np.clip(out, 0, 255).astype(np.uint8)


def card_face(code: str, rng: np.random.Generator) -> tuple[np.ndarray, Box]:
    """A face of ``code`` (MIT scan or drawn index, recoloured, light or dark) at :data:`FACE`
    and the box of its top-left index in face pixels."""
    if code not in CODES:
        raise IndexCropError(f"no rendered index for {code!r}: give one of the 52 standard "
                             "faces (rank A 2-10 J Q K, suit S H D C)")
    face, box = _scan(code) if rng.random() < SCAN_SHARE else _drawn(code, rng)
    return _recolour(face, rng, dark=rng.random() < DARK_SHARE), box


# ----------------------------------------------------------------------------- scenes


def _table(rng: np.random.Generator) -> np.ndarray:
    """A table: a colour (often dark), smooth blotches, wood grain or grain noise."""
    base = rng.uniform(0, 255, 3) * (rng.uniform(0.15, 0.6) if rng.random() < 0.4 else 1.0)
    low = cv2.resize(rng.normal(0, 1, (6, 6, 3)).astype(np.float32), (SCENE, SCENE),
                     interpolation=cv2.INTER_CUBIC)
    img = low * np.float32(rng.uniform(0, 30)) + base.astype(np.float32)
    if rng.random() < 0.3:
        y = np.arange(SCENE, dtype=np.float32)[:, None]
        grain = np.sin(y / rng.uniform(2, 9) + np.sin(np.arange(SCENE) / rng.uniform(10, 40)))
        img *= (1 + 0.12 * grain).astype(np.float32)[..., None]
    return img + _noise(rng, rng.uniform(0, 10))


def _noise(rng: np.random.Generator, sigma: float) -> np.ndarray:
    """Gaussian noise of a scene (float32, drawn at half resolution: grain, and four times
    cheaper than full-resolution noise)."""
    half = rng.standard_normal((SCENE // 2, SCENE // 2, 3), dtype=np.float32) * np.float32(sigma)
    return cv2.resize(half, (SCENE, SCENE), interpolation=cv2.INTER_NEAREST)


def _place(img: np.ndarray, face: np.ndarray, rng: np.random.Generator
           ) -> tuple[np.ndarray, np.ndarray]:
    """Warp ``face`` onto ``img`` (float, in place) at a random size, angle, perspective and
    place; returns the face→image homography and the card's four corners in the image."""
    w, h = FACE
    height = float(np.exp(rng.uniform(np.log(90), np.log(350))))
    s = height / h
    a = rng.uniform(0, 2 * np.pi)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) * s
    corners = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    centre = rng.uniform(0.15, 0.85, 2) * SCENE
    dst = (corners - (w / 2, h / 2)) @ rot.T + centre
    dst += rng.normal(0, 0.03 * height, dst.shape)
    m = cv2.getPerspectiveTransform(corners, dst.astype(np.float32))
    warped = cv2.warpPerspective(face, m, (SCENE, SCENE), flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(np.full((h, w), 255, np.uint8), m, (SCENE, SCENE))
    alpha = alpha.astype(np.float32)[..., None] / 255
    img *= 1 - alpha
    img += warped.astype(np.float32) * alpha
    return m, dst.astype(np.float32)


_GRID = np.mgrid[0:SCENE, 0:SCENE].astype(np.float32) / SCENE


def motion_kernel(rng: np.random.Generator) -> np.ndarray:
    """A line of 3-8 pixels at a random angle (a shaken camera), for ``cv2.filter2D``: its
    weights sum to about 1, less where the turned line's ends fall off the square."""
    k = int(rng.integers(3, 9))
    kernel = np.zeros((k, k), np.float32)
    kernel[k // 2] = 1 / k
    rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), float(rng.uniform(0, 180)), 1)
    return cv2.warpAffine(kernel, rot, (k, k))


def _camera(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light and camera faults on a float image → uint8 BGR, stretched like the CC BY photos."""
    yy, xx = _GRID
    g = rng.uniform(-0.5, 0.5, 2).astype(np.float32)
    light = g[0] * (xx - 0.5) + g[1] * (yy - 0.5) + np.float32(rng.uniform(0.7, 1.2))
    img = img * light[..., None] * rng.uniform(0.85, 1.15, 3).astype(np.float32)
    if rng.random() < 0.3:  # a shadow edge
        n = rng.normal(0, 1, 2).astype(np.float32)
        side = (xx - rng.uniform(0.2, 0.8)) * n[0] + (yy - rng.uniform(0.2, 0.8)) * n[1]
        img = img * (1 - rng.uniform(0.2, 0.55) / (1 + np.exp(np.clip(-side * 40, -30, 30)))
                     )[..., None]
    if rng.random() < 0.2:  # glare
        c = rng.uniform(0, 1, 2).astype(np.float32)
        r = rng.uniform(0.05, 0.25)
        img = img + (rng.uniform(60, 200) * np.exp(-((xx - c[0]) ** 2 + (yy - c[1]) ** 2)
                                                    / (2 * r * r)))[..., None]
    if rng.random() < 0.25:  # washed-out webcam haze
        img = img * (1 - (k := rng.uniform(0.2, 0.5))) + k * rng.uniform(120, 220)
    if rng.random() < 0.15:
        img = img.mean(2, keepdims=True) + (img - img.mean(2, keepdims=True)) \
            * rng.uniform(0, 0.5)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.6:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.3, 1.0))
    if rng.random() < 0.15:
        out = cv2.filter2D(out, -1, motion_kernel(rng))
    stretch = rng.uniform(0.75, 1.0)
    low = rng.uniform(0.6, 1.0)
    sx, sy = (low * stretch, low) if rng.random() < 0.5 else (low, low * stretch)
    small = cv2.resize(out, (max(16, int(SCENE * sx)), max(16, int(SCENE * sy))),
                       interpolation=cv2.INTER_AREA)
    out = cv2.resize(small, (SCENE, SCENE), interpolation=cv2.INTER_LINEAR)
    noisy = out.astype(np.float32) + _noise(rng, rng.uniform(0, 10))
    out = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, jpg = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 95))])
    out = cv2.imdecode(jpg, cv2.IMREAD_COLOR) if ok else out
    if rng.random() < 0.15:  # salt-and-pepper, as some of the photos carry
        dots = rng.random(out.shape[:2]) < rng.uniform(0.002, 0.03)
        out[dots] = rng.choice([0, 255], (int(dots.sum()), 1))
    return out


def scene_crops(code: str, rng: np.random.Generator) -> Iterator[tuple[str, np.ndarray]]:
    """(label, :data:`CORNER_SIZE`-px crop) pairs of one rendered photo of ``code``: both
    printed indices cut as the detector's boxes would be, and the outline's index squares
    (those holding no index centre as ``none``, a :data:`NONE_KEPT` share of them)."""
    img = _table(rng)
    if rng.random() < 0.5:  # another card below or beside it
        _place(img, card_face(CODES[int(rng.integers(len(CODES)))], rng)[0], rng)
    face, box = card_face(code, rng)
    m, quad = _place(img, face, rng)
    photo = _camera(img, rng)
    w, h = FACE
    x0, y0, x1, y1 = box
    tl = np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    centres = []
    for pts in (tl, np.float32([w, h]) - tl):
        p = cv2.perspectiveTransform(pts[None], m)[0]
        c = p.mean(0)
        if not (0 <= c[0] < SCENE and 0 <= c[1] < SCENE):
            continue
        centres.append(c)
        aabb = (float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()),
                float(p[:, 1].max()))
        yield code, corner_crop(photo, jitter_box(aabb, rng))
    size = float(np.sqrt(cv2.contourArea(quad)))
    outline = clockwise(quad + rng.normal(0, 0.02 * size, quad.shape).astype(np.float32))
    for square in index_squares(outline):
        holds = any(cv2.pointPolygonTest(square.reshape(-1, 1, 2), (float(c[0]), float(c[1])),
                                         False) >= 0 for c in centres)
        if holds or rng.random() < NONE_KEPT:
            yield (code if holds else NONE), cut(photo, square, CORNER_SIZE)


def render_crops(count: int, seed: int) -> tuple[list[np.ndarray], list[str]]:
    """About ``count`` crops of scenes of the 52 faces in turn (seeds ``[seed, scene]``, so the
    same call renders the same crops)."""
    crops: list[np.ndarray] = []
    codes: list[str] = []
    k = 0
    while len(crops) < count:
        rng = np.random.default_rng([seed, k])
        for label, crop in scene_crops(CODES[k % len(CODES)], rng):
            crops.append(crop)
            codes.append(label)
        k += 1
    return crops, codes


# ----------------------------------------------------------------------------- whole photos


def _back_face(rng: np.random.Generator) -> np.ndarray:
    """A face-down card at :data:`FACE`: a patterned back drawn in code, or a plain one (like
    the black deck of the photos)."""
    from vision.synth.faces import render_standard

    if rng.random() < 0.5:
        return render_standard("BACK", FACE, rng)
    face = np.full((FACE[1], FACE[0], 3), 255, np.uint8)
    return _recolour(face, rng, dark=rng.random() < 0.7)


def table_photo(rng: np.random.Generator, cards: int | None = None
                ) -> tuple[np.ndarray, list[tuple[str, Box]]]:
    """A rendered :data:`SCENE`-px photo of ``cards`` (1-5 when None) standard cards, some face
    down, lying at any angle and overlapping, and its labels as the CC BY photos label theirs:
    (code, box) of every printed index whose centre no later card covers, and (``BACK``, box)
    of every face-down card left more than half visible."""
    img = _table(rng)
    n = int(rng.integers(1, 6)) if cards is None else cards
    placed: list[tuple[str, list[np.ndarray], np.ndarray]] = []
    w, h = FACE
    for _ in range(n):
        if rng.random() < 0.15:
            m, quad = _place(img, _back_face(rng), rng)
            placed.append(("BACK", [quad], quad))
            continue
        code = CODES[int(rng.integers(len(CODES)))]
        face, (x0, y0, x1, y1) = card_face(code, rng)
        m, quad = _place(img, face, rng)
        tl = np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        marks = [cv2.perspectiveTransform(p[None], m)[0] for p in (tl, np.float32([w, h]) - tl)]
        placed.append((code, marks, quad))
    photo = _camera(img, rng)
    labels: list[tuple[str, Box]] = []
    for k, (code, marks, _) in enumerate(placed):
        above = [q for _, _, q in placed[k + 1:]]
        for p in marks:
            c = p.mean(0)
            if not (0 <= c[0] < SCENE and 0 <= c[1] < SCENE):
                continue
            probe = [c] if code != "BACK" else list(p) + [c]
            hidden = sum(any(cv2.pointPolygonTest(q.reshape(-1, 1, 2), (float(x), float(y)),
                                                  False) >= 0 for q in above) for x, y in probe)
            if hidden > len(probe) // 2:
                continue
            labels.append((code, (float(p[:, 0].min()), float(p[:, 1].min()),
                                  float(p[:, 0].max()), float(p[:, 1].max()))))
    return photo, labels
