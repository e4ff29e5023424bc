"""Rendered table scenes with exact labels: the mat, up to ~50 cards in columns/bands, a camera.

WHY: no real photos of many UNO cards on one table exist, so localisation, layout reading and the
end-to-end figures are trained and measured on renders. Everything is drawn from one seed, so a
scene is reproducible from its number alone, and each label (code, quad in image pixels, zone,
column, row) is exact because the renderer placed the card there.

Cards are laid out in millimetres on the mat (:class:`vision.geometry.MatSpec`) and projected with
a random camera homography; faces come from :func:`vision.synth.faces.render_face`. Nuisances:
table textures around the mat, felt tint, lighting gradients, colour casts, glare, soft shadows,
blur, noise, JPEG, uneven spacing and skew, cards turned upside down, fanned (overlapping)
columns, a hand reaching in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import cv2
import numpy as np

from protocol_runner.cards import BACK, standard_deck, uno_deck
from vision.geometry import DEFAULT_MAT, MatSpec
from vision.mat import render_mat

if TYPE_CHECKING:
    from vision.synth.faces import UnoStyle

CARD_MM = {"uno": (56.0, 87.0), "standard": (63.0, 88.0)}
MAT_PX_PER_MM = 2.0


@dataclass(frozen=True, slots=True, eq=False)
class SceneCard:
    """One card's label. ``quad``: image pixels, canonical order (see :func:`canonical_quad`)."""

    code: str
    quad: np.ndarray
    zone: str
    column: int | None
    row: int | None
    occluded: bool = False
    covered: bool = False

    @property
    def box(self) -> tuple[float, float, float, float]:
        x, y = self.quad[:, 0], self.quad[:, 1]
        return float(x.min()), float(y.min()), float(x.max()), float(y.max())


@dataclass(frozen=True, slots=True, eq=False)
class Scene:
    """A rendered frame and its labels. ``H`` maps mat millimetres to image pixels."""

    image: np.ndarray
    cards: tuple[SceneCard, ...]
    H: np.ndarray
    seed: int
    deck: str
    hand: np.ndarray | None = None

    def columns(self, zone: str = "work") -> list[list[str]]:
        """The layout's codes as the observation counts them: columns, each top to bottom."""
        cols: dict[int, dict[int, str]] = {}
        for c in self.cards:
            if c.zone == zone and c.column is not None and c.row is not None:
                cols.setdefault(c.column, {})[c.row] = c.code
        return [[col[r] for r in sorted(col)] for _, col in sorted(cols.items())]


def canonical_quad(quad: np.ndarray) -> np.ndarray:
    """Order a card's 4 corners clockwise from the top-left of the card as it lies.

    "As it lies" is read in the image: the card is taken portrait (a short edge on top) and of
    its two short edges the higher one is the top; order is clockwise on screen (y down).
    Labels and detections both use this, so they compare corner by corner.
    """
    q = np.asarray(quad, np.float32).reshape(4, 2)
    centre = q.mean(axis=0)
    ang = np.arctan2(q[:, 1] - centre[1], q[:, 0] - centre[0])
    q = q[np.argsort(ang)]  # clockwise on screen, since y points down
    e0 = np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[2])
    e1 = np.linalg.norm(q[2] - q[1]) + np.linalg.norm(q[0] - q[3])
    if e0 > e1:  # edge 0→1 is long: start one corner later so it becomes a side
        q = np.roll(q, -1, axis=0)
    top_a = (q[0, 1] + q[1, 1]) / 2
    top_b = (q[2, 1] + q[3, 1]) / 2
    if top_b < top_a:
        q = np.roll(q, -2, axis=0)
    return q


@lru_cache(maxsize=4)
def _mat_image(mat: MatSpec) -> np.ndarray:
    return render_mat(mat, MAT_PX_PER_MM)


def _table_texture(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    base = rng.uniform(30, 200, 3)
    small = rng.normal(0, 1, (max(2, h // 40), max(2, w // 40), 3)).astype(np.float32)
    tex = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC) * rng.uniform(5, 25)
    if rng.random() < 0.5:  # wood-like grain along x
        grain = np.sin(np.linspace(0, rng.uniform(20, 80), h))[:, None, None]
        tex += grain * rng.uniform(5, 20)
    return np.clip(base + tex, 0, 255).astype(np.uint8)


def _camera(rng: np.random.Generator, mat: MatSpec, size: tuple[int, int],
            tilt: float) -> np.ndarray:
    """A homography mat mm → image px: the mat fills most of the frame, seen slightly obliquely."""
    w, h = size
    scale = min(w / mat.width, h / mat.height) * rng.uniform(0.86, 0.96)
    cx, cy = w / 2 + rng.uniform(-0.03, 0.03) * w, h / 2 + rng.uniform(-0.03, 0.03) * h
    a = np.deg2rad(rng.uniform(-4, 4))
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    src = mat.corners().astype(np.float64)
    dst = (src - [mat.width / 2, mat.height / 2]) * scale @ rot.T + [cx, cy]
    # perspective: one edge farther from the camera than the other, plus corner jitter
    far = rng.uniform(0, tilt)
    if rng.random() < 0.5:
        dst[[0, 1], 0] += np.array([1, -1]) * far * scale * mat.width / 2
    else:
        dst[[3, 2], 0] += np.array([1, -1]) * far * scale * mat.width / 2
    dst += rng.uniform(-1, 1, dst.shape) * 0.01 * min(w, h)
    return cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))


@dataclass(frozen=True, slots=True)
class _Placement:
    code: str
    centre: tuple[float, float]
    angle: float  # degrees, the card's own rotation (180 = upside down)
    zone: str
    column: int | None
    row: int | None


def _card_corners_mm(p: _Placement, size_mm: tuple[float, float]) -> np.ndarray:
    w, h = size_mm
    own = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    a = np.deg2rad(p.angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return own @ rot.T + p.centre


def _layout(rng: np.random.Generator, codes: list[str], mat: MatSpec, size_mm: tuple[float, float],
            rows: int, fanned: bool, n_side: int, flip: float, discard: bool = True
            ) -> list[_Placement]:
    cw, ch = size_mm
    work = mat.zone("work")
    n_work = len(codes) - discard - n_side
    work_codes, side_codes = codes[:n_work], codes[n_work + discard:]
    n_cols = -(-n_work // rows)
    if fanned:
        pitch_y = rng.uniform(0.28, 0.36) * ch
        band_h = ch + (rows - 1) * pitch_y + rng.uniform(8, 16)
    else:
        pitch_y = ch + rng.uniform(4, 12)
        band_h = rows * pitch_y
    n_bands = max(1, int((work.h + 1e-6) // band_h))
    per_band = -(-n_cols // n_bands)
    gap = min(rng.uniform(3, 12), (work.w - 4) / per_band - cw)
    if gap < 0:
        raise ValueError(f"{n_work} cards in columns of {rows} do not fit the work area")
    pitch_x = cw + gap
    used_w = per_band * pitch_x
    # a slight skew of the whole layout (rows drift down to the right), only where it fits
    spare = work.h - n_bands * band_h - 6
    skew = float(np.clip(rng.uniform(-2.5, 2.5), -1, 1) * np.rad2deg(
        np.arctan(max(spare, 0) / used_w))) if gap > 6 else 0.0
    skew = max(-2.5, min(2.5, skew))
    x0 = work.x + (work.w - used_w) / 2 + pitch_x / 2
    y0 = work.y + (work.h - n_bands * band_h) / 2 + ch / 2 + 3
    y0 -= (used_w / 2) * np.tan(np.deg2rad(skew))
    out: list[_Placement] = []
    sk = np.deg2rad(skew)
    for i, code in enumerate(work_codes):
        col, row = divmod(i, rows)
        band, col_in_band = divmod(col, per_band)
        x = x0 + col_in_band * pitch_x + rng.uniform(-1.5, 1.5) * (gap > 4)
        y = y0 + band * band_h + row * pitch_y + rng.uniform(-1.5, 1.5) * (not fanned)
        y += (x - x0) * np.tan(sk)
        angle = rng.uniform(-3, 3) + (180.0 if rng.random() < flip else 0.0)
        out.append(_Placement(code, (x, y), angle, "work", col, row))
    d = mat.zone("discard")
    if discard:
        out.append(_Placement(codes[n_work], (d.x + d.w / 2 + rng.uniform(-15, 15),
                                              d.y + d.h / 2),
                              rng.uniform(-15, 15) + 90.0 * (rng.random() < 0.2), "discard",
                              None, None))
    s = mat.zone("side")
    for k, code in enumerate(side_codes):
        x = s.x + 20 + cw / 2 + k * (cw + rng.uniform(6, 14))
        out.append(_Placement(code, (x, s.y + s.h / 2), rng.uniform(-4, 4), "side", k, 0))
    return out


def _composite(img: np.ndarray, face: np.ndarray, alpha_src: np.ndarray, quad: np.ndarray,
               rng: np.random.Generator) -> None:
    """Draw a face onto ``img`` inside ``quad`` (own TL, TR, BR, BL) with edge and soft shadow."""
    H, W = img.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 4
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 5
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(W, x1), min(H, y1)
    if x1 <= x0 or y1 <= y0:
        return
    fh, fw = face.shape[:2]
    src = np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]])
    M = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(face, M, size, flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(alpha_src, M, size, flags=cv2.INTER_LINEAR).astype(np.float32)
    alpha /= 255.0
    roi = img[y0:y1, x0:x1].astype(np.float32)
    shift = np.float32([[1, 0, rng.uniform(0.5, 2.5)], [0, 1, rng.uniform(0.5, 2.5)]])
    shadow = cv2.GaussianBlur(cv2.warpAffine(alpha, shift, size), (0, 0), 1.5)
    roi *= 1.0 - rng.uniform(0.25, 0.5) * shadow[..., None]
    edge = np.clip(alpha - cv2.erode(alpha, np.ones((3, 3), np.float32)), 0, 1)
    card = warped.astype(np.float32) * (1.0 - rng.uniform(0.2, 0.45) * edge[..., None])
    a = alpha[..., None]
    img[y0:y1, x0:x1] = np.clip(roi * (1 - a) + card * a, 0, 255).astype(np.uint8)


def _hand(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A hand-and-forearm polygon reaching in from the bottom or a side edge (image px)."""
    side = rng.integers(3)
    tip = np.array([rng.uniform(0.2, 0.8) * w, rng.uniform(0.25, 0.7) * h])
    base = {0: [tip[0] + rng.uniform(-200, 200), h + 40], 1: [-40, tip[1] + 150],
            2: [w + 40, tip[1] + 150]}[int(side)]
    base = np.array(base)
    d = tip - base
    d /= np.linalg.norm(d)
    n = np.array([-d[1], d[0]])
    arm_w, palm = rng.uniform(45, 70), rng.uniform(55, 80)
    pts = [base + n * arm_w, tip - d * palm + n * palm * 0.9]
    for k in range(4):  # fingers
        off = palm * (0.75 - 0.5 * k)
        pts += [tip + n * off - d * 10, tip + n * off + d * rng.uniform(30, 55)]
    pts += [tip - d * palm - n * palm * 0.9, base - n * arm_w]
    return np.array(pts, np.float32)


def render_scene(
    seed: int,
    n_cards: int = 50,
    *,
    deck: str = "uno",
    size: tuple[int, int] = (1280, 720),
    mat: MatSpec = DEFAULT_MAT,
    rows: int = 4,
    fanned: bool = False,
    back_fraction: float = 0.1,
    flip: float = 0.25,
    hand: bool = False,
    tilt: float = 0.08,
    effects: bool = True,
    codes: Sequence[str] | None = None,
    style: UnoStyle | None = None,
) -> Scene:
    """Render scene number ``seed``: ``n_cards`` cards (work columns + discard + side row).

    ``deck`` is "uno", "standard" or "mixed" (both kinds of face). ``codes`` lays exactly those
    cards instead of drawing them (in the work columns only, in order, column by column; then
    ``n_cards`` and ``back_fraction`` are unused), and
    ``style`` prints every UNO face in that one printing instead of one drawn from the seed
    (:func:`vision.synth.faces.printing`): a deck enrolment's photos. The same arguments always
    give the same image and labels.
    """
    given = codes is not None
    if codes is not None:
        n_cards = len(codes)
    least = 1 if given else 2  # a drawn scene always has a card on the discard pile
    if not least <= n_cards <= 60:
        raise ValueError(f"n_cards must be {least}..60, got {n_cards}")
    if deck not in ("uno", "standard", "mixed"):
        raise ValueError(f"deck must be uno, standard or mixed, got {deck!r}")
    from vision.synth.faces import card_mask, draw_uno_style, render_face

    rng = np.random.default_rng(seed)
    w, h = size
    if codes is None:
        pool = [c.code for c in uno_deck()] if deck != "standard" else []
        if deck != "uno":
            pool += [c.code for c in standard_deck()]
        codes = [str(c) for c in rng.choice(pool, size=n_cards, replace=len(pool) < n_cards)]
        codes = [BACK if rng.random() < back_fraction else c for c in codes]
        n_side = int(rng.integers(0, 4)) if n_cards > 8 else 0
    else:
        codes, n_side = list(codes), 0
    size_mm = CARD_MM["standard" if deck == "standard" else "uno"]
    places = _layout(rng, codes, mat, size_mm, rows, fanned, n_side, flip,
                     discard=not given)

    Hm = _camera(rng, mat, size, tilt)
    img = _table_texture(rng, w, h)
    mat_img = _mat_image(mat).astype(np.float32)
    tint = rng.uniform(0.85, 1.1, 3)
    mat_warp = cv2.warpPerspective(np.clip(mat_img * tint, 0, 255).astype(np.uint8),
                                   Hm @ np.diag([1 / MAT_PX_PER_MM, 1 / MAT_PX_PER_MM, 1]),
                                   (w, h), flags=cv2.INTER_AREA)
    mat_mask = cv2.warpPerspective(np.full(mat_img.shape[:2], 255, np.uint8),
                                   Hm @ np.diag([1 / MAT_PX_PER_MM, 1 / MAT_PX_PER_MM, 1]),
                                   (w, h))
    m = (mat_mask.astype(np.float32) / 255.0)[..., None]
    img = (img * (1 - m) + mat_warp * m).astype(np.uint8)

    if style is None:
        style = draw_uno_style(rng)
    px_per_mm = float(np.sqrt(abs(np.linalg.det(Hm[:2, :2]))))
    fw = int(np.clip(size_mm[0] * px_per_mm * 1.6, 48, 240))
    face_size = (fw, int(fw * size_mm[1] / size_mm[0]))
    alpha_src = card_mask(face_size)
    cards: list[SceneCard] = []
    quads: list[np.ndarray] = []
    for p in places:
        corners = cv2.perspectiveTransform(
            _card_corners_mm(p, size_mm).reshape(-1, 1, 2).astype(np.float32), Hm).reshape(4, 2)
        kind = "standard" if p.code in [c.code for c in standard_deck()] else "uno"
        if p.code == BACK:
            kind = "standard" if deck == "standard" else "uno"
        face = render_face(p.code, rng, face_size,
                           style=style if kind == "uno" else None, deck=kind)
        _composite(img, face, alpha_src, corners, rng)
        quads.append(corners)
        cards.append(SceneCard(p.code, canonical_quad(corners), p.zone, p.column, p.row))
    if fanned:  # every card but the last of its column is partly covered by the next one
        last = {}
        for i, c in enumerate(cards):
            if c.zone == "work":
                last[c.column] = i
        cards = [SceneCard(c.code, c.quad, c.zone, c.column, c.row,
                           covered=c.zone == "work" and last[c.column] != i)
                 for i, c in enumerate(cards)]

    hand_poly = None
    if hand:
        hand_poly = _hand(rng, w, h)
        hmask = np.zeros((h, w), np.uint8)
        cv2.fillPoly(hmask, [hand_poly.astype(np.int32)], 255)
        hmask = cv2.GaussianBlur(hmask, (0, 0), 3)
        skin = np.array([rng.uniform(60, 150), rng.uniform(100, 180), rng.uniform(150, 235)])
        a = (hmask.astype(np.float32) / 255)[..., None]
        img = (img * (1 - a) + skin * a).astype(np.uint8)
        cards = [SceneCard(c.code, c.quad, c.zone, c.column, c.row,
                           occluded=bool(hmask[int(np.clip(c.quad[:, 1].mean(), 0, h - 1)),
                                               int(np.clip(c.quad[:, 0].mean(), 0, w - 1))] > 64),
                           covered=c.covered) for c in cards]
    if effects:
        img = _effects(img, rng)
    return Scene(img, tuple(cards), Hm, seed, deck, hand_poly)


def _effects(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    f = img.astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    gx, gy = rng.uniform(-0.3, 0.3, 2)
    light = 1.0 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5)
    light *= rng.uniform(0.75, 1.15)
    f *= light[..., None] * rng.uniform(0.9, 1.1, 3)  # brightness gradient and colour cast
    if rng.random() < 0.5:  # a soft shadow band
        cx, r = rng.uniform(0, w), rng.uniform(0.1, 0.3) * w
        band = np.exp(-((xx - cx) ** 2) / (2 * r * r))
        f *= (1 - rng.uniform(0.1, 0.35) * band)[..., None]
    for _ in range(int(rng.integers(0, 3))):  # glare
        gx0, gy0, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(20, 90)
        f += (rng.uniform(40, 140) * np.exp(-((xx - gx0) ** 2 + (yy - gy0) ** 2) / (2 * r * r))
              )[..., None]
    sigma = rng.uniform(0, 1.0)
    if sigma > 0.3:
        f = cv2.GaussianBlur(f, (0, 0), sigma)
    f += rng.normal(0, rng.uniform(0, 5), f.shape).astype(np.float32)
    out = np.clip(f, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 96))])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out
