"""Rendered domino tables with exact labels: a Muggins line, hands and the boneyard on the mat.

WHY a renderer of its own: the card scenes (:mod:`vision.synth.scenes`) lay cards in columns;
a domino table is laid differently. Tiles lie end to end and touching in the line of play
(doublets crosswise, the line wrapping into a second row when it grows), hands stand side by side
and touching (face down while the hand is played, face up when it is counted at the end), and the
boneyard lies face down and scattered at any angle. The camera, the mat, the table around it and
every nuisance (perspective, lighting gradient, colour cast, glare, shadow band, blur, noise,
JPEG) are the card scenes' own, so the two sets of figures measure the same conditions.

Seeds: a tile scene's generator is keyed by :data:`TILE_STREAM` as well as its number, so no tile
scene shares random numbers with a card scene or anything else; scene numbers at and above
:data:`TILE_EVAL_SEED_BASE` are for measurement only (tuning and calibration stay below).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from protocol_runner.cards import BACK
from vision.geometry import DEFAULT_MAT, MatSpec, Zone
from vision.synth.scenes import (
    MAT_PX_PER_MM,
    _camera,
    _composite,
    _effects,
    _mat_image,
    _table_texture,
    canonical_quad,
)
from vision.synth.tiles import TILE_CODES, TILE_MM, draw_tile_style, render_tile, tile_mask

TILE_STREAM = 0xD0_1E5
"""The first word of every tile scene's seed sequence: tile scenes draw from their own stream."""
TILE_EVAL_SEED_BASE = 20_000_000
"""Tile scene numbers at and above this are for measurement; tuning and calibration stay below."""
GROUPS = ("line", "hand", "boneyard")


@dataclass(frozen=True, slots=True, eq=False)
class SceneTile:
    """One tile's label: its code (``BACK`` face down), quad in image px (canonical order, like
    a card's), the mat zone, which group it lies in and its place there (line: position along
    the line of play; hand: ``hand * 10 + position``; boneyard: order drawn)."""

    code: str
    quad: np.ndarray
    zone: str
    group: str
    index: int


@dataclass(frozen=True, slots=True, eq=False)
class TileScene:
    """A rendered frame and its labels; ``H`` maps mat millimetres to image pixels."""

    image: np.ndarray
    tiles: tuple[SceneTile, ...]
    H: np.ndarray
    seed: int

    def line(self) -> list[str]:
        """The codes of the line of play, in order of play from one end."""
        return [t.code for t in sorted(self.tiles, key=lambda t: t.index) if t.group == "line"]


@dataclass(frozen=True, slots=True)
class _Place:
    code: str
    centre: tuple[float, float]
    angle: float  # degrees; 0 = the tile's long side down the mat (y)
    zone: str
    group: str
    index: int


def _corners(p: _Place) -> np.ndarray:
    w, h = TILE_MM
    own = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    a = np.deg2rad(p.angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return own @ rot.T + p.centre


def _chain(rng: np.random.Generator, length: int) -> list[tuple[int, int]]:
    """A line of play: tiles whose touching ends match, drawn from one set, each tile once.
    Each tile is given as (end facing back along the line, end facing forward)."""
    free = {(int(c[1]), int(c[2])) for c in TILE_CODES}
    first = sorted(free)[int(rng.integers(len(free)))]
    free.discard(first)
    line = [first if rng.random() < 0.5 else first[::-1]]
    while len(line) < length:
        end = line[-1][1]
        fits = sorted(t for t in free if end in t)
        if not fits:
            break
        t = fits[int(rng.integers(len(fits)))]
        free.discard(t)
        line.append(t if t[0] == end else t[::-1])
    return line


def _line_places(rng: np.random.Generator, work: Zone, chain: list[tuple[int, int]]
                 ) -> list[_Place]:
    """The line in one or two rows across the work area, tiles touching end to end."""
    tw, th = TILE_MM
    extents = [tw if a == b else th for a, b in chain]
    rows = 1 if len(chain) < 6 or rng.random() < 0.5 else 2
    split = len(chain) if rows == 1 else int(rng.integers(3, len(chain) - 2))
    out: list[_Place] = []
    row_y = [work.y + rng.uniform(35, 120)]
    row_y.append(row_y[0] + rng.uniform(75, 140))
    for r, (lo, hi) in enumerate(((0, split), (split, len(chain)))[:rows]):
        gaps = rng.uniform(0.3, 2.0, hi - lo)
        length = sum(extents[lo:hi]) + gaps.sum()
        skew = np.deg2rad(rng.uniform(-2.0, 2.0))
        direction = np.array([np.cos(skew), np.sin(skew)])
        start = work.x + rng.uniform(10, max(11.0, work.w - length - 10))
        t = 0.0
        for k in range(lo, hi):
            a, b = chain[k]
            t += extents[k] / 2
            x, y = start + t * direction[0], row_y[r] + t * direction[1]
            y += rng.uniform(-0.8, 0.8)
            angle = np.rad2deg(skew) + rng.uniform(-1.5, 1.5) + (0.0 if a == b else 90.0)
            code = f"D{min(a, b)}{max(a, b)}"
            out.append(_Place(code, (float(x), float(y)), float(angle), "work", "line", k))
            t += extents[k] / 2 + gaps[k - lo]
    return out


def _hand_places(rng: np.random.Generator, side: Zone, codes: list[str], sizes: list[int]
                 ) -> list[_Place]:
    """Hands standing side by side (touching) along the side area, face down unless counted;
    as many of the hands as the area holds."""
    tw, th = TILE_MM
    out: list[_Place] = []
    x = side.x + rng.uniform(5, 25)
    it = iter(codes)
    for h, n in enumerate(sizes):
        if x + n * (tw + 2.0) > side.x + side.w - 5:
            break
        shown = rng.random() < 0.3  # a hand laid open to be counted at the end of the hand
        y = side.y + side.h / 2 + rng.uniform(-35, 35)
        x += tw / 2
        for k in range(n):
            code = next(it)
            angle = rng.uniform(-2.0, 2.0) + (180.0 if rng.random() < 0.5 else 0.0)
            out.append(_Place(code if shown else BACK, (float(x), float(y + rng.uniform(-1, 1))),
                              float(angle), "side", "hand", 10 * h + k))
            x += tw + rng.uniform(0.3, 2.0)
        x += rng.uniform(15, 45) - tw / 2
    return out


def _separated(a: np.ndarray, b: np.ndarray, gap: float) -> bool:
    """Whether two convex quads (mm) lie at least ``gap`` apart along some edge normal."""
    for poly in (a, b):
        for i in range(4):
            edge = poly[(i + 1) % 4] - poly[i]
            normal = np.array([-edge[1], edge[0]]) / np.linalg.norm(edge)
            pa, pb = a @ normal, b @ normal
            if pa.max() + gap <= pb.min() or pb.max() + gap <= pa.min():
                return True
    return False


def _scatter(rng: np.random.Generator, areas: list[Zone], codes: list[str],
             taken: list[np.ndarray], start: int) -> list[_Place]:
    """The boneyard: face-down tiles at any angle, apart from each other and from the rest."""
    out: list[_Place] = []
    for k, _ in enumerate(codes):
        for _try in range(60):
            z = areas[int(rng.integers(len(areas)))]
            p = _Place(BACK, (float(rng.uniform(z.x + 27, z.x + z.w - 27)),
                              float(rng.uniform(z.y + 27, z.y + z.h - 27))),
                       float(rng.uniform(0, 360)), z.name, "boneyard", start + k)
            quad = _corners(p)
            if all(_separated(quad, q, 4.0) for q in taken):
                taken.append(quad)
                out.append(p)
                break
    return out


def _layout(rng: np.random.Generator, mat: MatSpec, line_length: int) -> list[_Place]:
    work, side, discard = mat.zone("work"), mat.zone("side"), mat.zone("discard")
    chain = _chain(rng, line_length)
    places = _line_places(rng, work, chain)
    used = {p.code for p in places}
    rest = [c for c in TILE_CODES if c not in used]
    rng.shuffle(rest)
    sizes = [int(rng.integers(1, 6)) for _ in range(int(rng.integers(2, 5)))]
    while sum(sizes) > len(rest):
        sizes.pop()
    hands = _hand_places(rng, side, rest[:sum(sizes)], sizes)
    places += hands
    taken = [_corners(p) for p in places]
    lowest = max(float(q[:, 1].max()) for q in taken[:len(chain)])
    yard = [discard]
    if work.y + work.h - lowest > 80:  # the work area's free part below the line
        yard.append(Zone("work", work.x, lowest + 10, work.w, work.y + work.h - lowest - 10))
    places += _scatter(rng, yard, rest[len(hands):], taken, len(places))
    return places


def render_tile_scene(
    seed: int,
    *,
    size: tuple[int, int] = (1280, 720),
    mat: MatSpec = DEFAULT_MAT,
    line_length: int | None = None,
    tilt: float = 0.08,
    effects: bool = True,
) -> TileScene:
    """Render tile scene number ``seed``: one double-six set on the mat (a line of play of
    ``line_length`` tiles, default 5–18, hands, the boneyard). Same arguments, same image."""
    if line_length is not None and not 1 <= line_length <= 18:
        raise ValueError(f"line_length must be 1..18 tiles, got {line_length}")
    w, h = size
    if w < 320 or h < 180:
        raise ValueError(f"image size {size} too small: give at least 320×180 pixels")
    rng = np.random.default_rng([TILE_STREAM, int(seed)])
    places = _layout(rng, mat, line_length or int(rng.integers(5, 19)))

    Hm = _camera(rng, mat, size, tilt)
    img = _table_texture(rng, w, h)
    to_img = Hm @ np.diag([1 / MAT_PX_PER_MM, 1 / MAT_PX_PER_MM, 1])
    mat_img = _mat_image(mat).astype(np.float32)
    tint = rng.uniform(0.85, 1.1, 3)
    mat_warp = cv2.warpPerspective(np.clip(mat_img * tint, 0, 255).astype(np.uint8), to_img,
                                   (w, h), flags=cv2.INTER_AREA)
    mat_mask = cv2.warpPerspective(np.full(mat_img.shape[:2], 255, np.uint8), to_img, (w, h))
    m = (mat_mask.astype(np.float32) / 255.0)[..., None]
    img = (img * (1 - m) + mat_warp * m).astype(np.uint8)

    style = draw_tile_style(rng)
    px_per_mm = float(np.sqrt(abs(np.linalg.det(Hm[:2, :2]))))
    fw = int(np.clip(TILE_MM[0] * px_per_mm * 2.0, 16, 160))
    face_size = (fw, 2 * fw)
    alpha_src = tile_mask(face_size, style.corner)
    tiles: list[SceneTile] = []
    for p in places:
        corners = cv2.perspectiveTransform(
            _corners(p).reshape(-1, 1, 2).astype(np.float32), Hm).reshape(4, 2)
        face = render_tile(p.code, rng, face_size, style)
        _composite(img, face, alpha_src, corners, rng)
        tiles.append(SceneTile(p.code, canonical_quad(corners), p.zone, p.group, p.index))
    if effects:
        img = _effects(img, rng)
    return TileScene(img, tuple(tiles), Hm, seed)
