"""Card faces drawn in code: every UNO face, every standard face, the joker and card backs.

WHY drawn and varied: no labelled photos of most UNO printings exist that we may ship, so the
classifier learns from renders. A model trained on one crude look fails on real decks (the probe of
issue 5: 19% top-1). Every call therefore draws its *style* (field colours, ellipse kind, fonts,
italic skew, outlines, shadows, corner indices) from the generator, so that real printings (classic
white ellipse, outline-ellipse newer printings, sunburst ellipses, olive or bright greens...) all
fall inside the family of renders. ``canonical_face`` gives one fixed, classic look for demos.

Standard faces are the MIT-licensed scans in ``assets/standard`` (see its NOTICE.md) or, for
variety, pips and indices drawn with the shipped DejaVu fonts. Output is BGR uint8, portrait.
Outside the rounded corners the card is filled with its own border colour; ``card_mask`` gives the
rounded outline for anyone compositing a card onto a table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from protocol_runner.cards import BACK, JOKER, RANKS, SUITS, UNO_BLACK, UNO_COLOURS, UNO_SYMBOLS

ASSETS = Path(__file__).resolve().parent / "assets"
FONT_FILES = (
    "DejaVuSans-Bold.ttf", "DejaVuSansCondensed-Bold.ttf", "DejaVuSerifCondensed-Bold.ttf"
)
UNSEEN_FONTS = ("DejaVuSans-ExtraLight.ttf",)
"""Fonts no training render draws (``draw_uno_style`` picks among ``FONT_FILES`` only): the
thin numerals of :func:`printing` ``thin:SEED``, a deck unlike every render, on which deck
enrolment is measured."""
OTHER_TYPEFACES = ("Roboto-Black.ttf", "SourceSansPro-Black.ttf", "FredokaOne-Regular.ttf")
"""Black cuts of three other families, drawn only by trainings given ``typefaces``
(:func:`widen_uno_style`): shapes of 1, 5, 6 and 9 that no DejaVu cut has (a 1 without a foot,
rounder bowls)."""
LATER_TYPEFACES = ("Lato-Black.ttf",)
"""A fourth family, drawn beside :data:`OTHER_TYPEFACES` by trainings after seed 4
(:meth:`vision.train.data.CardRecipe.for_seed`): wide, round numerals with open bowls."""
FONTS = FONT_FILES + UNSEEN_FONTS + OTHER_TYPEFACES + LATER_TYPEFACES
"""Every font file, in the order ``UnoStyle.font`` indexes."""
DEFAULT_SIZE = (240, 360)
SUPERSAMPLE = 2

UNO_FACE_CODES: tuple[str, ...] = tuple(
    f"{s}{c}" for c in UNO_COLOURS for s in UNO_SYMBOLS
) + UNO_BLACK
STANDARD_FACE_CODES: tuple[str, ...] = tuple(f"{r}{s}" for s in SUITS for r in RANKS) + (JOKER,)
ALL_FACE_CODES: tuple[str, ...] = UNO_FACE_CODES + STANDARD_FACE_CODES + (BACK,)

# Printed UNO colours as HSV (OpenCV scale: H 0-179) centres and how far printings wander.
_UNO_HSV = {
    "R": ((2, 215, 215), (5, 40, 40)),
    "Y": ((25, 220, 240), (5, 40, 25)),
    "G": ((56, 200, 160), (20, 50, 55)),  # olive (H 36) to bluish greens
    "B": ((108, 215, 190), (8, 40, 50)),
}
_RGB_PRINT = {"R": (225, 35, 35), "Y": (250, 210, 20), "G": (40, 160, 70), "B": (20, 100, 200)}


class FaceError(ValueError):
    """A code that no face renderer knows."""


@dataclass(frozen=True)
class UnoStyle:
    """One printing of an UNO deck: everything a render varies, drawn once from the generator."""

    paper: tuple[int, int, int]
    field: dict[str, tuple[int, int, int]]
    border: float
    radius: float
    ellipse: str  # "filled", "ring" or "rays"
    ellipse_angle: float
    ellipse_axes: tuple[float, float]
    font: int
    skew: float
    stretch: float
    symbol_scale: float
    outline: float
    shadow: tuple[float, float]
    hard_shadow: bool
    index_scale: float
    index_pos: tuple[float, float]
    back_logo: str  # "UNO" text variant drawn on backs
    # Print details that ``widen_uno_style`` varies (training crops only); the defaults are the
    # look every other render keeps, so scenes and tuning photos stay the same pictures.
    weight: float = 0.0  # extra numeral weight, of the glyph's height (heavy printed fonts)
    underline: tuple[float, float, float] | None = None  # 6/9 bar: thickness, gap, width
    cards_tilt: float = 0.0  # degrees the +2 / +4 small cards are turned (counter-clockwise)
    cards_layout: int = 0  # +4: 0 diamond, 1 staircase down the diagonal, 2 fanned row
    cards_edge: str = ""  # "" as before; "dark", "white" (mini cards) or "shadow"
    curled_reverse: bool = False  # half the reverse symbols drawn as the curled S
    footless_one: bool = False  # the numeral 1 drawn without its foot (:func:`_footless`)
    reverse_index: float = 1.0  # the reverse corner index's size, times the plain look's
    index_bar: str = "short"  # 6/9 corner index: one of INDEX_BARS (:func:`render_uno`)
    current_wild: bool = False  # wild cards as current decks print them (current_wild_style)


def _hsv_to_rgb(h: float, s: float, v: float) -> tuple[int, int, int]:
    px = np.uint8([[[int(h) % 180, int(np.clip(s, 0, 255)), int(np.clip(v, 0, 255))]]])
    r, g, b = cv2.cvtColor(px, cv2.COLOR_HSV2RGB)[0, 0]
    return int(r), int(g), int(b)


def draw_uno_style(rng: np.random.Generator) -> UnoStyle:
    """Draw one plausible UNO printing (colours, shapes, fonts) from ``rng``."""
    field = {}
    for c, ((h, s, v), (dh, ds, dv)) in _UNO_HSV.items():
        field[c] = _hsv_to_rgb(h + rng.uniform(-dh, dh), s + rng.uniform(-ds, ds / 2),
                               v + rng.uniform(-dv, dv / 2))
    tint = rng.uniform(-12, 0, 3)
    paper = tuple(int(255 + t) for t in tint)
    # the oval: the classic tall one tilted along the diagonal, or the upright, nearly round
    # one of newer printings that spans the whole field's width
    if rng.random() < 0.4:
        angle = float(rng.uniform(-6, 6))
        axes = (float(rng.uniform(0.4, 0.52)), float(rng.uniform(0.24, 0.33)))
    else:
        angle = float(rng.uniform(0, 42) if rng.random() < 0.3 else rng.uniform(25, 42))
        axes = (float(rng.uniform(0.27, 0.45)), float(rng.uniform(0.4, 0.5)))
    return UnoStyle(
        paper=paper,  # type: ignore[arg-type]
        field=field,
        border=float(rng.uniform(0.045, 0.085)),
        radius=float(rng.uniform(0.05, 0.1)),
        ellipse=str(rng.choice(["filled", "ring", "rays"], p=[0.35, 0.35, 0.3])),
        ellipse_angle=angle,
        ellipse_axes=axes,
        font=int(rng.integers(len(FONT_FILES))),
        skew=float(rng.uniform(-0.05, 0.28)),
        stretch=float(rng.uniform(0.85, 1.3)),
        symbol_scale=float(rng.uniform(0.38, 0.58)),  # of the card's height, glyph padding included
        outline=float(rng.uniform(0.0, 0.06)),
        shadow=(float(rng.uniform(-0.03, 0.03)), float(rng.uniform(0.0, 0.035))),
        hard_shadow=bool(rng.random() < 0.4),
        index_scale=float(rng.uniform(0.1, 0.15)),
        index_pos=(float(rng.uniform(0.15, 0.2)), float(rng.uniform(0.11, 0.14))),
        back_logo=str(rng.choice(["UNO", "UNO", "uno"])),
    )


INDEX_BARS = ("short", "tall", "bare")
"""How a printing draws the corner index of 6 and 9 (``UnoStyle.index_bar``): "short", the plain
look, fits the numeral and its bar into one index's height; "tall" draws the numeral as high as
any other index with the bar below it; "bare" draws no bar. Printed decks differ in both."""
BAR_GAP_MAX = 0.3  # the widest gap under 6 and 9, of the numeral's height (wide printings)


def widen_uno_style(style: UnoStyle, rng: np.random.Generator, recent: bool = False,
                    typefaces: tuple[str, ...] = ()) -> UnoStyle:
    """``style`` with the print details that real decks vary and that the renders used to fix.

    WHY: on real photos the classifier confused 3 with 8, 6 with 0, 9 with 6, +2 with reverse and
    +4 with wild. Real numerals are a heavy, condensed italic with a thick black outline that
    nearly closes the counters of 3 and 6; the bar under 6 and 9 sits close under the numeral and
    varies in thickness between printings; the small cards of +2 and +4 are turned, stacked
    and edged differently from printing to printing. ``recent`` (the later trainings' recipe,
    :func:`vision.train.classifier.train_classifier`) adds two details of recent printings: the
    reverse symbol is also drawn, half the time, as two arrows curled into an S
    (``_curled_arrows``), and half the printings draw the numeral 1 without a foot
    (:func:`_footless`; every training font draws one, and the UNO photos read 1 as 7 more than
    any other digit confusion); without it nothing more is drawn from ``rng``. ``typefaces``
    (font files of :data:`FONTS`) then draws half the printings' numerals and indices in one of
    them, without extra weight (they are black cuts already). Only training
    crops draw these (after the base style, from the same generator), so that scenes and tuning
    photos keep their pictures.
    The bar's gap reaches ``BAR_GAP_MAX`` of the numeral's height: the plain style's bar lies
    about 25% under it, and a model trained on gaps up to 20% lost 6 ↔ 9 on plain renders.
    """
    heavy = rng.random() < 0.7
    wide = replace(
        style,
        weight=float(rng.uniform(0.0, 0.07)) if heavy else 0.0,
        outline=float(rng.uniform(0.0, 0.09)),
        stretch=float(rng.uniform(0.72, 1.2)),
        skew=float(rng.uniform(-0.05, 0.3)),
        underline=(float(rng.uniform(0.05, 0.13)), float(rng.uniform(0.03, BAR_GAP_MAX)),
                   float(rng.uniform(0.5, 0.95))),
        cards_tilt=float(rng.uniform(-30, 20)) if rng.random() < 0.6 else 0.0,
        cards_layout=int(rng.integers(3)),
        cards_edge=str(rng.choice(["dark", "white", "shadow"], p=[0.45, 0.3, 0.25])),
        curled_reverse=recent,
    )
    if recent and rng.random() < 0.5:
        wide = replace(wide, footless_one=True)
    if typefaces and rng.random() < 0.5:
        other = typefaces[int(rng.integers(len(typefaces)))]
        wide = replace(wide, font=FONTS.index(other), weight=0.0)
    return wide


CLASSIC_UNO = UnoStyle(
    paper=(250, 250, 248),
    field={c: _RGB_PRINT[c] for c in UNO_COLOURS},
    border=0.06, radius=0.07, ellipse="filled", ellipse_angle=33.0, ellipse_axes=(0.33, 0.48),
    font=0, skew=0.12, stretch=1.0, symbol_scale=0.42, outline=0.02, shadow=(0.012, 0.018),
    hard_shadow=False,
    index_scale=0.13, index_pos=(0.17, 0.12), back_logo="UNO",
)


@lru_cache(maxsize=64)
def _font(index: int, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(ASSETS / "fonts" / FONTS[index]), px)


PRINTINGS = ("plain", "thin")


def printing(spec: str) -> UnoStyle:
    """One fixed UNO printing named ``KIND:SEED``: ``plain:7`` is the style
    :func:`draw_uno_style` draws from seed 7 (one of the renders' family), ``thin:7`` the same
    printing with thin numerals in a font no training render uses (``UNSEEN_FONTS``);
    ``classic`` is :data:`CLASSIC_UNO`, the look of :func:`canonical_face` (the demo's deck).

    WHY: a whole table printed in one deck's look is what deck enrolment adapts to; a printing
    the classifier never saw is where it has something to adapt (models/HISTORY.md, "Deck
    enrolment")."""
    if spec == "classic":
        return CLASSIC_UNO
    kind, _, seed = spec.partition(":")
    if kind not in PRINTINGS or not seed.isdigit():
        raise FaceError(f"printing {spec!r}: give KIND:SEED with KIND one of "
                        f"{', '.join(PRINTINGS)}, e.g. thin:7, or classic")
    rng = np.random.default_rng(int(seed))
    return unseen_style(rng) if kind == "thin" else draw_uno_style(rng)


def current_wild_style(rng: np.random.Generator) -> UnoStyle:
    """A printing drawn as :func:`draw_uno_style` draws one, its wild cards as current
    printings draw them (``UnoStyle.current_wild``): the card's own oval in four colours, the
    +4's small cards on it more often than on white, the corner oval tall and tilted. Every
    coloured face is the picture the plain printing draws, from the same generator."""
    return replace(draw_uno_style(rng), current_wild=True)


def unseen_style(rng: np.random.Generator) -> UnoStyle:
    """A printing drawn as :func:`draw_uno_style` draws one, its numerals in a font no training
    render uses (``UNSEEN_FONTS``): ``thin:SEED`` of :func:`printing` is this at that seed."""
    return replace(draw_uno_style(rng), font=FONTS.index(UNSEEN_FONTS[0]))


# ----------------------------------------------------------------------------- layers
# A layer is an RGBA uint8 array; composited onto float RGB canvases.


def _text_layer(text: str, font: int, rgb: tuple[int, int, int], px: int = 200) -> np.ndarray:
    f = _font(font, px)
    left, top, right, bottom = f.getbbox(text)
    pad = px // 10
    img = Image.new("RGBA", (right - left + 2 * pad, bottom - top + 2 * pad), (0, 0, 0, 0))
    ImageDraw.Draw(img).text((pad - left, pad - top), text, font=f, fill=(*rgb, 255))
    return np.asarray(img).copy()


def _blank(n: int = 400) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGBA", (n, n), (0, 0, 0, 0))
    return img, ImageDraw.Draw(img)


def _skip_layer(rgb: tuple[int, int, int], n: int = 400) -> np.ndarray:
    img, d = _blank(n)
    w = n // 7
    d.ellipse((w // 2, w // 2, n - w // 2, n - w // 2), outline=(*rgb, 255), width=w)
    c, r = n / 2, n / 2 - w
    off = r * 0.72
    d.line((c - off, c + off, c + off, c - off), fill=(*rgb, 255), width=w)
    return np.asarray(img).copy()


def _arrow_polygon(n: int) -> list[tuple[float, float]]:
    """One bent arrow of the reverse symbol, pointing up-right, in an n×n box."""
    s = n / 100
    pts = [(20, 95), (20, 55), (55, 55), (55, 40), (85, 62), (55, 84), (55, 70), (36, 70), (36, 95)]
    return [(x * s, (y - 35) * s) for x, y in pts]


def _straight_arrows(rgb: tuple[int, int, int], n: int) -> np.ndarray:
    """Two thick parallel arrows pointing opposite ways (most printings' reverse symbol)."""
    img, d = _blank(n)
    s = n / 100
    for y0, sign in ((36, 1), (64, -1)):
        shaft = [(14, y0 - 10), (66, y0 - 10), (66, y0 + 10), (14, y0 + 10)]
        head = [(62, y0 - 22), (98, y0), (62, y0 + 22)]
        for poly in (shaft, head):
            pts = [((50 + sign * (x - 50)) * s, y * s) for x, y in poly]
            d.polygon(pts, fill=(*rgb, 255))
    return np.asarray(img).copy()


def _s_arrows(rgb: tuple[int, int, int], n: int, rng: np.random.Generator | None) -> np.ndarray:
    """The printed reverse symbol: two arrows on one diagonal, pointing away from each other,
    their shafts side by side where they meet in the middle (an S-like zigzag)."""
    img, d = _blank(n)
    s = n / 100
    t = 7.0 if rng is None else float(rng.uniform(5.5, 8.5))  # half the shaft's width
    off = t if rng is None else t * float(rng.uniform(0.75, 1.2))  # sideways offset of a shaft
    head = 2.3 if rng is None else float(rng.uniform(1.9, 2.7))  # head half-width / t
    tip, neck = 4.0, 26.0  # along the arrow, from the top of the box
    tail = 72.0 if rng is None else float(rng.uniform(64, 78))  # past the middle: they overlap
    cut = 0.0 if rng is None else float(rng.uniform(-6, 6))  # slanted end of the shaft
    arrow = [(off - head * t, neck), (off, tip), (off + head * t, neck), (off + t, neck),
             (off + t, tail + cut), (off - t, tail - cut), (off - t, neck)]
    for sign in (1, -1):  # the second arrow is the first turned half a turn
        pts = [((50 + sign * x) * s, (50 + sign * (y - 50)) * s) for x, y in arrow]
        d.polygon(pts, fill=(*rgb, 255))
    return np.asarray(img).copy()


def _curled_arrows(rgb: tuple[int, int, int], n: int, rng: np.random.Generator) -> np.ndarray:
    """The reverse symbol of current printings, lying along the box's width (turned onto the
    diagonal by the caller): two arrows whose shafts run past the middle and curl into each
    other, an S with a head at each end, cut across its middle stroke.

    WHY: real reverse cards are read as 2 or 4. Their curled S is round where the other drawings'
    arrows are straight, and a round S is closer to a 2 (twenty-fourth session)."""
    s = n / 100
    t = float(rng.uniform(6.0, 8.5))  # half the shaft's width
    h = t * float(rng.uniform(1.2, 1.7))  # half the distance between the two shafts
    a = t * float(rng.uniform(0.6, 1.6))  # how far past the middle each shaft runs
    head = float(rng.uniform(1.9, 2.5))  # head half-width / t
    gap = float(rng.uniform(1.0, 2.5))  # half the cut's width
    tip, neck = 97.0, 97.0 - 1.6 * head * t

    def box(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x * s, y * s) for x, y in pts]

    img = Image.new("L", (n, n), 0)
    d = ImageDraw.Draw(img)
    stroke = [(neck + 1, 50 - h), (50 - a, 50 - h), (50 + a, 50 + h), (99 - neck, 50 + h)]
    d.line(box(stroke), fill=255, width=round(2 * t * s), joint="curve")
    for sign in (1, -1):  # the second head is the first turned half a turn
        hd = [(neck, 50 - h - head * t), (tip, 50 - h), (neck, 50 - h + head * t)]
        d.polygon(box([(50 + sign * (x - 50), 50 + sign * (y - 50)) for x, y in hd]), fill=255)
    along = np.array([2 * a, 2 * h]) / np.hypot(2 * a, 2 * h)
    cx, cy = np.array([-along[1], along[0]]) * 1.6 * t  # across the middle stroke
    d.line(box([(50 + cx, 50 + cy), (50 - cx, 50 - cy)]), fill=0, width=max(1, int(2 * gap * s)))
    out = np.zeros((n, n, 4), np.uint8)
    out[np.asarray(img) > 127] = (*rgb, 255)
    return out


def _reverse_layer(rgb: tuple[int, int, int], n: int = 400,
                   rng: np.random.Generator | None = None, curled: bool = False) -> np.ndarray:
    """The reverse symbol on the card's diagonal: the straight S-arrows for the canonical face,
    else one of three drawings (straight S, parallel arrows, bent arrows). ``curled`` (a wide
    printing's) draws the curled S instead of the straight S half the time; the other draws
    stay the pictures they were."""
    u = 0.0 if rng is None else rng.random()
    if curled and rng is not None and u < 0.5:
        both = _curled_arrows(rgb, n, rng)
        angle, scale = float(rng.uniform(38, 52)), 0.9
    elif u < 0.75:
        both = _s_arrows(rgb, n, rng)
        angle = -45.0 if rng is None else float(rng.uniform(-50, -35))
        scale = 0.95
    elif u < 0.9:
        both = _straight_arrows(rgb, n)
        angle = float(rng.uniform(35, 55))  # type: ignore[union-attr]
        scale = 0.8
    else:
        img, d = _blank(n)
        d.polygon(_arrow_polygon(n), fill=(*rgb, 255))
        half = np.asarray(img).copy()
        both = np.maximum(half, np.rot90(half, 2))
        angle, scale = 40.0, 0.8
    # tilt the pair so the arrows run along the card's diagonal as printed
    m = cv2.getRotationMatrix2D((n / 2, n / 2), angle, scale)
    return cv2.warpAffine(both, m, (n, n), flags=cv2.INTER_LINEAR)


# Where the small cards of +2 (two) and +4 (four) lie in the symbol's n×n box, as fractions of n:
# (card width, card height, top-left corners). The plain look is the renders' first design, kept
# so that scenes and tuning photos stay the same pictures; the wide look (``widen_uno_style``)
# draws slightly smaller cards and the +4 as a diamond, a staircase down the diagonal or a row.
_PLAIN_CARDS = {
    2: (0.4, 0.6, ((0.47, 0.03), (0.13, 0.37))),
    4: (0.34, 0.46, ((0.1, 0.28), (0.32, 0.06), (0.33, 0.5), (0.56, 0.3))),
}
_WIDE_TWO = (0.38, 0.56, ((0.47, 0.06), (0.15, 0.38)))
_WIDE_FOURS = (
    (0.3, 0.42, ((0.12, 0.3), (0.34, 0.08), (0.35, 0.5), (0.58, 0.3))),
    (0.3, 0.42, ((0.1, 0.06), (0.24, 0.18), (0.38, 0.3), (0.52, 0.42))),
    (0.3, 0.42, ((0.06, 0.32), (0.26, 0.24), (0.44, 0.24), (0.64, 0.32))),
)


def _cards_layer(fills: list[tuple[int, int, int]], style: UnoStyle, edge: str,
                 n: int = 400) -> np.ndarray:
    """Small overlapping cards (the +2 and +4 symbols), one per fill, each edged ``edge``:
    "dark" (a dark rim), "shadow" (plain, with a dark offset shadow, as newer printings draw
    them) or "white" (a little card with a paper margin). A style without wide print details
    (``cards_edge`` "") draws the plain layout; a wide one its layout, turned by
    ``style.cards_tilt``."""
    img, d = _blank(n)
    k = len(fills)
    wide = bool(style.cards_edge)
    if wide:
        cw, ch, origins = _WIDE_TWO if k <= 2 else _WIDE_FOURS[style.cards_layout % 3]
        rim, inner_r, offset = n * 0.035, n // 25 // 2, n * 0.035
    else:
        cw, ch, origins = _PLAIN_CARDS[2 if k <= 2 else 4]
        rim, inner_r, offset = 14, n // 40, n * 0.04
    cw, ch = n * cw, n * ch
    r = n // 25
    dark, paper = (20, 20, 20, 255), (*style.paper, 255)
    for (fx, fy), rgb in zip(origins, fills, strict=False):
        x, y = n * fx, n * fy
        box = (x, y, x + cw, y + ch)
        if edge == "shadow":
            d.rounded_rectangle((x - offset, y + offset, x + cw - offset, y + ch + offset),
                                radius=r, fill=dark)
            d.rounded_rectangle(box, radius=r, fill=(*rgb, 255))
        elif edge == "white":
            d.rounded_rectangle(box, radius=r, fill=dark)
            d.rounded_rectangle((x + rim / 2, y + rim / 2, x + cw - rim / 2, y + ch - rim / 2),
                                radius=r, fill=paper)
            d.rounded_rectangle((x + 1.5 * rim, y + 1.5 * rim, x + cw - 1.5 * rim,
                                 y + ch - 1.5 * rim), radius=inner_r, fill=(*rgb, 255))
        else:
            d.rounded_rectangle(box, radius=r, fill=dark)
            d.rounded_rectangle((x + rim, y + rim, x + cw - rim, y + ch - rim),
                                radius=inner_r, fill=(*rgb, 255))
    layer = np.asarray(img).copy()
    if wide and style.cards_tilt:
        m = cv2.getRotationMatrix2D((n / 2, n / 2), style.cards_tilt, 0.9)
        layer = cv2.warpAffine(layer, m, (n, n), flags=cv2.INTER_LINEAR)
    return layer


def _heavier(layer: np.ndarray, px: int, rgb: tuple[int, int, int]) -> np.ndarray:
    """A one-colour glyph ``px`` pixels bolder all round: the heavy weight of printed numerals,
    whose counters (the openings of 3, 6, 9) are narrow."""
    if px <= 0:
        return layer
    layer = np.pad(layer, ((px, px), (px, px), (0, 0)))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * px + 1, 2 * px + 1))
    layer[..., 3] = cv2.dilate(layer[..., 3], kernel)
    layer[..., :3] = rgb
    return layer


def _underlined(layer: np.ndarray, bar: tuple[float, float, float],
                rgb: tuple[int, int, int]) -> np.ndarray:
    """The glyph with the bar that tells 6 from 9: ``bar`` = (thickness, gap under the glyph,
    width), the first two of the glyph's height, the last of its width."""
    ink = np.nonzero(layer[..., 3] > 127)
    top, bottom = int(ink[0].min()), int(ink[0].max())
    left, right = int(ink[1].min()), int(ink[1].max())
    gh, gw = bottom - top, right - left
    t, gap = max(4, int(bar[0] * gh)), int(bar[1] * gh)
    half = int(bar[2] * gw / 2)
    y0 = bottom + gap
    h = layer.shape[0]
    layer = np.pad(layer, ((0, max(0, y0 + t + h // 10 - h)), (0, 0), (0, 0)))
    cx = (left + right) // 2
    layer[y0:y0 + t, max(0, cx - half):cx + half] = (*rgb, 255)
    return layer


def _four_colours(rng: np.random.Generator | None) -> list[str]:
    """The wild oval's colours in turn round it: printed decks keep one order (red, blue,
    green, yellow going round), starting anywhere and running either way."""
    order = ["R", "B", "G", "Y"]
    if rng is None:
        return order
    k = int(rng.integers(4))
    order = order[k:] + order[:k]
    return order[::-1] if rng.random() < 0.5 else order


def _four_colour_ellipse(canvas: np.ndarray, style: UnoStyle, centre: tuple[float, float],
                         axes: tuple[float, float], angle: float,
                         rng: np.random.Generator | None) -> None:
    """The four-colour oval of current printings, drawn on ``canvas`` (float RGB, or RGBA with
    an alpha of 255): four sectors of one ellipse, split along its axes or turned from them,
    half the time inside a white rim."""
    fill = 255 if canvas.shape[2] == 4 else None
    split = 0.0 if rng is None else float(rng.choice([0.0, -angle, rng.uniform(0, 90)]))
    c = (int(round(centre[0])), int(round(centre[1])))
    ax = (max(1, int(round(axes[0]))), max(1, int(round(axes[1]))))
    if rng is not None and rng.random() < 0.5:
        rim = max(1, int(round(min(ax) * rng.uniform(0.04, 0.1))))
        paper = (*style.paper, fill) if fill else style.paper
        cv2.ellipse(canvas, c, (ax[0] + rim, ax[1] + rim), angle, 0, 360, paper, -1,
                    cv2.LINE_AA)
    for i, colour in enumerate(_four_colours(rng)):
        rgb = (*style.field[colour], fill) if fill else style.field[colour]
        cv2.ellipse(canvas, c, ax, angle, split + 90 * i, split + 90 * (i + 1), rgb, -1,
                    cv2.LINE_AA)


def _wild_index_layer(style: UnoStyle, rng: np.random.Generator | None, n: int = 400
                      ) -> np.ndarray:
    """The wild card's corner index as current printings draw it: a small four-colour oval,
    tall and tilted like the card's own oval (not the level, wide one of the first renders)."""
    layer = np.zeros((n, n, 4), np.uint8)
    tall = 0.0 if rng is None else float(rng.uniform(0.0, 0.15))
    angle = style.ellipse_angle if rng is None else float(rng.uniform(15, 45))
    _four_colour_ellipse(layer, style, (n / 2, n / 2), (n * (0.28 + tall / 2), n * 0.45),
                         angle, rng)
    return layer


def _wild_oval_layer(style: UnoStyle, n: int, rot: int) -> np.ndarray:
    img, d = _blank(n)
    order = ["R", "B", "Y", "G"]
    order = order[rot:] + order[:rot]
    box = (n * 0.05, n * 0.2, n * 0.95, n * 0.8)
    for i, c in enumerate(order):
        d.pieslice(box, 90 * i, 90 * (i + 1), fill=(*style.field[c], 255))
    return np.asarray(img).copy()


def _outlined(layer: np.ndarray, px: int, rgb: tuple[int, int, int] = (15, 15, 15)) -> np.ndarray:
    """The layer with a solid outline of ``px`` pixels around its shape (printed glyph edges)."""
    if px <= 0:
        return layer
    pad = px + 2
    layer = np.pad(layer, ((pad, pad), (pad, pad), (0, 0)))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * px + 1, 2 * px + 1))
    ring = cv2.dilate(layer[..., 3], kernel)
    base = np.zeros_like(layer)
    base[..., :3] = rgb
    base[..., 3] = ring
    return _over(layer, base)


def _over(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    a = top[..., 3:4].astype(np.float32) / 255
    b = bottom[..., 3:4].astype(np.float32) / 255
    out_a = a + b * (1 - a)
    rgb = (top[..., :3] * a + bottom[..., :3] * b * (1 - a)) / np.maximum(out_a, 1e-6)
    return np.dstack([rgb, out_a * 255]).astype(np.uint8)


def _place(canvas: np.ndarray, layer: np.ndarray, centre: tuple[float, float], height: float,
           angle: float = 0.0, skew: float = 0.0, stretch: float = 1.0,
           shadow: tuple[float, float] | None = None, hard: bool = False) -> None:
    """Composite ``layer`` onto the float RGB ``canvas``: scaled to ``height`` px, sheared by
    ``skew`` (italics), rotated by ``angle`` degrees, centred at ``centre``, with a soft shadow."""
    lh, lw = layer.shape[:2]
    s = height / lh
    a = np.radians(angle)
    rot = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    lin = rot @ np.array([[s * stretch, -skew * s], [0, s]])
    m = np.zeros((2, 3))
    m[:, :2] = lin
    m[:, 2] = np.array(centre) - lin @ np.array([lw / 2, lh / 2])
    h, w = canvas.shape[:2]
    warped = cv2.warpAffine(layer, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3:4].astype(np.float32) / 255
    if shadow is not None:
        dx, dy = shadow
        sh = np.roll(alpha, (int(round(dy)), int(round(dx))), axis=(0, 1))
        if hard:  # a printed offset shadow: a solid dark copy
            sh = sh * 0.9
        else:
            k = max(3, int(abs(dy) + abs(dx)) | 1)
            sh = cv2.GaussianBlur(sh, (k, k), 0)[..., None] * 0.75
        canvas *= 1 - sh
    canvas *= 1 - alpha
    canvas += warped[..., :3].astype(np.float32) * alpha


# ----------------------------------------------------------------------------- UNO


def _footless(layer: np.ndarray) -> np.ndarray:
    """A 1 (an RGBA glyph layer) without its foot, as recent UNO printings draw it: below 60% of
    its height only the stem's columns (those inked half-way up) keep their ink, and the layer
    is cut to the ink left, with the glyph layer's padding. WHY: every training font draws the
    foot, and without one a 1 with its flag is a 7's shape; a glyph cut from the same fonts keeps
    their weight and stroke."""
    ink = layer[..., 3] > 127
    rows = np.flatnonzero(ink.any(axis=1))
    if rows.size == 0:
        return layer
    stem = np.flatnonzero(ink[(rows[0] + rows[-1]) // 2])
    out = layer.copy()
    low = rows[0] + int(0.6 * (rows[-1] - rows[0]))
    out[low:, :stem[0]] = 0
    out[low:, stem[-1] + 1:] = 0
    pad = int(np.flatnonzero(ink.any(axis=0))[0])  # the glyph layer's margin
    cols = np.flatnonzero((out[..., 3] > 127).any(axis=0))
    return out[:, max(int(cols[0]) - pad, 0): int(cols[-1]) + 1 + pad]


def _uno_symbol_layer(symbol: str, colour: str | None, style: UnoStyle, rgb: tuple[int, int, int],
                      small: bool, rng: np.random.Generator | None, bar: bool = True
                      ) -> np.ndarray:
    if symbol.isdigit():
        layer = _text_layer(symbol, style.font, rgb)
        if symbol == "1" and style.footless_one:
            layer = _footless(layer)
        if style.weight > 0:
            layer = _heavier(layer, int(style.weight * layer.shape[0]), rgb)
        if symbol in "69" and bar:
            if style.underline is not None:
                return _underlined(layer, style.underline, rgb)
            h, w = layer.shape[:2]
            bar = max(4, h // 11)
            layer = np.pad(layer, ((0, bar * 3), (0, 0), (0, 0)))
            layer[h + bar: h + 2 * bar, w // 5: w - w // 5] = (*rgb, 255)
        return layer
    if symbol == "S":
        return _skip_layer(rgb)
    if symbol == "R":
        return _reverse_layer(rgb, rng=rng, curled=style.curled_reverse)
    if symbol == "+2":
        if small:
            return _text_layer("+2", style.font, rgb)
        edge = style.cards_edge or ("shadow" if style.hard_shadow else "dark")
        return _cards_layer([rgb, rgb], style, edge)
    if symbol == "+4":
        if small:
            return _text_layer("+4", style.font, rgb)
        order = ["B", "G", "Y", "R"] if rng is None else list(rng.permutation(list("BGYR")))
        return _cards_layer([style.field[c] for c in order], style, style.cards_edge or "dark")
    if symbol == "W":
        rot = 0 if rng is None else int(rng.integers(4))
        if small and rng is not None and rng.random() < 0.35:
            return _text_layer("W", style.font, rgb)
        if small and style.current_wild:
            return _wild_index_layer(style, rng)
        return _wild_oval_layer(style, 400, rot)
    raise FaceError(f"no UNO symbol {symbol!r}")


def _card_base(w: int, h: int, style: UnoStyle, field: tuple[int, int, int]) -> np.ndarray:
    canvas = np.empty((h, w, 3), np.float32)
    canvas[:] = style.paper
    b = int(style.border * w)
    r = int(style.radius * w)
    inner = np.zeros((h, w), np.uint8)
    _rounded_rect(inner, (b, b, w - b, h - b), max(2, r - b // 2))
    canvas[inner > 0] = field
    return canvas


def _rounded_rect(mask: np.ndarray, box: tuple[int, int, int, int], r: int) -> None:
    x1, y1, x2, y2 = box
    cv2.rectangle(mask, (x1 + r, y1), (x2 - r, y2), 255, -1)
    cv2.rectangle(mask, (x1, y1 + r), (x2, y2 - r), 255, -1)
    for cx, cy in ((x1 + r, y1 + r), (x2 - r, y1 + r), (x1 + r, y2 - r), (x2 - r, y2 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)


def _draw_ellipse(canvas: np.ndarray, style: UnoStyle, fill: tuple[int, int, int],
                  kind: str, rng: np.random.Generator | None) -> None:
    h, w = canvas.shape[:2]
    centre = (w // 2, h // 2)
    axes = (int(style.ellipse_axes[0] * w), int(style.ellipse_axes[1] * h))
    angle = style.ellipse_angle
    if kind == "ring":
        cv2.ellipse(canvas, centre, axes, angle, 0, 360, fill, max(2, w // 45), cv2.LINE_AA)
        return
    cv2.ellipse(canvas, centre, axes, angle, 0, 360, fill, -1, cv2.LINE_AA)
    if kind == "rays":
        mask = np.zeros((h, w), np.uint8)
        cv2.ellipse(mask, centre, axes, angle, 0, 360, 255, -1)
        rays = np.zeros((h, w), np.float32)
        n = 48 if rng is None else int(rng.integers(36, 72))
        rr = max(axes) * 1.2
        for t in np.linspace(0, 2 * np.pi, n, endpoint=False):
            p = (int(centre[0] + rr * np.cos(t)), int(centre[1] + rr * np.sin(t)))
            cv2.line(rays, centre, p, 1.0, max(1, w // 160), cv2.LINE_AA)
        rays *= (mask > 0) * 0.22
        canvas *= 1 - rays[..., None]


def render_uno(code: str, style: UnoStyle, size: tuple[int, int] = DEFAULT_SIZE,
               rng: np.random.Generator | None = None) -> np.ndarray:
    """One UNO face (or ``BACK``) in ``style``; returns BGR uint8 of ``size`` = (W, H)."""
    W, H = size
    w, h = W * SUPERSAMPLE, H * SUPERSAMPLE
    dark = (18, 18, 18)
    if code == BACK:
        canvas = _card_base(w, h, style, dark)
        red = style.field["R"]
        _draw_ellipse(canvas, style, red, "filled", None)
        logo = _outlined(_text_layer(style.back_logo, style.font, style.field["Y"]), 12, dark)
        _place(canvas, logo, (w / 2, h / 2), h * 0.2, angle=style.ellipse_angle - 10,
               skew=style.skew, shadow=(0.01 * w, 0.015 * h))
        return _finish(canvas, size)
    if code in UNO_BLACK:
        symbol, colour = code, None
        field = dark
    else:
        symbol, colour = code[:-1], code[-1]
        field = style.field[colour]
    canvas = _card_base(w, h, style, field)
    kind = style.ellipse
    if colour is None:
        kind = "filled" if symbol == "+4" and kind != "ring" else "ring"
    four = colour is None and style.current_wild and (
        symbol == "W" or rng is None or rng.random() < 0.6)
    if four:  # current printings: the card's own oval in four colours, under a +4's cards
        axes = (style.ellipse_axes[0] * w, style.ellipse_axes[1] * h)
        _four_colour_ellipse(canvas, style, (w / 2, h / 2), axes, style.ellipse_angle, rng)
    else:
        _draw_ellipse(canvas, style, style.paper, kind, rng)
    # big central symbol: coloured with a dark outline on a white ellipse, white on a ring
    big_rgb = style.paper if kind == "ring" or colour is None else field
    layer = _uno_symbol_layer(symbol, colour, style, big_rgb, False, rng)
    if symbol.isdigit() or symbol in ("S", "R"):
        layer = _outlined(layer, int(layer.shape[0] * style.outline) + 3, (15, 15, 15))
    shadow = (style.shadow[0] * w, style.shadow[1] * h)
    height = h * style.symbol_scale
    angle = 0.0
    if symbol == "+4":
        height *= 0.85
    if symbol == "S":  # the printed skip circle is about as wide as the oval is across
        height *= 1.25
    if symbol == "+2":
        height *= 1.0 if style.ellipse_axes[0] < 0.4 else 1.1
    if symbol == "R":  # the printed arrows run across most of the oval
        height *= 1.4
    if symbol == "W":  # the four-colour oval, upright or tilted like the white oval
        height = h * 0.5
        shadow = None
        angle = style.ellipse_angle if rng is not None and rng.random() < 0.5 else 0.0
    if not (four and symbol == "W"):  # the four-colour oval is the wild card's symbol
        _place(canvas, layer, (w / 2, h / 2), height, angle=angle,
               skew=style.skew if symbol.isdigit() else 0.0,
               stretch=style.stretch if symbol.isdigit() else 1.0, shadow=shadow,
               hard=style.hard_shadow)
    # corner indices: white (dark-outlined), top-left and rotated bottom-right
    if style.index_bar not in INDEX_BARS:
        raise FaceError(f"index_bar {style.index_bar!r}: give one of {', '.join(INDEX_BARS)}")
    small = _uno_symbol_layer(symbol, colour, style, style.paper, True, rng,
                              bar=style.index_bar != "bare")
    ih = h * style.index_scale
    drop = 0.0  # how far the index's centre lies below its numeral's (the bar of 6 or 9)
    if symbol in ("6", "9") and style.index_bar == "tall":  # numeral as tall as any, bar below
        glyph = _uno_symbol_layer(symbol, colour, style, style.paper, True, rng, bar=False)
        grow = small.shape[0] / glyph.shape[0]
        drop = ih * (grow - 1) / 2
        ih *= grow
    small = _outlined(small, max(2, small.shape[0] // 25), (15, 15, 15))
    if symbol in ("S", "R", "W"):
        ih *= 0.9
    if symbol == "R":
        ih *= style.reverse_index
    ix, iy = style.index_pos[0] * w, style.index_pos[1] * h
    _place(canvas, small, (ix, iy + drop), ih, skew=style.skew * 0.5)
    _place(canvas, small, (w - ix, h - iy - drop), ih, angle=180, skew=style.skew * 0.5)
    return _finish(canvas, size)


def _finish(canvas: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    rgb = np.clip(canvas, 0, 255).astype(np.uint8)
    rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)


# ----------------------------------------------------------------------------- standard

_SUIT_GLYPH = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
_PIPS: dict[str, list[tuple[float, float]]] = {
    "A": [(0.5, 0.5)],
    "2": [(0.5, 0), (0.5, 1)],
    "3": [(0.5, 0), (0.5, 0.5), (0.5, 1)],
    "4": [(0, 0), (1, 0), (0, 1), (1, 1)],
    "5": [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    "6": [(x, y) for y in (0, 0.5, 1) for x in (0, 1)],
    "7": [(x, y) for y in (0, 0.5, 1) for x in (0, 1)] + [(0.5, 0.25)],
    "8": [(x, y) for y in (0, 0.5, 1) for x in (0, 1)] + [(0.5, 0.25), (0.5, 0.75)],
    "9": [(x, y) for y in (0, 1 / 3, 2 / 3, 1) for x in (0, 1)] + [(0.5, 0.5)],
    "10": [(x, y) for y in (0, 1 / 3, 2 / 3, 1) for x in (0, 1)] + [(0.5, 1 / 6), (0.5, 5 / 6)],
}


@lru_cache(maxsize=64)
def _scan(code: str) -> np.ndarray:
    path = ASSETS / "standard" / f"{code}.png"
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise OSError(f"standard face asset missing or unreadable: {path}")
    # outside the rounded corners the scans are black: fill with the paper white instead
    mask = card_mask((img.shape[1], img.shape[0]), 0.06)
    img[mask == 0] = 255
    return img


def _standard_drawn(code: str, size: tuple[int, int], rng: np.random.Generator,
                    dark: bool) -> np.ndarray:
    """A generic printed standard face: corner indices and pips, or a framed court letter."""
    W, H = size
    w, h = W * SUPERSAMPLE, H * SUPERSAMPLE
    paper = (25, 25, 30) if dark else tuple(int(255 - v) for v in rng.uniform(0, 15, 3))
    canvas = np.empty((h, w, 3), np.float32)
    canvas[:] = paper
    rank, suit = code[:-1], code[-1]
    if dark:
        ink = (220, 180, 60) if suit in "SC" else (220, 50, 50)
    else:
        ink = (20, 20, 20) if suit in "SC" else (200, 20, 30)
    font = int(rng.integers(len(FONT_FILES)))
    rank_layer = _text_layer(rank, font, ink)
    suit_layer = _text_layer(_SUIT_GLYPH[suit], 0, ink)
    ix, iy = rng.uniform(0.08, 0.13) * w, rng.uniform(0.07, 0.1) * h
    ih = rng.uniform(0.08, 0.12) * h
    for angle, (cx, cy) in ((0, (ix, iy)), (180, (w - ix, h - iy))):
        sgn = 1 if angle == 0 else -1
        _place(canvas, rank_layer, (cx, cy), ih, angle=angle)
        _place(canvas, suit_layer, (cx, cy + sgn * ih * 0.95), ih * 0.75, angle=angle)
    if rank in _PIPS:
        pip_h = h * (0.3 if rank == "A" else rng.uniform(0.1, 0.13))
        x0, x1, y0, y1 = 0.3 * w, 0.7 * w, 0.2 * h, 0.8 * h
        for px, py in _PIPS[rank]:
            angle = 180 if py > 0.5 else 0
            _place(canvas, suit_layer, (x0 + px * (x1 - x0), y0 + py * (y1 - y0)), pip_h, angle)
    else:
        cv2.rectangle(canvas, (int(0.2 * w), int(0.15 * h)), (int(0.8 * w), int(0.85 * h)), ink,
                      max(2, w // 100), cv2.LINE_AA)
        _place(canvas, rank_layer, (w / 2, h * 0.4), h * 0.28)
        _place(canvas, suit_layer, (w / 2, h * 0.66), h * 0.16)
    return _finish(canvas, size)


def _joker(size: tuple[int, int], rng: np.random.Generator | None) -> np.ndarray:
    W, H = size
    w, h = W * SUPERSAMPLE, H * SUPERSAMPLE
    canvas = np.full((h, w, 3), 250, np.float32)
    red = rng is None or rng.random() < 0.5
    ink = (200, 20, 30) if red else (20, 20, 20)
    font = 0 if rng is None else int(rng.integers(len(FONT_FILES)))
    for i, letter in enumerate("JOKER"):
        layer = _text_layer(letter, font, ink)
        for angle, (cx, cy) in ((0, (0.09 * w, (0.08 + 0.065 * i) * h)),
                                (180, (0.91 * w, (0.92 - 0.065 * i) * h))):
            _place(canvas, layer, (cx, cy), 0.055 * h, angle=angle)
    # a jester's hat: three drooping points with bells above a band, and a star
    hat = np.zeros((h, w), np.uint8)
    cx, cy = w / 2, h * 0.5
    pts = np.array([[cx - 0.28 * w, cy + 0.06 * h], [cx - 0.36 * w, cy - 0.2 * h],
                    [cx - 0.1 * w, cy - 0.05 * h], [cx, cy - 0.26 * h],
                    [cx + 0.1 * w, cy - 0.05 * h], [cx + 0.36 * w, cy - 0.2 * h],
                    [cx + 0.28 * w, cy + 0.06 * h]], np.int32)
    cv2.fillPoly(hat, [pts], 255, cv2.LINE_AA)
    canvas[hat > 0] = ink
    for bx, by in pts[[1, 3, 5]]:
        cv2.circle(canvas, (int(bx), int(by)), int(0.035 * w), (230, 190, 40), -1, cv2.LINE_AA)
    cv2.rectangle(canvas, (int(cx - 0.3 * w), int(cy + 0.06 * h)),
                  (int(cx + 0.3 * w), int(cy + 0.12 * h)), (230, 190, 40), -1, cv2.LINE_AA)
    word = _text_layer("JOKER", font, ink)
    _place(canvas, word, (w / 2, h * 0.72), h * 0.09)
    return _finish(canvas, size)


def _standard_back(size: tuple[int, int], rng: np.random.Generator | None) -> np.ndarray:
    W, H = size
    w, h = W * SUPERSAMPLE, H * SUPERSAMPLE
    blue = rng is None or rng.random() < 0.5
    ink = (30, 60, 150) if blue else (170, 25, 35)
    if rng is not None:
        ink = tuple(int(np.clip(c + rng.normal(0, 15), 0, 255)) for c in ink)
    canvas = np.full((h, w, 3), 250, np.float32)
    b = int((0.06 if rng is None else rng.uniform(0.03, 0.09)) * w)
    canvas[b:h - b, b:w - b] = ink
    step = int((0.07 if rng is None else rng.uniform(0.04, 0.1)) * w)
    light = tuple(int(c + (255 - c) * 0.55) for c in ink)
    pattern = 0 if rng is None else int(rng.integers(3))
    lw = max(2, w // 120)
    for k in range(-h, w + h, step):
        if pattern in (0, 1):
            cv2.line(canvas, (k, b), (k + h, h + b), light, lw, cv2.LINE_AA)
            cv2.line(canvas, (k, b), (k - h, h + b), light, lw, cv2.LINE_AA)
        else:
            for y in range(b + step // 2, h - b, step):
                if b < k < w - b:
                    cv2.circle(canvas, (k, y), step // 4, light, -1, cv2.LINE_AA)
    canvas[:b] = 250
    canvas[h - b:] = 250
    canvas[:, :b] = 250
    canvas[:, w - b:] = 250
    if pattern == 1:
        cv2.ellipse(canvas, (w // 2, h // 2), (w // 5, h // 7), 0, 0, 360, (250, 250, 250), lw * 2,
                    cv2.LINE_AA)
    return _finish(canvas, size)


def render_standard(code: str, size: tuple[int, int] = DEFAULT_SIZE,
                    rng: np.random.Generator | None = None) -> np.ndarray:
    """A standard face: the MIT scan (always, when ``rng`` is None) or a drawn printing."""
    if code == JOKER:
        return _joker(size, rng)
    if code == BACK:
        return _standard_back(size, rng)
    if code[:-1] not in RANKS or code[-1] not in SUITS:
        raise FaceError(f"no standard face {code!r}")
    u = 0.0 if rng is None else rng.random()
    if u < 0.55:
        img = cv2.resize(_scan(code), size, interpolation=cv2.INTER_AREA)
        if rng is not None:
            tint = rng.uniform(0.9, 1.0, 3)
            img = np.clip(img * tint, 0, 255).astype(np.uint8)
        return img
    return _standard_drawn(code, size, rng, dark=u > 0.88)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- public


def _drawn_style(rng: np.random.Generator, wide: bool, recent: bool, typefaces: tuple[str, ...]
                 ) -> UnoStyle:
    style = draw_uno_style(rng)
    return widen_uno_style(style, rng, recent, typefaces) if wide else style


def render_face(code: str, rng: np.random.Generator, size: tuple[int, int] = DEFAULT_SIZE,
                style: UnoStyle | None = None, deck: str | None = None,
                wide: bool = False, recent: bool = False, typefaces: tuple[str, ...] = ()
                ) -> np.ndarray:
    """Render the whole face of ``code`` (a UNO or standard code, ``JK`` or ``BACK``).

    The printing is drawn from ``rng`` unless ``style`` is given; ``BACK`` is an UNO back or a
    patterned standard back (``deck`` = "uno"/"standard" picks, else ``rng`` does). Returns a
    portrait BGR uint8 image of ``size`` = (width, height). ``wide`` (training crops) also draws
    the print details of :func:`widen_uno_style` for a drawn UNO printing, ``recent`` with them
    recent printings' details and ``typefaces`` other typefaces.
    """
    if not isinstance(code, str):
        raise FaceError(f"card code must be a string, got {type(code).__name__}")
    code = code.strip().upper()
    w, h = size
    if w < 16 or h < 16:
        raise FaceError(f"face size {size} too small: give at least 16×16 pixels")
    if code == BACK:
        if deck is None:
            deck = "uno" if rng.random() < 0.5 else "standard"
        if deck == "standard":
            return render_standard(code, size, rng)
        return render_uno(code, style or _drawn_style(rng, wide, recent, typefaces), size, rng)
    if code in UNO_FACE_CODES:
        return render_uno(code, style or _drawn_style(rng, wide, recent, typefaces), size, rng)
    if code in STANDARD_FACE_CODES:
        return render_standard(code, size, rng)
    raise FaceError(f"no face for card code {code!r}: give a UNO or standard code, JK or BACK")


def canonical_face(
    code: str, size: tuple[int, int] = DEFAULT_SIZE, deck: str = "uno"
) -> np.ndarray:
    """The fixed classic look of ``code`` (scans for standard faces): for demos and tests."""
    code = code.strip().upper()
    if code in STANDARD_FACE_CODES or (code == BACK and deck == "standard"):
        return render_standard(code, size, None)
    if code in UNO_FACE_CODES or code == BACK:
        return render_uno(code, CLASSIC_UNO, size, None)
    raise FaceError(f"no face for card code {code!r}: give a UNO or standard code, JK or BACK")


def card_mask(size: tuple[int, int] = DEFAULT_SIZE, radius: float = 0.07) -> np.ndarray:
    """uint8 mask (255 inside) of a card of ``size`` = (W, H) with rounded corners."""
    w, h = size
    mask = np.zeros((h, w), np.uint8)
    _rounded_rect(mask, (0, 0, w - 1, h - 1), max(1, int(radius * w)))
    return mask
