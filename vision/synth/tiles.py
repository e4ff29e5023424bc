"""Domino tiles drawn in code: the 28 faces of a double-six set (``D00`` … ``D66``) and the back.

WHY drawn and varied, like the card faces: sets differ (ivory, white, black or bone bodies; black,
white or number-coloured pips; a brass spinner pin or none; sunk or flat divider), and a classifier
trained on one look fails on the next. Every call draws its style from the generator;
:func:`canonical_tile` gives one fixed look for demos and tests.

A tile is rendered portrait, two squares one above the other (a real tile is about 24 × 48 mm,
:data:`TILE_MM`); which end lies on top is drawn at random, since the code (smaller end first,
``docs/CONVENTIONS.md``) names the tile however it lies. Output is BGR uint8 of ``size`` = (W, H);
outside the rounded corners the tile is filled with its body colour and :func:`tile_mask` gives
the outline for compositing onto a table, exactly as :func:`vision.synth.faces.card_mask` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from protocol_runner.cards import BACK, domino_set

TILE_MM = (24.0, 48.0)
DEFAULT_TILE_SIZE = (120, 240)
TILE_CODES: tuple[str, ...] = tuple(t.code for t in domino_set())
SUPERSAMPLE = 2

# Pip positions on a 3 × 3 grid (row, column) for each number, as printed on real sets.
PIP_LAYOUT: dict[int, tuple[tuple[int, int], ...]] = {
    0: (),
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (0, 2), (2, 0), (2, 2)),
    5: ((0, 0), (0, 2), (1, 1), (2, 0), (2, 2)),
    6: ((0, 0), (1, 0), (2, 0), (0, 2), (1, 2), (2, 2)),
}
# Sets whose pips are coloured by number use roughly these (BGR).
_NUMBER_COLOURS = {1: (200, 120, 30), 2: (60, 150, 40), 3: (40, 40, 210), 4: (30, 110, 190),
                   5: (150, 60, 140), 6: (20, 160, 210)}


# Backs that are not the body colour (BGR): black, dark green, maroon, wood brown, ivory.
_BACK_COLOURS = ((20, 20, 20), (40, 90, 30), (30, 30, 110), (40, 70, 120), (200, 225, 235))


class TileError(ValueError):
    """A code that is not a domino tile (or ``BACK``), or a size too small to draw."""


@dataclass(frozen=True, slots=True)
class TileStyle:
    """One set's look, drawn once from the generator (or fixed: :data:`CLASSIC_TILE`)."""

    body: tuple[int, int, int]
    pips: tuple[int, int, int]
    coloured_pips: bool
    pip_radius: float  # fraction of the square's side
    divider: tuple[int, int, int]
    spinner: bool
    corner: float  # corner radius, fraction of the width
    back: tuple[int, int, int]
    back_mark: bool


CLASSIC_TILE = TileStyle(body=(225, 240, 245), pips=(25, 25, 25), coloured_pips=False,
                         pip_radius=0.085, divider=(60, 60, 60), spinner=False, corner=0.1,
                         back=(225, 240, 245), back_mark=False)


def draw_tile_style(rng: np.random.Generator) -> TileStyle:
    """A random but plausible set: light body with dark pips, or black body with white pips."""
    dark = rng.random() < 0.25
    if dark:
        body = tuple(int(v) for v in rng.integers(10, 45, 3))
        pips = tuple(int(v) for v in rng.integers(215, 256, 3))
    else:
        base = rng.uniform(200, 250)
        body = (int(base - rng.uniform(0, 35)), int(base - rng.uniform(0, 15)), int(base))
        pips = tuple(int(v) for v in rng.integers(0, 50, 3))
    # a dark body's divider is inlaid in the pips' colour: a darker groove would not show
    divider = pips if dark or rng.random() < 0.6 else tuple(int(v * 0.7) for v in body)
    # backs are the body's colour or one of the usual back colours, never the mat's violet felt
    back = body if rng.random() < 0.7 else tuple(
        int(np.clip(v + rng.integers(-15, 16), 0, 255))
        for v in _BACK_COLOURS[int(rng.integers(len(_BACK_COLOURS)))])
    return TileStyle(body=body, pips=pips,  # type: ignore[arg-type]
                     coloured_pips=not dark and rng.random() < 0.3,
                     pip_radius=float(rng.uniform(0.065, 0.1)),
                     divider=divider,  # type: ignore[arg-type]
                     spinner=rng.random() < 0.4, corner=float(rng.uniform(0.05, 0.16)),
                     back=back, back_mark=rng.random() < 0.3)  # type: ignore[arg-type]


def _rounded_mask(w: int, h: int, r: int) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    r = max(1, min(r, w // 2 - 1, h // 2 - 1))
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def _draw_half(canvas: np.ndarray, number: int, top: int, side: int, style: TileStyle,
               jitter: np.ndarray) -> None:
    """Pips of ``number`` in the square whose top edge is at row ``top``."""
    colour = _NUMBER_COLOURS.get(number, style.pips) if style.coloured_pips else style.pips
    margin = 0.24 * side
    step = (side - 2 * margin) / 2
    radius = max(2, int(style.pip_radius * side))
    for (row, col), (dx, dy) in zip(PIP_LAYOUT[number], jitter, strict=False):
        cx = int(margin + col * step + dx * side)
        cy = int(top + margin + row * step + dy * side)
        cv2.circle(canvas, (cx, cy), radius, colour, -1, cv2.LINE_AA)
        shade = tuple(int(v * 0.6) for v in colour)
        cv2.circle(canvas, (cx, cy), radius, shade, max(1, radius // 5), cv2.LINE_AA)


def _finish(canvas: np.ndarray, size: tuple[int, int], style_body: tuple[int, int, int],
            corner: float) -> np.ndarray:
    w, h = size
    out = cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA)
    mask = _rounded_mask(w, h, int(corner * w))
    out[mask == 0] = style_body
    return out


def render_tile(code: str, rng: np.random.Generator | None,
                size: tuple[int, int] = DEFAULT_TILE_SIZE,
                style: TileStyle | None = None) -> np.ndarray:
    """Render tile ``code`` (``D00`` … ``D66``) or ``BACK`` as a portrait BGR image of ``size``.

    With ``rng`` the set's style (unless ``style`` is given), which end lies on top, slight pip
    jitter and shading are drawn; with ``rng=None`` the classic look, smaller end on top.
    """
    if not isinstance(code, str):
        raise TileError(f"tile code must be a string, got {type(code).__name__}")
    code = code.strip().upper()
    w, h = size
    if w < 16 or h < 32:
        raise TileError(f"tile size {size} too small: give at least 16×32 pixels")
    if code != BACK and code not in TILE_CODES:
        raise TileError(f"no tile for code {code!r}: give D00 … D66 (smaller end first) or BACK")
    style = style or (draw_tile_style(rng) if rng is not None else CLASSIC_TILE)
    s = SUPERSAMPLE
    W, H = w * s, h * s
    if code == BACK:
        canvas = np.empty((H, W, 3), np.uint8)
        canvas[:] = style.back
        if style.back_mark:
            cv2.circle(canvas, (W // 2, H // 2), W // 5, tuple(int(v * 0.75) for v in style.back),
                       max(1, W // 30), cv2.LINE_AA)
        return _shade(_finish(canvas, size, style.back, style.corner), rng)
    canvas = np.empty((H, W, 3), np.uint8)
    canvas[:] = style.body
    low, high = int(code[1]), int(code[2])
    ends = (low, high) if rng is None or rng.random() < 0.5 else (high, low)
    side = min(W, H // 2)
    for half, number in enumerate(ends):
        jitter = (rng.normal(0, 0.008, (6, 2)) if rng is not None else np.zeros((6, 2)))
        _draw_half(canvas, number, half * (H // 2), side, style, jitter)
    inset = int(0.12 * W)
    thick = max(1, int(0.04 * W))  # about 1 mm, as on real tiles
    cv2.line(canvas, (inset, H // 2), (W - 1 - inset, H // 2), style.divider, thick, cv2.LINE_AA)
    if style.spinner:
        cv2.circle(canvas, (W // 2, H // 2), max(2, int(0.05 * W)), (60, 160, 200), -1,
                   cv2.LINE_AA)
    return _shade(_finish(canvas, size, style.body, style.corner), rng)


def _shade(img: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """A gentle light gradient across the tile (the surface is glossy)."""
    if rng is None:
        return img
    h, w = img.shape[:2]
    gx, gy = rng.uniform(-0.12, 0.12, 2)
    ramp = 1 + gx * np.linspace(-1, 1, w)[None, :] + gy * np.linspace(-1, 1, h)[:, None]
    return np.clip(img * ramp[..., None], 0, 255).astype(np.uint8)


def canonical_tile(code: str, size: tuple[int, int] = DEFAULT_TILE_SIZE) -> np.ndarray:
    """The fixed classic look (ivory body, black pips, smaller end on top): demos and tests."""
    return render_tile(code, None, size)


def tile_mask(size: tuple[int, int] = DEFAULT_TILE_SIZE, radius: float = 0.1) -> np.ndarray:
    """uint8 mask (255 inside) of a tile of ``size`` = (W, H) with rounded corners."""
    w, h = size
    return _rounded_mask(w, h, int(radius * w))


def tile_scene(code: str, rng: np.random.Generator, size: tuple[int, int] = (320, 320)
               ) -> tuple[np.ndarray, np.ndarray]:
    """One tile lying on a table, seen by a camera: a random set style, any rotation, a slight
    perspective, blur and sensor noise. Returns the image and the tile's true quad (4 × 2,
    clockwise from the top-left corner of the tile as rendered)."""
    w, h = size
    face = render_tile(code, rng, DEFAULT_TILE_SIZE)
    table = np.full((h, w, 3), rng.integers(30, 200, 3), np.uint8)
    table = cv2.add(table, rng.integers(0, 30, (h, w, 3), dtype=np.uint8))
    scale = rng.uniform(0.45, 0.9) * min(w, h) / 320
    half = np.array([[-60, -120], [60, -120], [60, 120], [-60, 120]]) * scale
    angle = rng.uniform(0, 2 * np.pi)
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    centre = rng.uniform(0.38, 0.62, 2) * [w, h]
    quad = (half @ turn.T + centre + rng.normal(0, 3, (4, 2))).astype(np.float32)
    fw, fh = DEFAULT_TILE_SIZE
    source = np.array([[0, 0], [fw - 1, 0], [fw - 1, fh - 1], [0, fh - 1]], np.float32)
    warp = cv2.getPerspectiveTransform(source, quad)
    warped = cv2.warpPerspective(face, warp, (w, h))
    inside = cv2.warpPerspective(tile_mask(DEFAULT_TILE_SIZE), warp, (w, h))
    image = np.where(inside[..., None] > 0, warped, table)
    image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.3, 1.2))
    image = np.clip(image + rng.normal(0, 6, image.shape), 0, 255).astype(np.uint8)
    return image, quad
