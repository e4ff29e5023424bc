"""Card localisation: every card lying in a zone of the mat, as a quadrilateral in image pixels.

WHY classical and top-down: once the mat's homography is known, every card is a rectangle of a
known size in millimetres lying on felt of a known colour. Segmenting "not felt" in the rectified
view and fitting rectangles finds cards of any face (UNO, standard, backs) with no training, in a
few milliseconds, and the fit gives the exact quad that the classifier's crop needs. A learned
detector here would cost hours of CPU training per class set and give only axis-aligned boxes.

Blobs that are bigger than one card (cards touching, or a fanned column where each card shows
only its top strip) are split along their long axis where the image has card edges: every card's
top edge draws a line (its edge and shadow) across the card below. Touching cards are cut along
the dark lines between them; what the cuts leave unexplained is searched for whole cards by
their outlines (:func:`place_cards`), and every piece is then fitted to its own card's outline
(:func:`fit_outline`), since a crop a few millimetres off is read as the wrong card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from vision.geometry import MatSpec, TableGeometry
from vision.synth.scenes import canonical_quad

TOPDOWN_PX_PER_MM = 2.0
CARD_W_MM = (44.0, 72.0)
CARD_H_MM = (74.0, 100.0)
MIN_PITCH_MM = 11.0
"""Closest spacing of fanned columns that still shows a corner index (a prior for banding)."""
MIN_ROW_PITCH_MM = 16.0
"""Closest spacing of fanned rows (the side area's); a blob less tall holds a single row."""
SINGLE_ON_CARD = 0.6
PIECE_ON_CARD = 0.85
"""Least share of a found card's visible part that must be card, not felt, in the mask: a card
blob on its own (its shape already says card), and a piece cut out of a larger blob (a grid cut
through a hand would otherwise pass)."""
DETAIL_SHARE = 0.35
"""Least print (see :func:`_detail`) of a doubtful card, as a share of the frame's median."""
OUTLINE_MIN = 12.0
"""Least outline strength (:func:`outline_strength`) that makes a doubtful card with little
print a card still: a face washed out by glare keeps its sharp outline (cards measure 25 and
more, most about 100), a glare patch on the felt has none (about 5)."""
PLACE_LEFT = 0.6
"""Least unexplained share of a card's area in a blob for :func:`place_cards` to look for one."""
PLACE_SCALE = 0.5
"""Scale of :func:`place_cards`' search relative to the top-down view (1 px per mm)."""
PLACE_MIN_EDGE = 40.0
"""Least outline strength (two pairs of sides, Sobel units) of a placed card: a sharp step of
a few grey levels all round; the soft shading of a hand or a sleeve stays below it."""
PLACE_WEAKEST = 0.3
"""A placed card's outline must be at least this share as strong as the blob's best one."""
FELT_TINT = 0.5
"""Least chroma (max - min channel), as a share of the frame's felt's, of a pixel with the felt's
hue that counts as felt-tinted: glare adds white light, which leaves the felt's chroma as it was
(until a channel clips); a card's white under a mild violet cast stays below it."""
FELT_SHARE_MAX = 0.7
"""Most of a found card's quad without a card's outline that may be felt-tinted
(:func:`felt_share`): a glare patch on the felt is felt through and through (0.84 and 0.90 on
tuning seeds 11,200,218 and 11,600,024). Colour alone does not settle it: under a strong violet
cast real cards reach it too (UNO faces 0.46 at most on 11,200,100+; standard faces up to 0.98
on 11,600,000+), but they show a card's white-bordered outline all round (77 and more, against
``PLACE_MIN_EDGE`` = 40), the patches do not (18 and 23): both are asked for."""
PLACE_DARK_ON_CARD = 0.9
"""Least share of a dark card placed by :func:`place_cards` that must lie on the blob's card
pixels (placed cards included): shifted by the gap, a dark card's far side lands on its white
neighbour's edge, a stronger edge than its own, and the quad covers the felt gap between them
(11 mm off on tuning seed 12,500,014). 0.95 lost two dark cards of a block whose card size was
measured 2.6 mm too big (seed 12,000,017)."""
GLARE_MIN_MM2 = 0.1 * 57.0 * 88.0
"""Least felt-tinted area (mm²) in a blob bigger than a card for :func:`_without_glare` to take
it away: less is a violet speck of print or a fringe, no patch of glare."""
GLARE_MAX_SHARE = 0.75
"""Most of a blob that may be glare for :func:`_without_glare` to take it away: more is cards
under a violet cast (a standard face reaches 0.98, see ``FELT_SHARE_MAX``). A card in a patch
of glare as wide again is 0.57 glare (UNO tuning seed 16,000,089)."""
GLARE_EDGE = 40.0
"""Gradient (|Sobel x| + |Sobel y| of the top-down grey view) from which a step is a card's
outline, not the soft fringe of a glare patch (a few units per pixel)."""
FAINT_OUTLINE = 60.0
"""A piece fitted to an outline weaker than this is placed by its neighbours instead
(:func:`_snap_to_grid`): white-bordered cards cut out of touching blocks fit at 75 and more,
black cards touching black cards at 22 to 47 (fits up to 16 mm off) on standard tuning seeds
15,500,099, 16,500,031, 16,500,066 and 16,500,079."""
SNAP_REACH = 0.35
"""How far (share of a card's width) a card with a faint outline may lie from where a
neighbour one layout step away puts it for that neighbour to place it
(:func:`_snap_to_grid`): the 16 mm a black card's outline pulled one off, not the half card
that would take a neighbour's place."""
FEW_SINGLES = 6
"""Fewer single cards than this are measured by their outlines (:func:`outline_size`) rather
than their blobs: a blob is a millimetre or two too big on one side, which a median over many
cards evens out and over two or three does not."""
SIZE_SLACK_MM = 5.0
"""How far :func:`outline_size` looks for a card's sides beyond its blob's size: the shadow
and blur a blob takes in (4 mm on tuning seed 16,000,027)."""
SNAP_FIT_MM = 2.5
"""How far a card placed by its neighbours is then moved onto its own faint outline: a hand's
jitter (1.5 mm each way on the renderer's tables) and a turn of a few degrees."""
RIM_SHARE = 0.5
"""A card-sized blob whose outline encloses less than this share of its convex hull is a
broken rim (see :func:`_fill_card_rims`); a card's blob covers nearly all of its hull."""
RIM_HULL_RECT = 0.9
"""Least share of its bounding rectangle that a broken rim's convex hull covers: a card's
rounded rectangle nearly all of it, a triangle half."""
DUPLICATE_MM = 8.0
"""Two found cards whose centres lie closer than this are one card found twice (no fanned
layout steps by less than ``MIN_PITCH_MM``)."""
STRIP_MIN_MM = 18.0
"""The smallest visible strip of a covered card in a fanned column that still counts as a card."""
BAND_CORNER_MM = 2.5
"""How far a band's ends may reach past where it is half a card tall (two cards wide): the
corner of a card turned by 3 degrees."""
REFINE_MM = 8.0
"""How far a piece cut out of touching cards may lie from its card (a glare patch or a
neighbour's sliver in the blob) for :func:`fit_outline` to find the card's outline."""
REFINE_TURNS = (-2.0, -1.0, 0.0, 1.0, 2.0)
"""Turns (degrees) tried around a piece's own: cards lie a few degrees askew."""
REFINE_SLACK_MM = 2.0
"""How far a card's size may differ from the size measured on the frame's single cards."""
DARK_OUTLINE_BELOW = PLACE_MIN_EDGE
"""A card whose bright-in outline (felt outside, a white border inside) is weaker than this is
fitted to its dark-in outline instead when that is stronger (and at least ``OUTLINE_MIN``): a
black card on the felt (a dark standard deck) has no white border, and fitted as a
white-bordered card its quad wandered up to 10 mm off and was then dropped for having no
outline (3 of a 50-card standard table on tuning seed 11,600,011). Taking the stronger of the
two everywhere let the black field inside a UNO wild card's or back's white border pull its
quad (30 UNO tuning tables: 4 cards missed, 8 misread); below this, none."""


@dataclass(frozen=True, slots=True, eq=False)
class Located:
    """One card found: ``quad`` in image px (canonical order), ``quad_mm`` on the mat.

    ``covered`` says only a strip of it shows (fanned column); its quad is still the whole card,
    extended under the card that covers it.
    """

    quad: np.ndarray
    quad_mm: np.ndarray
    zone: str
    covered: bool = False

    @property
    def box(self) -> tuple[float, float, float, float]:
        x, y = self.quad[:, 0], self.quad[:, 1]
        return float(x.min()), float(y.min()), float(x.max()), float(y.max())

    @property
    def centre_mm(self) -> np.ndarray:
        return self.quad_mm.mean(axis=0)


class ColourMaps(NamedTuple):
    """Hue, saturation, value (OpenCV's 8-bit HSV) and chroma (max - min channel) of the
    top-down view, each a plane of its own: made once per frame and read by :func:`card_mask`
    and :func:`felt_tinted` alike (made again for each found card, they cost 7 ms a frame).
    WHY planes: a range test on one plane costs a fraction of one on all three at once."""

    hue: np.ndarray
    sat: np.ndarray
    value: np.ndarray
    chroma: np.ndarray


def colour_maps(top: np.ndarray) -> ColourMaps:
    """The :class:`ColourMaps` of a BGR view (its chroma is value - min channel: value is the
    max channel)."""
    hue, sat, value = cv2.split(cv2.cvtColor(top, cv2.COLOR_BGR2HSV))
    b, g, r = cv2.split(top)
    return ColourMaps(hue, sat, value, cv2.subtract(value, cv2.min(cv2.min(b, g), r)))


def card_mask(top: np.ndarray, maps: ColourMaps | None = None) -> np.ndarray:
    """255 where the top-down view is card rather than felt; ``maps`` its :func:`colour_maps`
    if already made.

    The felt is violet, a hue no card prints; a card is anything else — its white border, a face
    of any colour, a dark back. The felt's brightness is estimated locally so that black cards
    (far darker than the felt around them) count as cards while soft shadows do not.
    """
    hue, sat, v, chroma = colour_maps(top) if maps is None else maps
    violet = cv2.inRange(hue, 122, 165) & cv2.inRange(sat, 81, 255)
    # glare adds white light: saturation drops but the felt's chroma (max - min channel) stays;
    # a bright, still clearly violet pixel is felt under glare, not a white card
    glare = (cv2.inRange(hue, 124, 160) & cv2.inRange(sat, 40, 255) & cv2.inRange(v, 170, 255)
             & cv2.inRange(chroma, 55, 255))
    violet |= glare
    # dark cards can look violet-black: estimate the felt from violet pixels of felt brightness
    sample_v = v[::4, ::4][violet[::4, ::4] > 0]
    typical = float(np.median(sample_v)) if sample_v.size else 100.0
    sample = violet & cv2.inRange(v, int(0.6 * typical) + 1, 255)
    # a smooth local average (sigma ≈ 20 mm) computed at 1/16 scale: cheap and just as smooth
    # (both planes shrunk in one call: the same sums, a third less time)
    small = (top.shape[1] // 16, top.shape[0] // 16)
    sv, sw = cv2.split(cv2.resize(cv2.merge([cv2.bitwise_and(v, sample), sample]), small,
                                  interpolation=cv2.INTER_AREA))
    num = cv2.GaussianBlur(sv.astype(np.float32), (0, 0), 2.5)
    den = cv2.GaussianBlur(sw.astype(np.float32), (0, 0), 2.5)
    local = np.maximum(255.0 * num / np.maximum(den, 1e-3), 20.0)
    floor = np.clip(0.55 * local, 0, 255).astype(np.uint8)
    floor = cv2.resize(floor, (top.shape[1], top.shape[0]), interpolation=cv2.INTER_LINEAR)
    felt = violet & cv2.compare(v, floor, cv2.CMP_GT)
    return cv2.bitwise_not(felt)


def _kernel(mm: float, p: float) -> np.ndarray:
    """A square structuring element about ``mm`` millimetres wide at ``p`` px/mm (odd, ≥ 3)."""
    n = max(3, int(round(mm * p)) | 1)
    return np.ones((n, n), np.uint8)


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, -1)
    return out


def _fill_card_rims(mask: np.ndarray, p: float) -> np.ndarray:
    """``mask`` with every card-sized blob filled. WHY before the opening: a back whose
    pattern is near the felt's hue is a thin white rim around felt-coloured specks, which the
    opening breaks (and then nothing fills it: 2 backs missed on 60 standard tuning tables).
    A rim broken at one corner is a C, whose outline encloses nothing (a violet back on
    standard tuning seed 14,000,019): a blob that covers less than ``RIM_SHARE`` of its convex
    hull is filled to its hull. Any other blob keeps its outline (a hull would take in the
    felt or glare in a notch: 3 standard tuning cards lost).
    Only card-sized blobs: a felt gap enclosed by a ring of touching cards is no card."""
    out = mask.copy()
    for cnt in _contours(mask):
        short, long_ = sorted(cv2.minAreaRect(cnt)[1])
        if (CARD_W_MM[0] <= short / p <= CARD_W_MM[1]
                and CARD_H_MM[0] <= long_ / p <= CARD_H_MM[1]):
            hull = cv2.convexHull(cnt)
            h_area = cv2.contourArea(hull)
            # a broken rim: thin, around a card-shaped hull (the L of a zone's corner lines
            # has a triangle for a hull, and filling it joined a card: tuning seed 14,000,009)
            rim = (cv2.contourArea(cnt) < RIM_SHARE * h_area
                   and h_area > RIM_HULL_RECT * short * long_)
            cv2.drawContours(out, [hull if rim else cnt], -1, 255, -1)
    return out


def _rect_quad(rect: tuple) -> np.ndarray:
    return cv2.boxPoints(rect).astype(np.float32)


class _Edges:
    """Gradient magnitude of the top-down view, computed only if a fanned column needs it."""

    def __init__(self, gray: np.ndarray) -> None:
        self.gray = gray
        self._value: np.ndarray | None = None
        self._signed: tuple[np.ndarray, np.ndarray] | None = None

    def signed(self) -> tuple[np.ndarray, np.ndarray]:
        """Signed x and y derivatives (a card edge's side tells which card it belongs to)."""
        if self._signed is None:
            self._signed = (cv2.Sobel(self.gray, cv2.CV_32F, 1, 0, ksize=3),
                            cv2.Sobel(self.gray, cv2.CV_32F, 0, 1, ksize=3))
        return self._signed

    def __call__(self) -> np.ndarray:
        if self._value is None:
            self._value = np.abs(cv2.Sobel(self.gray, cv2.CV_32F, 0, 1, ksize=3)) + np.abs(
                cv2.Sobel(self.gray, cv2.CV_32F, 1, 0, ksize=3))
        return self._value


def _split_long(rect: tuple, edges: _Edges, p: float, size: tuple[float, float]
                ) -> list[tuple[np.ndarray, bool]]:
    """Split an over-long blob (a fanned column) into card quads (top-down px) by its edges."""
    (cx, cy), (w, h), ang = rect
    if w > h:  # make the long axis "h"
        w, h, ang = h, w, ang - 90.0
    a = np.deg2rad(ang)
    ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    if uy[1] < 0:  # the long axis points down the mat
        uy, ux = -uy, -ux
    # a fanned column is wider than one card (each card sits a little askew): take the card
    # size seen elsewhere in the frame rather than the column's width
    card_h = float(size[1] * p)
    w = float(min(w, size[0] * p * 1.02))
    top = np.array([cx, cy]) - uy * h / 2
    # profile of edge strength across the column, sampled along the long axis
    n = int(h)
    ts = np.arange(n, dtype=np.float32)
    offs = np.linspace(-0.35, 0.35, 15, dtype=np.float32) * w
    xs = top[0] + ts[:, None] * uy[0] + offs[None, :] * ux[0]
    ys = top[1] + ts[:, None] * uy[1] + offs[None, :] * ux[1]
    prof = cv2.remap(edges(), xs.astype(np.float32), ys.astype(np.float32), cv2.INTER_LINEAR)
    prof = np.median(prof, axis=1)
    prof = np.convolve(prof, np.ones(3) / 3, mode="same")
    # people fan a column with a roughly even step: the most cards whose evenly spaced tops
    # all sit on strong edges (as strong as the last card's top, which is surely there)
    win = int(3 * p)
    spare = h - card_h

    def snapped(k: int) -> list[float]:
        cuts = [0.0]
        for i in range(1, k + 1):
            t = int(round(i * spare / k))
            lo, hi = max(0, t - win), min(len(prof), t + win + 1)
            cuts.append(float(lo + int(np.argmax(prof[lo:hi]))) if hi > lo else float(t))
        return cuts

    cuts = [0.0]
    if spare > STRIP_MIN_MM * p:
        ref = max(snapped(1)[1:], key=lambda t: prof[int(t)])
        ref_v = float(prof[int(ref)])
        for k in range(int(spare / (STRIP_MIN_MM * p)), 0, -1):
            cand = snapped(k)
            steps = np.diff(cand)
            if (min(prof[int(t)] for t in cand[1:]) >= 0.3 * ref_v
                    and steps.min() > 0.7 * spare / k and steps.max() < 1.3 * spare / k):
                cuts = cand
                break
    out = []
    for i, t0 in enumerate(cuts):
        c = top + uy * (t0 + card_h / 2)
        r = ((float(c[0]), float(c[1])), (float(w), card_h), float(np.rad2deg(np.arctan2(
            ux[1], ux[0]))))
        out.append((_rect_quad(r), i < len(cuts) - 1))
    return out


def _split_wide(rect: tuple, p: float, size: tuple[float, float]) -> list[np.ndarray]:
    """Cards touching side by side (or end to end): cut a blob into whole-card rectangles."""
    (cx, cy), (w, h), ang = rect
    a = np.deg2rad(ang)
    ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    # choose the split whose pieces are card-shaped and portrait on the mat (long side down y)
    w_is_x = abs(ux[0]) >= abs(ux[1])
    best = None
    for kw in range(1, int(w / (45.0 * p)) + 2):
        for kh in range(1, int(h / (45.0 * p)) + 2):
            pw, ph = w / kw, h / kh
            across, down = (pw, ph) if w_is_x else (ph, pw)
            err = abs(across / p - size[0]) / size[0] + abs(down / p - size[1]) / size[1]
            if best is None or err < best[0]:
                best = (err, kw, kh)
    assert best is not None
    err, kw, kh = best
    if err > 0.25:
        return []
    pw, ph = w / kw, h / kh
    out = []
    for i in range(kw):
        for j in range(kh):
            c = np.array([cx, cy]) + ux * (-w / 2 + (i + 0.5) * pw) + uy * (-h / 2 + (j + 0.5) * ph)
            out.append(_rect_quad(((float(c[0]), float(c[1])), (pw, ph), ang)))
    return out


def _split_columns(rect: tuple, p: float, size: tuple[float, float]) -> list[tuple]:
    """Fanned columns standing side by side in one blob: cut it into whole-height columns."""
    (cx, cy), (w, h), ang = rect
    a = np.deg2rad(ang)
    ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    if abs(ux[0]) < abs(ux[1]):  # make "w" the extent across the mat (x)
        w, h, ux, uy, ang = h, w, uy, -ux, ang + 90.0
    k = max(1, round(w / (size[0] * p * 1.08)))
    pw = w / k
    out = []
    for i in range(k):
        c = np.array([cx, cy]) + ux * (-w / 2 + (i + 0.5) * pw)
        out.append(((float(c[0]), float(c[1])), (pw, h), ang))
    return out


def band_column_counts(widths: list[float], columns: int, card_w: float) -> list[int]:
    """How many fanned columns each band holds, from the bands' widths and the total the runner
    expects: one common pitch explains all bands (``width = card_w + (k - 1) * pitch``).

    WHY the prior: 105 columns overlapping to 15 mm cannot be counted from edges alone (a card's
    own printed border draws lines as strong as its neighbour's edge), but the runner knows how
    many columns it asked for; only how they are shared among the bands is left to measure.
    """
    bands = len(widths)
    if bands == 0 or columns < bands:
        return [1] * bands
    if columns == bands:
        return [1] * bands
    pitch = max(1e-3, (sum(widths) - bands * card_w) / (columns - bands))
    counts = [max(1, round((w - card_w) / pitch) + 1) for w in widths]
    while sum(counts) != columns:  # rounding: give or take where the width fits worst
        excess = [(w - card_w) / pitch + 1 - k for w, k in zip(widths, counts, strict=True)]
        if sum(counts) < columns:
            counts[int(np.argmax(excess))] += 1
        else:
            movable = [e if k > 1 else np.inf for e, k in zip(excess, counts, strict=True)]
            counts[int(np.argmin(movable))] -= 1
    return counts


def _snap(profile: np.ndarray, expected: np.ndarray, window: float) -> np.ndarray:
    """Move each expected position to the strongest edge of ``profile`` within ``window`` px,
    weighting strength by closeness so an even layout stays even unless the image disagrees."""
    out = expected.astype(np.float64).copy()
    n = len(profile)
    win = max(1, int(window))
    for i, t in enumerate(expected):
        lo, hi = max(0, int(t) - win), min(n, int(t) + win + 1)
        if hi <= lo:
            continue
        ts = np.arange(lo, hi)
        score = profile[lo:hi] * np.exp(-0.5 * ((ts - t) / (0.6 * window)) ** 2)
        out[i] = float(ts[int(np.argmax(score))])
    return out


def _comb(profile: np.ndarray, k: int, pitch: float, start: float, slack: float,
          reach: float, end: float, card: float) -> np.ndarray:
    """``k`` edge positions in ``profile``: the evenly spaced comb (first tooth from ``reach``
    before ``start`` to ``reach`` after ``start + slack``, spacing near ``pitch``, the last
    card ending no more than ``3 reach`` inside ``end``) on the strongest edges, then each
    tooth moved to its nearest strong edge, so the hand's uneven spacing is followed without
    losing count."""
    n = len(profile)
    idx = np.arange(k)
    s0s = np.arange(start - reach, start + max(slack, 0.0) + reach + 1, 1.0)
    # a blob is more often too big (a shadow, a stray line) than too small
    pts = np.linspace(0.85 * pitch, 1.05 * pitch, 41) if k > 1 else np.array([pitch])
    # every comb at once, (first tooth, spacing) in the order a loop over both would take
    last = s0s[:, None] + (k - 1) * pts[None, :] + card
    fits = (end - 3 * reach <= last) & (last <= end + reach) if k > 1 else \
        np.ones(last.shape, bool)
    best = None
    if fits.any():
        s0_i, pt_i = np.nonzero(fits)
        teeth = s0s[s0_i, None] + idx[None, :] * pts[pt_i, None]
        ts = np.clip(np.round(teeth).astype(int), 0, n - 1)
        # the profile is never negative: the best comb is the first of the highest sums
        best = teeth[int(np.argmax(profile[ts].sum(axis=1)))]
    if best is None:  # nothing fits the constraints: the plain even comb
        best = start + idx * pitch
    return _snap(profile, best, min(0.2 * pitch, reach)) if k > 1 and pitch > 0 else best


class _Toward:
    """Where the view brightens going along ``u`` (the derivative that way, negatives 0), read
    by bilinear samples (:meth:`remap`), made only on the part ``box`` (x0, y0, x1, y1) of the
    view that the samples are expected in.

    WHY a part: a band of fanned columns is sampled near itself, and the derivative of the
    whole view, twice per band, cost more than all its samples. Samples outside the part (2 of
    730 reads over the demo's first 300 frames and events) are read from the whole view, so the
    readings are exactly those of the whole view: the same pixels, at coordinates shifted by
    whole pixels."""

    def __init__(self, gx: np.ndarray, gy: np.ndarray, u: np.ndarray,
                 box: tuple[int, int, int, int]) -> None:
        h, w = gx.shape
        x0, y0, x1, y1 = box
        self.box = (max(0, x0), max(0, y0), min(w, x1), min(h, y1))
        self.gx, self.gy, self.u = gx, gy, u
        self._whole: np.ndarray | None = None
        x0, y0, x1, y1 = self.box
        self.part = self._of(gx[y0:y1, x0:x1], gy[y0:y1, x0:x1])

    def _of(self, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
        return np.maximum(gx * self.u[0] + gy * self.u[1], 0)

    def remap(self, qx: np.ndarray, qy: np.ndarray) -> np.ndarray:
        """``cv2.remap`` (bilinear) of the derivative at the float32 points ``qx``, ``qy``."""
        x0, y0, x1, y1 = self.box
        h, w = self.gx.shape
        # a bilinear sample reads the pixel at its floor and the next: inside the part by a
        # margin, unless the part's edge is the view's own (whose border both reads share)
        if qx.size and (x0 == 0 or qx.min() >= x0 + 2) and (x1 == w or qx.max() <= x1 - 3) \
                and (y0 == 0 or qy.min() >= y0 + 2) and (y1 == h or qy.max() <= y1 - 3):
            return cv2.remap(self.part, qx - np.float32(x0), qy - np.float32(y0),
                             cv2.INTER_LINEAR)
        if self._whole is None:
            self._whole = self._of(self.gx, self.gy)
        return cv2.remap(self._whole, qx, qy, cv2.INTER_LINEAR)


def split_band(rect: tuple, columns: int, rows: int, edges: _Edges, p: float,
               size: tuple[float, float]) -> list[tuple[np.ndarray, bool, tuple[float, float]]]:
    """A band of ``columns`` fanned columns of ``rows`` cards → whole-card quads (top-down px).

    Returns (quad, covered, visible) per card, ``visible`` the (across, down) px of it that no
    other card covers. Columns overlap sideways (later ones on top, to the right) and rows
    downwards; each column's left edge and each row's top edge is snapped to the image's edges
    near its evenly spaced place, so uneven spacing by a hand is followed.
    """
    (cx, cy), (w, h), ang = rect
    a = np.deg2rad(ang)
    ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    if abs(ux[0]) < abs(ux[1]):  # make ux the direction across the mat (x)
        w, h, ux, uy = h, w, uy, -ux
    if ux[0] < 0:
        ux = -ux
    if uy[1] < 0:
        uy = -uy
    card_w, card_h = size[0] * p, size[1] * p
    origin = np.array([cx, cy]) - ux * w / 2 - uy * h / 2
    pitch_x = (w - card_w) / max(columns - 1, 1)
    pitch_y = (h - card_h) / max(rows - 1, 1) if rows > 1 else 0.0
    # a card's left (top) edge is where the image turns bright going right (down): the white
    # border starts; its own inner border edge turns dark, so the signed change tells them apart
    gx, gy = edges.signed()
    margin = 6.0 * p
    # every sample lies within this reach of the band: its comb, snaps and edges move the
    # cards' edges by a few ``reach`` at most (the derivatives are made on that part alone)
    corners = cv2.boxPoints(rect)
    grow = margin + 8.0 * p + 4.0
    box = (*np.floor(corners.min(axis=0) - grow).astype(int),
           *np.ceil(corners.max(axis=0) + grow).astype(int))
    across, down = _Toward(gx, gy, ux, box), _Toward(gx, gy, uy, box)
    xs_t = np.arange(-margin, w + margin, dtype=np.float32)

    def column_profile(y0: float, y1: float) -> np.ndarray:
        ys_t = np.linspace(y0, y1, 24, dtype=np.float32)
        px = origin[0] + xs_t[None, :] * ux[0] + ys_t[:, None] * uy[0]
        py = origin[1] + xs_t[None, :] * ux[1] + ys_t[:, None] * uy[1]
        return np.median(across.remap(px.astype(np.float32), py.astype(np.float32)), axis=0)

    # columns fill from the top, so a short one (the card selection's lone card, column 1 of
    # 104) shows its left edge only in the band's first card height: read that strip as well,
    # at half weight so the print inside that strip does not outvote whole-height edges
    col_prof = np.maximum(column_profile(0.05 * h, 0.95 * h),
                          0.5 * column_profile(0.05 * h, min(0.95 * h, 0.9 * card_h)))
    # the blob may reach past the cards (a shadow, a line of the mat): the comb may start
    # anywhere that leaves room for all its teeth
    lefts = _comb(col_prof, columns, pitch_x, margin,
                  (w - card_w) - 0.85 * pitch_x * (columns - 1), 3.0 * p, margin + w,
                  card_w) - margin
    yt = np.arange(-margin, h + margin, dtype=np.float32)
    xt = np.linspace(0.02, 0.98, 48, dtype=np.float32) * w
    qx = origin[0] + xt[None, :] * ux[0] + yt[:, None] * uy[0]
    qy = origin[1] + xt[None, :] * ux[1] + yt[:, None] * uy[1]
    row_prof = np.median(down.remap(qx.astype(np.float32), qy.astype(np.float32)), axis=1)
    tops = _comb(row_prof, max(rows, 1), pitch_y, margin,
                 (h - card_h) - 0.85 * pitch_y * (max(rows, 1) - 1), 3.0 * p, margin + h,
                 card_h) - margin
    angle = float(np.rad2deg(np.arctan2(ux[1], ux[0])))
    out = []
    reach = 2.5 * p  # a hand's jitter: each card's own edges, near its column's and row's

    def edges_at(grad: _Toward, t0s: list[float], along: np.ndarray,
                 spans: list[tuple[float, float]], normal: np.ndarray) -> list[float]:
        """For each ``t0``: the strongest brightening edge within ``reach`` of it along
        ``normal``, sampled over its span [s0, s1] along ``along`` (the card's visible side).
        All the band's cards are sampled by one remap: a few hundred small ones cost more in
        calls than in pixels."""
        grid_x, grid_y, lengths = [], [], []
        for t0, (s0, s1) in zip(t0s, spans, strict=True):
            ts = np.arange(t0 - reach, t0 + reach + 1, dtype=np.float32)
            ss = np.linspace(s0, s1, 9, dtype=np.float32)
            grid_x.append(origin[0] + ts[:, None] * normal[0] + ss[None, :] * along[0])
            grid_y.append(origin[1] + ts[:, None] * normal[1] + ss[None, :] * along[1])
            lengths.append(len(ts))
        profiles = np.median(grad.remap(np.concatenate(grid_x).astype(np.float32),
                                        np.concatenate(grid_y).astype(np.float32)), axis=1)
        ends = np.cumsum(lengths)
        return [float(_snap(profiles[end - n:end], np.array([reach]), reach)[0] + t0 - reach)
                for t0, n, end in zip(t0s, lengths, ends, strict=True)]

    vis_ws = [(lefts[i + 1] - x) if i + 1 < columns else card_w for i, x in enumerate(lefts)]
    vis_hs = [(tops[j + 1] - y) if j + 1 < rows else card_h for j, y in enumerate(tops)]
    cells = [(i, j) for i in range(len(lefts)) for j in range(len(tops))]
    # each card's left edge near its column's, then its top edge along what shows of it
    x0s = edges_at(across, [lefts[i] for i, _ in cells], uy,
                   [(tops[j] + 0.2 * vis_hs[j], tops[j] + 0.8 * vis_hs[j]) for _, j in cells], ux)
    y0s = edges_at(down, [tops[j] for _, j in cells], ux,
                   [(x0 + 0.2 * vis_ws[i], x0 + 0.8 * vis_ws[i])
                    for (i, _), x0 in zip(cells, x0s, strict=True)], uy)
    for (i, j), x0, y0 in zip(cells, x0s, y0s, strict=True):
        vis_w, vis_h = vis_ws[i], vis_hs[j]
        c = origin + ux * (x0 + card_w / 2) + uy * (y0 + card_h / 2)
        quad = _rect_quad(((float(c[0]), float(c[1])), (card_w, card_h), angle))
        covered = vis_w < 0.9 * card_w or vis_h < 0.9 * card_h
        out.append((quad, covered, (float(vis_w), float(vis_h))))
    return out


def _contours(mask: np.ndarray) -> list[np.ndarray]:
    return list(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0])


def _classify(cnt: np.ndarray, p: float, edges: _Edges,
              found: list[tuple[np.ndarray, bool]], grow: float = 0.0, split: bool = False,
              fanned: bool | None = None, size: tuple[float, float] | None = None) -> bool:
    """Add the card(s) this blob is to ``found``; False if it is bigger than a card (unsplit).

    ``size`` (mm) is the card size seen in this frame; None means "single cards only"."""
    area = cv2.contourArea(cnt)
    if area < 0.12 * 57.0 * 88.0 * p * p:
        return True
    (cx, cy), (w, h), ang = cv2.minAreaRect(cnt)
    short, long_ = sorted(((w + grow) / p, (h + grow) / p))
    rect = ((cx, cy), (w + grow, h + grow), ang)
    fill = area / max(w * h, 1.0)
    narrow = CARD_W_MM[0] <= short <= CARD_W_MM[1]
    if narrow and CARD_H_MM[0] <= long_ <= CARD_H_MM[1]:
        found.append((_rect_quad(rect), False))
        return True
    if size is None:
        return False
    if narrow and long_ > CARD_H_MM[1] and fill > 0.8:
        k = long_ / size[1]
        stacked = fanned is False or (fanned is None and abs(k - round(k)) < 0.1)
        if not stacked:
            found.extend(_split_long(rect, edges, p, size))
            return True
    if fanned and short > CARD_W_MM[1] and fill > 0.7:
        for col in _split_columns(rect, p, size):
            found.extend(_split_long(col, edges, p, size))
        return True
    if (short > CARD_W_MM[1] or long_ > CARD_H_MM[1]) and fill > (0.7 if split else 0.88):
        pieces = _split_wide(rect, p, size)
        # a blob no grid of whole cards fits (a block of cards with glare on the felt beside
        # it) is no card as a whole: cut it along its dark lines like any other
        if pieces or split:
            found.extend((q, False) for q in pieces)
            return True
    return split


@dataclass(frozen=True, slots=True, eq=False)
class Localisation:
    """The cards found, and what else lies in the zones: ``obstructions`` (mm boxes) are
    regions that are neither felt nor card — a hand reaching in, a phone, a sleeve."""

    cards: tuple[Located, ...]
    obstructions: tuple[np.ndarray, ...]


def topdown_zones(image: np.ndarray, geometry: TableGeometry, p: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The mat seen from above at ``p`` px/mm, and the mask of its zones (255 inside): where
    cards and tiles are looked for."""
    mat = geometry.mat
    top = cv2.warpPerspective(image, geometry.topdown_transform(p),
                              (round(mat.width * p), round(mat.height * p)),
                              flags=cv2.INTER_LINEAR)
    zones = np.zeros(top.shape[:2], np.uint8)
    for z in mat.zones:
        cv2.rectangle(zones, (round(z.x * p), round(z.y * p)),
                      (round((z.x + z.w) * p), round((z.y + z.h) * p)), 255, -1)
    return top, zones


def locate_cards(image: np.ndarray, geometry: TableGeometry, fanned: bool | None = None,
                 p: float = TOPDOWN_PX_PER_MM, columns: int | None = None,
                 rows: int | None = None) -> Localisation:
    """Every card lying in a zone of the mat: whole-card quads in image pixels and mm.

    ``fanned`` says how columns are laid: True (overlapping, corner indices showing), False
    (cards side by side) or None (guess per blob: a length near a whole number of cards is a
    stack of whole cards). The table knows which; saying so removes the guess.

    ``columns`` and ``rows`` are the work area's layout as the runner expects it (number of
    columns, cards per column): blobs wider than a card there are bands of columns overlapping
    sideways, split by :func:`split_band` into that many columns in all.
    """
    mat = geometry.mat
    top, zones = topdown_zones(image, geometry, p)
    maps = colour_maps(top)
    mask = _fill_card_rims(card_mask(top, maps) & zones, p)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, _kernel(2.5, p))
    mask = _fill_holes(mask)
    gray = cv2.cvtColor(top, cv2.COLOR_BGR2GRAY)
    edges = _Edges(gray)
    tinted = felt_tinted(maps, _felt_chroma(maps.chroma, zones, mask))
    found: list[tuple[np.ndarray, bool]] = []
    pending = []
    for cnt in _contours(mask):
        if _classify(cnt, p, edges, found):
            continue
        parts = _without_glare(cnt, tinted, edges, p)
        if parts is None:
            pending.append(cnt)
        else:
            pending.extend(part for part in parts if not _classify(part, p, edges, found))
    n_single = len(found)
    # the size of the single cards found tells the deck (UNO 56×87, standard 63×88 mm)
    size = (57.0, 88.0)
    if found:
        dims = np.array([sorted((np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])))
                         for q, _ in found]) / p
        size = (float(np.median(dims[:, 0])), float(np.median(dims[:, 1])))
        # too few for their blobs' median: their outlines (not in bands of fanned columns,
        # whose cards split_band places by the edges of the whole band, tuned on blobs' sizes)
        if n_single < FEW_SINGLES and not (columns and rows):
            measured = [outline_size(q, edges, size, p) for q, _ in found]
            spans = np.array([s for s, score in measured if score >= PLACE_MIN_EDGE])
            if len(spans):
                size = (float(np.median(spans[:, 0])), float(np.median(spans[:, 1])))
    # the layout's turn from the cards laid in rows, not from the discard pile's top card,
    # which is thrown on it at any angle
    angle = _layout_angle([q for q, _ in found if mat.zone_of(q.mean(axis=0) / p) != "discard"])
    banded: list[tuple[np.ndarray, bool, tuple[float, float]]] = []
    below: list[int | None] = []
    if columns and rows:
        pending, banded, below = _bands(pending, found[:n_single], mat, columns, rows, edges,
                                        p, size)
    for cnt in pending:
        if not fanned:
            # touching cards, found by their outlines; kept only if they explain the whole
            # blob but for the gaps between them: no strip of a card may be left (a fanned
            # column shows one whole outline and strips; a card placed off its place leaves
            # one): cut it as below
            placed = place_cards(cnt, [], gray, size, p, angle)
            strip_px = STRIP_MIN_MM * size[0] * p * p
            if len(placed) > 1 and _unexplained(cnt, placed, p) < strip_px:
                found.extend((q, False) for q in placed)
                continue
        if _classify(cnt, p, edges, found, fanned=fanned, size=size):
            continue
        # bigger than a card: cards touch. Card edges and shadows are thin dark lines, which
        # black-hat picks out of the bright cards; cut the blob along them and try again.
        x, y, w, h = cv2.boundingRect(cnt)
        blob = np.zeros((h + 2, w + 2), np.uint8)
        cv2.drawContours(blob, [cnt], -1, 255, -1, offset=(1 - x, 1 - y))
        roi = gray[max(0, y - 1):y + h + 1, max(0, x - 1):x + w + 1]
        if roi.shape != blob.shape:
            continue
        lines = cv2.morphologyEx(roi, cv2.MORPH_BLACKHAT, _kernel(3.5, p))
        blob[lines > 18] = 0
        blob = cv2.erode(blob, np.ones((3, 3), np.uint8))
        blob = _fill_holes(cv2.morphologyEx(blob, cv2.MORPH_OPEN, _kernel(2.5, p)))
        start = len(found)
        for part in _contours(blob):
            _classify(part + [x - 1, y - 1], p, edges, found, grow=p, split=True,
                      fanned=fanned, size=size)
        if not fanned:  # what the cuts left unexplained: look for whole cards by their outline
            found.extend((q, False) for q in place_cards(cnt, [q for q, _ in found[start:]],
                                                         gray, size, p, angle))
    out = []
    explained = np.zeros_like(mask)
    # pieces cut out of touching cards, and single blobs that took in a shadow or a glare
    # patch, are moved onto their card's outline
    weak = np.zeros(len(found), bool)  # fitted to an outline too faint to place them
    for k, (q, covered) in enumerate(found):
        if not (covered or (k < n_single and _card_sized(q, size, p))):
            q, score = fit_outline(q, edges, size, p)
            found[k] = (q, covered)
            weak[k] = score < FAINT_OUTLINE
    if weak.any() and fanned is not True:
        _snap_to_grid(found, weak, edges, size, p, mat)
    detail: list[float] = []  # measured on first need

    def plain(k: int) -> bool:
        """Whether found card ``k`` carries far less print than the frame's cards do."""
        if not detail:
            detail.extend(_detail(q, gray) for q, _ in found)
        return len(found) >= 3 and detail[k] < DETAIL_SHARE * float(np.median(detail))

    visible = [None] * len(found) + _last_in_column(banded, below, mask, p, size)
    centres = np.empty((0, 2), np.float32)
    for k, ((q_top, covered), vis) in enumerate(zip(found + [(q, c) for q, c, _ in banded],
                                                     visible, strict=True)):
        roi = _quad_roi(q_top, mask.shape)
        if roi is None:
            continue
        if k < len(found):
            centre = q_top.mean(axis=0)
            if (np.linalg.norm(centres - centre, axis=1) < DUPLICATE_MM * p).any():
                continue  # two parts of one blob moved onto the same card
        rows, cols, piece = roi
        shown = piece if vis is None else _visible_piece(q_top, vis, (cols.start, rows.start),
                                                          piece.shape)
        on_card = cv2.countNonZero(shown & mask[rows, cols]) / max(cv2.countNonZero(shown), 1)
        # a blob that was card-shaped by itself is a card even where a colour cast turned
        # some of its white border felt-coloured, if it carries print or a card's outline
        # (glare on felt has neither); a piece cut out of a larger blob must be card nearly
        # all over (a grid cut through a hand would pass otherwise) and have either too;
        # a whole piece must show its outline whatever its print: a wide glare patch on the
        # felt is cut into card-sized pieces whose sensor noise passes for print
        if on_card < (SINGLE_ON_CARD if k < n_single else PIECE_ON_CARD):
            continue
        if (k < len(found) and _roi_share(roi, tinted) > FELT_SHARE_MAX
                and outline_strength(q_top, edges, size, p) < PLACE_MIN_EDGE):
            continue  # felt all over and no card's outline all round: felt whitened by glare
        if (k < len(found) and (k >= n_single or on_card < PIECE_ON_CARD)
                and (plain(k) or (k >= n_single and not covered))
                and outline_strength(q_top, edges, size, p) < OUTLINE_MIN):
            continue  # no outline, and no print or no blob of its own: glare, not a card
        if k < len(found):
            centres = np.vstack([centres, centre])
        explained[rows, cols] |= piece
        q_mm = q_top / p
        centre = q_mm.mean(axis=0)
        zone = mat.zone_of(centre)
        if zone is None:
            continue
        q_img = canonical_quad(geometry.to_image(q_mm))
        out.append(Located(q_img, canonical_quad(q_mm), zone, covered))
    if fanned is not True and not banded:  # cards the felt test took for felt: see _grid_gaps
        for q_top in _grid_gaps(out, edges, size, p, mat):
            cv2.fillConvexPoly(explained, np.round(q_top).astype(np.int32), 255)
            q_mm = q_top / p
            out.append(Located(canonical_quad(geometry.to_image(q_mm)), canonical_quad(q_mm),
                               mat.zone_of(q_mm.mean(axis=0))))
    # what no card explains is a hand, unless it is a card the prior did not expect (a row
    # too many): one whole card lying on top, its outline and print all there to see
    kept = [c.quad_mm * p for c in out]
    regions = _unexplained_regions(mask, explained, p)
    extra = _unexpected_cards(regions, mask, edges, size, p, angle, kept)
    for q_top in extra:
        cv2.fillConvexPoly(explained, np.round(q_top).astype(np.int32), 255)
        q_mm = q_top / p
        zone = mat.zone_of(q_mm.mean(axis=0))
        if zone is not None:
            out.append(Located(canonical_quad(geometry.to_image(q_mm)), canonical_quad(q_mm),
                               zone))
    if extra:  # what they explain is no hand
        regions = _unexplained_regions(mask, explained, p)
    return Localisation(tuple(out), _obstructions(regions, p))


def _grid_steps(centres: np.ndarray, size: tuple[float, float]) -> list[np.ndarray]:
    """The layout's steps (mm vectors) from a card to the next along a row and down a column
    (the median over the cards ``centres`` that have such a neighbour), each where seen."""
    d = centres[None] - centres[:, None]  # d[i, j]: from card i to card j
    steps = []
    for axis, length in enumerate(size):
        # the nearest card a card's length or a little more on, about level with it
        along, off = d[..., axis], np.abs(d[..., 1 - axis])
        ok = (along > 0.9 * length) & (along < 1.6 * length) & (off < 0.35 * along)
        rows = np.flatnonzero(ok.any(axis=1))
        if len(rows):
            pick = np.argmin(np.where(ok[rows], off[rows], np.inf), axis=1)
            steps.append(np.median(d[rows, pick], axis=0))
    return steps


def _snap_to_grid(found: list[tuple[np.ndarray, bool]], weak: np.ndarray, edges: _Edges,
                  size: tuple[float, float], p: float, mat: MatSpec) -> None:
    """Move each ``weak`` card of the work area (top-down quads, in place) to where its
    neighbours along its row and column put it: one layout step from each.

    WHY: a black card touching another black card shows no outline between them (no white
    border, no felt gap wide enough to see through the blur), so neither the cut that made
    its piece nor :func:`fit_outline` can place it: both were 7 to 16 mm off for 5 dark
    cards of 200 standard tuning tables (15,500,000+ and 16,500,000+), misread or lost. Its
    neighbours with a sharp outline place it to within their hand's jitter; its own faint
    outline, looked for no further than ``SNAP_FIT_MM`` from there, then takes out its own.
    """
    centres = np.array([q.mean(axis=0) for q, _ in found]) / p
    work = np.array([mat.zone_of(c) == "work" for c in centres])
    sure = centres[work & ~weak]
    if len(sure) < 3:
        return
    steps = _grid_steps(sure, size)
    for i in np.flatnonzero(work & weak):
        guesses = []
        for step in steps:
            for sign in (1.0, -1.0):
                dist = np.linalg.norm(sure - (centres[i] - sign * step), axis=1)
                j = int(np.argmin(dist))
                if dist[j] < SNAP_REACH * size[0]:
                    guesses.append(sure[j] + sign * step)
        if len(guesses) >= 2:
            q, covered = found[i]
            q = q + (np.median(guesses, axis=0) - centres[i]) * p
            # then onto the faint outline nearest there: the card's own jitter, no further
            found[i] = (fit_outline(q, edges, size, p, SNAP_FIT_MM)[0], covered)


def _grid_gaps(cards: list[Located], edges: _Edges, size: tuple[float, float], p: float,
               mat: MatSpec) -> list[np.ndarray]:
    """Whole cards (top-down quads) in the holes of the grid that ``cards`` lay out: one step
    of the layout's own pitch from a card found, where no card was found but one lies a step
    further on, in the same zone, with a card's outline all round (:func:`fit_outline`, at
    least ``PLACE_MIN_EDGE``).

    WHY: a back printed in the felt's own violet (a crosshatch, a plain field) is felt to the
    colour test of :func:`card_mask`, white rim and all once the rim is thin or blurred, so it
    leaves a hole in the layout (2 of 5 standard cards missed on tuning seeds 16,500,000+).
    Its outline is as sharp as any card's (120 and more, where the felt shows about 5); a gap
    between two cards shows their edges turned the wrong way round (dark going in), and the
    felt past a layout's last column none. Only a hole is looked at (cards found a step before
    and a step after it along a row or a column), so the search costs nothing on a whole
    layout and one outline fit per hole, not a scan of the mat.
    """
    cw = size[0]
    laid = [c for c in cards if c.zone != "discard" and not c.covered]
    if len(laid) < 2:
        return []
    centres = np.array([c.centre_mm for c in laid])
    out: list[np.ndarray] = []
    taken = centres

    def nearest(points: np.ndarray) -> np.ndarray:
        """Distance from each of ``points`` to the nearest card centre (mm)."""
        return np.linalg.norm(points[:, None] - taken[None], axis=2).min(axis=1)

    for step in _grid_steps(centres, size):
        # a hole: no card one step on from a card, and one two steps on
        holes = np.flatnonzero((nearest(centres + step) >= 0.6 * cw)
                               & (nearest(centres + 2 * step) <= 0.3 * cw))
        for i in holes:
            card = laid[i]
            if mat.zone_of(centres[i] + step) != card.zone:
                continue
            fitted, score = fit_outline(card.quad_mm * p + step * p, edges, size, p)
            centre = fitted.mean(axis=0) / p
            if score >= PLACE_MIN_EDGE and nearest(centre[None])[0] >= 0.6 * cw:
                taken = np.vstack([taken, centre])
                out.append(fitted)
    return out


def _visible_piece(quad: np.ndarray, visible: tuple[float, float], offset: tuple[int, int],
                   shape: tuple[int, ...]) -> np.ndarray:
    """Mask of the top-left ``visible`` (across, down px) part of a card's quad."""
    q = canonical_quad(quad)
    right = (q[1] - q[0]) / max(float(np.linalg.norm(q[1] - q[0])), 1e-6) * visible[0]
    down = (q[3] - q[0]) / max(float(np.linalg.norm(q[3] - q[0])), 1e-6) * visible[1]
    part = np.float32([q[0], q[0] + right, q[0] + right + down, q[0] + down])
    out = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(out, np.round(part - offset).astype(np.int32), 255)
    return out


def _bands(pending: list[np.ndarray], singles: list[tuple[np.ndarray, bool]], mat: MatSpec,
           columns: int, rows: int, edges: _Edges, p: float, size: tuple[float, float]
           ) -> tuple[list[np.ndarray], list[tuple[np.ndarray, bool, tuple[float, float]]],
                      list[int | None]]:
    """Take the bands (blobs wider than a card in both directions, in the work area) out of
    ``pending`` and split them into the expected number of columns. Also returns, per card,
    the index of the card below it in its column (None for a band's last row)."""
    blobs, rest = [], []
    for cnt in pending:
        rect = cv2.minAreaRect(cnt)
        (cx, cy), (w, h), _ = rect
        zone = mat.zone_of(np.array([cx, cy]) / p)
        if zone == "work" and min(w, h) / p > CARD_W_MM[1] and \
                cv2.contourArea(cnt) > 1.3 * size[0] * size[1] * p * p:
            blobs.append(cnt)
        else:
            rest.append(cnt)
    if not blobs:
        return pending, [], []
    total_w = sum(cv2.boundingRect(c)[2] for c in blobs)
    bands = []
    for cnt in blobs:
        share = columns * cv2.boundingRect(cnt)[2] / max(total_w, 1)
        bands.extend(_unstack(cnt, share, rows, p, size))
    # a blob one card tall is one row of a band whose rows lie apart (no vertical overlap);
    # consecutive blobs down the mat make up one band until they hold ``rows`` rows
    bands.sort(key=lambda r: r[0][1])
    groups: list[list[tuple[tuple, int]]] = []
    held = rows
    for rect in bands:
        tall = _down(rect) / p > size[1] + 0.6 * MIN_ROW_PITCH_MM
        r = rows if tall else 1
        if held + r > rows:
            groups.append([])
            held = 0
        groups[-1].append((rect, r))
        held += r
    loose = sum(1 for q, _ in singles
                if mat.zone_of(q.mean(axis=0) / p) == "work")
    wanted = max(len(groups), columns - (loose if rows == 1 else round(loose / rows)))
    widths = [max(_across(rect) for rect, _ in g) for g in groups]
    counts = band_column_counts(widths, wanted, size[0] * p)
    out: list[tuple[np.ndarray, bool, tuple[float, float]]] = []
    below: list[int | None] = []
    for group, k in zip(groups, counts, strict=True):
        for rect, r in group:
            base = len(out)
            out.extend(split_band(rect, k, r, edges, p, size))
            below.extend(base + n + 1 if n % r < r - 1 else None for n in range(len(out) - base))
    return rest, out, below


def _on_cards(quad: np.ndarray, visible: tuple[float, float], mask: np.ndarray) -> bool:
    """Whether the top-left ``visible`` part of ``quad`` (top-down px) lies on cards, not felt."""
    H, W = mask.shape
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 1, [W, H])
    if x1 <= x0 or y1 <= y0:
        return False
    shown = _visible_piece(quad, visible, (x0, y0), (y1 - y0, x1 - x0))
    return cv2.countNonZero(shown & mask[y0:y1, x0:x1]) >= 0.85 * cv2.countNonZero(shown)


def _last_in_column(banded: list[tuple[np.ndarray, bool, tuple[float, float]]],
                    below: list[int | None], mask: np.ndarray, p: float,
                    size: tuple[float, float]) -> list[tuple[float, float]]:
    """The part of each banded card that shows: a card with felt where the next row's card
    should lie is the last of a short column, so its whole lower part shows. WHY: columns fill
    from the top, and a short one (the card selection's lone card, column 1 of 104) would
    otherwise lend its lower part to a phantom card in the next row, which then passes the
    felt test on the lone card's own print."""
    out = [v for _, _, v in banded]
    for i in range(len(banded) - 1, -1, -1):
        j = below[i]
        if j is None or _on_cards(banded[j][0], out[j], mask):
            continue
        out[i] = (out[i][0], size[1] * p)
    return out


def _unstack(cnt: np.ndarray, columns: float, rows: int, p: float, size: tuple[float, float]
             ) -> list[tuple]:
    """Bands that touch one another form one blob: cut it across into the fewest bands whose
    columns are at least ``MIN_PITCH_MM`` apart (no table fans closer than a corner index), at
    the emptiest lines between them. Returns the bands' minAreaRects."""
    x, y, w, h = cv2.boundingRect(cnt)
    card_w, card_h = size[0] * p, size[1] * p
    count = 1
    for count in range(1, 8):
        per_band = -(-columns // count)
        pitch = (w - card_w) / max(per_band - 1, 1)
        band_h = h / count
        if pitch >= MIN_PITCH_MM * p or band_h < card_h * 1.6:
            break
    blob = np.zeros((h, w), np.uint8)
    cv2.drawContours(blob, [cnt], -1, 255, -1, offset=(-x, -y))
    if count == 1:
        pieces = _contours(_trimmed(blob, card_w, card_h, p))
        return [cv2.minAreaRect(max(pieces, key=cv2.contourArea) + [x, y])] if pieces \
            else [cv2.minAreaRect(cnt)]
    fill = blob.sum(axis=1).astype(np.float64)
    cuts = [0]
    for k in range(1, count):
        t = round(k * h / count)
        lo, hi = max(cuts[-1] + 1, t - int(0.15 * h / count)), min(h - 1, t + int(0.15 * h / count))
        cuts.append(lo + int(np.argmin(fill[lo:hi + 1])) if hi > lo else t)
    cuts.append(h)
    out = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        part = np.zeros_like(blob)
        part[a:b] = blob[a:b]
        pieces = _contours(_trimmed(part, card_w, card_h, p))
        if pieces:
            biggest = max(pieces, key=cv2.contourArea)
            out.append(cv2.minAreaRect(biggest + [x, y]))
    return out


def _trimmed(part: np.ndarray, card_w: float, card_h: float, p: float) -> np.ndarray:
    """A band's blob without what sticks out of it: its extent is where it is half a card
    tall (across) and two cards wide (down), give or take the corners of a card turned a few
    degrees.

    WHY: bands laid a few millimetres apart touch here and there, so a cut between them
    leaves the foot of one band's cards in the next band's part, and a card laid below a
    column (a row more than the runner expects) sticks out of its band; either would
    stretch the band and shift every column or row of its comb. What is trimmed off is
    left unexplained, for :func:`_unexpected_cards` to look at.
    """
    corner = int(round(BAND_CORNER_MM * p))
    out = part.copy()
    tall = np.flatnonzero(cv2.morphologyEx(part, cv2.MORPH_OPEN, np.ones(
        (int(card_h / 2) | 1, 1), np.uint8)).any(axis=0))
    if len(tall):
        out[:, :max(0, tall[0] - corner)] = 0
        out[:, tall[-1] + corner + 1:] = 0
    if len(tall) and tall[-1] - tall[0] > 3 * card_w:  # a band of a few columns: leave it
        wide = np.flatnonzero(cv2.morphologyEx(out, cv2.MORPH_OPEN, np.ones(
            (1, int(2 * card_w) | 1), np.uint8)).any(axis=1))
        if len(wide):
            out[:max(0, wide[0] - corner)] = 0
            out[wide[-1] + corner + 1:] = 0
    return out


def _across(rect: tuple) -> float:
    """The extent of a minAreaRect across the mat (its side nearer the x axis)."""
    (_, _), (w, h), ang = rect
    a = np.deg2rad(ang)
    return float(w if abs(np.cos(a)) >= abs(np.sin(a)) else h)


def _down(rect: tuple) -> float:
    """The extent of a minAreaRect down the mat."""
    (_, _), (w, h), ang = rect
    a = np.deg2rad(ang)
    return float(h if abs(np.cos(a)) >= abs(np.sin(a)) else w)


def outline_strength(quad: np.ndarray, edges: _Edges, size: tuple[float, float],
                     p: float) -> float:
    """How strongly a card's outline shows at ``quad`` (see :func:`fit_outline`)."""
    return fit_outline(quad, edges, size, p, 1.0, (0.0,))[1]


def fit_outline(quad: np.ndarray, edges: _Edges, size: tuple[float, float], p: float,
                reach_mm: float = REFINE_MM, turns: tuple[float, ...] = REFINE_TURNS
                ) -> tuple[np.ndarray, float]:
    """A whole-card quad (top-down px) moved and turned onto the card's own outline, and the
    outline's strength there (grey levels per pixel summed over two pairs of sides).
    See :func:`_fit_outline`."""
    quad, score, _ = _fit_outline(quad, edges, size, p, reach_mm, turns)
    return quad, score


def outline_size(quad: np.ndarray, edges: _Edges, size: tuple[float, float], p: float
                 ) -> tuple[tuple[float, float], float]:
    """The size (mm: across, down) of the card at ``quad`` (top-down px) measured between its
    own outline's sides, looked for within ``SIZE_SLACK_MM`` of ``size``, and the outline's
    strength (:func:`fit_outline`).

    WHY: a card's blob takes in its soft shadow and the blur around it, a millimetre or two on
    one side; over a table of single cards the median evens that out, but a table of touching
    cards leaves two or three single ones, and their blobs measured a UNO card 60 × 91 mm
    instead of 56 × 87 (tuning seed 16,000,027), which put every card cut out of the block
    3.5 mm off (three misread, one missed).
    """
    _, score, span = _fit_outline(quad, edges, size, p, SIZE_SLACK_MM, (0.0,), SIZE_SLACK_MM)
    return (span[0] / p, span[1] / p), score


def _fit_outline(quad: np.ndarray, edges: _Edges, size: tuple[float, float], p: float,
                 reach_mm: float = REFINE_MM, turns: tuple[float, ...] = REFINE_TURNS,
                 slack_mm: float = REFINE_SLACK_MM
                 ) -> tuple[np.ndarray, float, tuple[float, float]]:
    """:func:`fit_outline`, and how far apart (px: across, down) the sides it found lie (the
    far side within ``slack_mm`` of ``size`` beyond the near one).

    WHY: a piece cut out of touching cards is only where the cut put it; a blob that took in a
    glare patch or a neighbour's sliver shifts every piece by millimetres, and a crop that far
    off is read as the wrong card. The card's size is known (``size``, mm, measured on the
    frame's single cards), so each side is looked for where the image turns bright going into
    the card (felt, a gap or a neighbour's dark edge outside, the white border inside); the
    card's own printed field edges turn the other way and do not pull it. Left and right (top
    and bottom) are placed together, a card width (height) apart.
    """
    gray = edges.gray
    rect = cv2.minAreaRect(np.asarray(quad, np.float32))
    (cx, cy), (w, h), ang = rect
    if w > h:
        ang -= 90.0
    cw, ch = size[0] * p, size[1] * p
    r = reach_mm * p
    us = np.arange(-cw / 2 - r - 1, cw / 2 + r + 2, dtype=np.float32)
    vs = np.arange(-ch / 2 - r - 1, ch / 2 + r + 2, dtype=np.float32)
    # along each side only every third pixel of its middle 70% is read: the side's profile
    # across needs every pixel, its average along does not
    along_u = np.arange(-0.35 * cw, 0.35 * cw, 3.0, dtype=np.float32)
    along_v = np.arange(-0.35 * ch, 0.35 * ch, 3.0, dtype=np.float32)
    slack = int(round(slack_mm * p))
    # bright-in outline, dark-in outline: (score, centre x, centre y, angle, sides' spans)
    best = [(-np.inf, float(cx), float(cy), ang, (cw, ch))] * 2

    def sample(u: np.ndarray, v: np.ndarray, ux: np.ndarray, uy: np.ndarray) -> np.ndarray:
        """The grey view on the grid ``v`` × ``u`` of the card's own axes."""
        px = (cx + u[None, :] * ux[0] + v[:, None] * uy[0]).astype(np.float32)
        py = (cy + u[None, :] * ux[1] + v[:, None] * uy[1]).astype(np.float32)
        return cv2.remap(gray, px, py, cv2.INTER_LINEAR).astype(np.float32)

    for turn in turns:
        a = np.deg2rad(ang + turn)
        ux = np.array([np.cos(a), np.sin(a)], np.float32)
        uy = np.array([-np.sin(a), np.cos(a)], np.float32)
        across = sample(us, along_v, ux, uy)
        down = sample(along_u, vs, ux, uy)
        du = np.zeros_like(across)  # brightening along the card's width
        du[:, 1:-1] = across[:, 2:] - across[:, :-2]
        dv = np.zeros_like(down)  # brightening down the card
        dv[1:-1] = down[2:] - down[:-2]
        for dark, sign in enumerate((1.0, -1.0)):
            into_l = np.maximum(sign * du, 0).mean(axis=0)
            into_r = np.maximum(-sign * du, 0).mean(axis=0)
            into_t = np.maximum(sign * dv, 0).mean(axis=1)
            into_b = np.maximum(-sign * dv, 0).mean(axis=1)
            # both sides of a pair must be edges (the geometric mean): one strong line alone
            # (a neighbour's printed border) does not place a card; the card's size is known
            # only to a millimetre or two, so the far side may sit a little nearer or farther
            (l0, l1, sx), (t0, t1, sy) = (_sides(into_l, into_r, r + 1, cw, r, slack),
                                          _sides(into_t, into_b, r + 1, ch, r, slack))
            if sx + sy > best[dark][0]:
                du_c, dv_c = (l0 + l1) / 2 - (r + 1) - cw / 2, (t0 + t1) / 2 - (r + 1) - ch / 2
                c = np.array([cx, cy]) + ux * du_c + uy * dv_c
                best[dark] = (sx + sy, float(c[0]), float(c[1]), ang + turn,
                              (l1 - l0, t1 - t0))
    # a dark card (a black deck, a dark back) turns darker going in: its outline counts only
    # where no bright-in outline is there to find, so a white-bordered card's printed field
    # (darker inside its border) never pulls its quad
    bright, dark_in = best
    dark = bright[0] < DARK_OUTLINE_BELOW and dark_in[0] > max(bright[0], OUTLINE_MIN)
    score, x, y, a_deg, span = dark_in if dark else bright
    if score <= 0:  # no outline anywhere near: nothing to go by
        return np.asarray(quad, np.float32), 0.0, (cw, ch)
    # centred between the sides found, at the frame's card size: a crop of the same size
    # frame after frame, so that an unchanged card's reading is reused
    return _rect_quad(((x, y), (cw, ch), a_deg)), float(score), span


def _sides(near: np.ndarray, far: np.ndarray, nominal: float, length: float, reach: float,
           slack: int) -> tuple[float, float, float]:
    """The best pair of opposite sides: ``near`` within ``reach`` of ``nominal``, ``far``
    ``length`` ± ``slack`` beyond it. Returns their positions and the pair's score."""
    shifts = np.arange(-int(reach), int(reach) + 1)
    lo = np.clip(np.round(nominal + shifts).astype(int), 0, len(near) - 1)
    spread = np.arange(-slack, slack + 1)
    hi = np.clip(lo[:, None] + int(round(length)) + spread[None, :], 0, len(far) - 1)
    score = np.sqrt(near[lo][:, None] * far[hi])
    i, j = np.unravel_index(int(np.argmax(score)), score.shape)
    return float(lo[i]), float(hi[i, j]), float(score[i, j])


def _layout_angle(quads: list[np.ndarray]) -> float:
    """The cards' common turn on the mat (degrees, within ±45): the median of the single
    cards' own turns (0 when there are none)."""
    if not quads:
        return 0.0
    turns = [(cv2.minAreaRect(np.asarray(q, np.float32))[2] + 45.0) % 90.0 - 45.0
             for q in quads]
    return float(np.median(turns))


def place_cards(cnt: np.ndarray, have: list[np.ndarray], gray: np.ndarray,
                size: tuple[float, float], p: float, angle: float) -> list[np.ndarray]:
    """Whole cards inside the part of a blob (contour ``cnt``, top-down px) that the quads
    ``have`` leave unexplained, found by their outlines; returns their quads.

    WHY: cards laid touching in a grid under uneven light merge into blobs of any shape (an L,
    a glare halo around one card, a block of six) that cutting along dark lines does not
    always separate. A card is a rectangle of a known size at the layout's angle whose four
    sides are edges where the image turns bright going into it; the best such rectangle that
    lies on unexplained card pixels is taken, then the next, until too little is left for
    another card. :func:`fit_outline` then fits each one to its own outline.
    """
    cw, ch = size[0] * p, size[1] * p
    area = cw * ch
    x, y, w, h = cv2.boundingRect(cnt)
    m = int(round(REFINE_MM * p))
    H, W = gray.shape
    x0, y0, x1, y1 = max(0, x - m), max(0, y - m), min(W, x + w + m), min(H, y + h + m)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [cnt], -1, 255, -1, offset=(-x0, -y0))
    rest = blob.copy()
    for q in have:
        cv2.fillConvexPoly(rest, np.round(q - [x0, y0]).astype(np.int32), 0)
    if cv2.countNonZero(rest) < PLACE_LEFT * area:
        return []
    # turn the region so the cards' sides run along the axes
    centre = ((x1 - x0) / 2, (y1 - y0) / 2)
    M = cv2.getRotationMatrix2D(centre, angle, 1.0)
    roi = cv2.warpAffine(gray[y0:y1, x0:x1], M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
    # the search runs at a coarser scale (fit_outline restores the precision): a block of
    # 40 touching cards costs tens of milliseconds, not hundreds
    f = PLACE_SCALE
    roi = cv2.resize(roi, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)

    def turned(a: np.ndarray) -> np.ndarray:
        """A mask of the region turned and scaled like ``roi``."""
        a = cv2.warpAffine(a, M, (x1 - x0, y1 - y0), flags=cv2.INTER_NEAREST)
        return cv2.threshold(cv2.resize(a, (roi.shape[1], roi.shape[0]),
                                        interpolation=cv2.INTER_AREA), 127, 255,
                             cv2.THRESH_BINARY)[1]

    rest = turned(rest)
    cw, ch, area = cw * f, ch * f, area * f * f
    gx = cv2.Sobel(roi, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(roi, cv2.CV_32F, 0, 1, ksize=3)
    kh, kw = max(3, int(0.7 * ch)) | 1, max(3, int(0.7 * cw)) | 1
    slack = 2 * int(round(REFINE_SLACK_MM * p * f)) + 1
    hw, hh = int(round(cw / 2)), int(round(ch / 2))

    def shifted(a: np.ndarray, dx: int, dy: int) -> np.ndarray:
        """``a`` moved so that out[y, x] = a[y + dy, x + dx] (zero outside)."""
        out = np.zeros_like(a)
        hs, ws = a.shape
        if abs(dx) >= ws or abs(dy) >= hs:
            return out
        out[max(0, -dy):min(hs, hs - dy), max(0, -dx):min(ws, ws - dx)] = \
            a[max(0, dy):min(hs, hs + dy), max(0, dx):min(ws, ws + dx)]
        return out

    def outline_score(across: np.ndarray, down: np.ndarray) -> np.ndarray:
        """A card's outline strength at each centre: its near sides where ``across`` and
        ``down`` (the gradients; negated: dark going in) brighten, its far sides, within
        ``slack``, where they darken; both sides of each pair (the geometric mean)."""
        near_x = cv2.boxFilter(np.maximum(across, 0), -1, (1, kh))
        far_x = cv2.dilate(cv2.boxFilter(np.maximum(-across, 0), -1, (1, kh)),
                           np.ones((1, slack)))
        near_y = cv2.boxFilter(np.maximum(down, 0), -1, (kw, 1))
        far_y = cv2.dilate(cv2.boxFilter(np.maximum(-down, 0), -1, (kw, 1)),
                           np.ones((slack, 1)))
        return (np.sqrt(shifted(near_x, -hw, 0) * shifted(far_x, hw, 0))
                + np.sqrt(shifted(near_y, 0, -hh) * shifted(far_y, 0, hh)))

    score = outline_score(gx, gy)
    inv = cv2.invertAffineTransform(M)
    out: list[np.ndarray] = []
    first = None
    box = (int(round(cw)) | 1, int(round(ch)) | 1)
    whole = None  # where a card would lie on the blob's card pixels (for dark cards)
    while cv2.countNonZero(rest) >= PLACE_LEFT * area:
        inside = cv2.boxFilter(rest.astype(np.float32) / 255.0, -1, box)
        ok = inside >= PIECE_ON_CARD
        if whole is not None:
            ok &= whole >= PLACE_DARK_ON_CARD
        cand = np.where(ok, score, 0.0)
        k = int(np.argmax(cand))
        cy, cx = divmod(k, cand.shape[1])
        best = float(cand[cy, cx])
        if best < PLACE_MIN_EDGE or (first is not None and best < PLACE_WEAKEST * first):
            if whole is not None:
                break
            # what the white-bordered cards leave may be dark cards (a black deck), whose
            # outline turns darker going in: looked for only now, on what is left, so that
            # the dark field inside a white border never places a card; and only on card
            # pixels all over (a neighbour's bright edge across a felt gap is a stronger
            # far side than the dark card's own)
            whole = cv2.boxFilter(turned(blob).astype(np.float32) / 255.0, -1, box)
            first = None
            score = outline_score(-gx, -gy)
            continue
        first = best if first is None else first
        rect = np.float32([[cx - cw / 2, cy - ch / 2], [cx + cw / 2, cy - ch / 2],
                           [cx + cw / 2, cy + ch / 2], [cx - cw / 2, cy + ch / 2]])
        cv2.fillConvexPoly(rest, np.round(rect).astype(np.int32), 0)
        back = (rect / f) @ inv[:, :2].T + inv[:, 2]
        out.append((back + [x0, y0]).astype(np.float32))
    return out


def _unexplained(cnt: np.ndarray, quads: list[np.ndarray], p: float) -> int:
    """Pixels of the blob ``cnt`` that none of ``quads`` covers and that could be part of a
    card: what is left is opened by a square :data:`STRIP_MIN_MM` wide.

    WHY: cards laid a centimetre apart in dark light merge into one blob through the shadows
    between them; once every card is placed, those gaps are all that is left, thin lines that
    add up to more than half a card's area over a block of six. No card, nor the part of one
    that shows, is that thin.
    """
    x, y, w, h = cv2.boundingRect(cnt)
    rest = np.zeros((h, w), np.uint8)
    cv2.drawContours(rest, [cnt], -1, 255, -1, offset=(-x, -y))
    for q in quads:
        cv2.fillConvexPoly(rest, np.round(q - [x, y]).astype(np.int32), 0)
    return cv2.countNonZero(cv2.morphologyEx(rest, cv2.MORPH_OPEN, _kernel(STRIP_MIN_MM, p)))


def _card_sized(quad: np.ndarray, size: tuple[float, float], p: float) -> bool:
    """Whether a quad (top-down px) has the frame's card size to within ``REFINE_SLACK_MM``."""
    dims = sorted(cv2.minAreaRect(np.asarray(quad, np.float32))[1])
    return (abs(dims[0] / p - size[0]) <= REFINE_SLACK_MM
            and abs(dims[1] / p - size[1]) <= REFINE_SLACK_MM)


def _detail(quad: np.ndarray, gray: np.ndarray) -> float:
    """Fine detail (mean absolute Laplacian) inside a quad of the top-down grey view.

    WHY: every card face and back carries print (edges, indices, patterns); glare on felt or a
    smooth sleeve that the colour test let through does not. Compared with the frame's other
    cards (:data:`DETAIL_SHARE` of their median), so that sensor noise and blur cancel out.
    """
    roi = _quad_roi(quad, gray.shape)
    if roi is None:
        return 0.0
    rows, cols, piece = roi
    lap = cv2.convertScaleAbs(cv2.Laplacian(gray[rows, cols], cv2.CV_16S))
    return float(cv2.mean(lap, piece)[0])


def _quad_roi(quad: np.ndarray, shape: tuple[int, ...]
              ) -> tuple[slice, slice, np.ndarray] | None:
    """The bounding box of a quad (top-down px) clipped to an image of ``shape``, as row and
    column slices, with the quad filled in it (255); None when the quad lies outside."""
    H, W = shape[:2]
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 1, [W, H])
    if x1 <= x0 or y1 <= y0:
        return None
    piece = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(piece, np.round(quad - [x0, y0]).astype(np.int32), 255)
    return slice(y0, y1), slice(x0, x1), piece


def _felt_chroma(chroma: np.ndarray, zones: np.ndarray, mask: np.ndarray) -> float:
    """Median chroma of the felt (in ``zones``, not card in ``mask``) in the top-down view,
    read on every 4th pixel (only those are masked: a sixteenth of the work)."""
    values = chroma[::4, ::4][(zones[::4, ::4] & ~mask[::4, ::4]) > 0]
    return float(np.median(values)) if values.size else 0.0


def felt_tinted(maps: ColourMaps, felt_chroma: float) -> np.ndarray:
    """255 where the top-down view (its :func:`colour_maps`) is felt-tinted: the felt's violet
    hue with more than :data:`FELT_TINT` of the felt's chroma ``felt_chroma`` (none when no
    felt was seen: nothing to compare with).

    WHY: a glare patch on the felt is a smooth, bright, card-sized blob; the mask takes its
    washed-out middle for card, and a patch lying against a zone line or a card borrows that
    line as an outline, so neither the outline nor (in a frame of plain backs) the print tells
    it from a face-down card. Its colour does: glare adds white light to the felt, which keeps
    its hue and chroma however pale, while cards print little violet (:func:`card_mask`).
    Measured against the frame's own felt, so that a violet colour cast on a card's white
    border does not count. A blue back under a violet cast comes close: ``locate_cards`` asks
    for a card's outline (``PLACE_MIN_EDGE``, strong on any card's white border) to be missing
    too before it drops a blob as glare.
    """
    if felt_chroma <= 0:
        return np.zeros(maps.chroma.shape, np.uint8)
    hue = cv2.inRange(maps.hue, 122, 165)  # any saturation, any value
    return hue & cv2.compare(maps.chroma, FELT_TINT * felt_chroma, cv2.CMP_GT)


def _without_glare(cnt: np.ndarray, tinted: np.ndarray, edges: _Edges, p: float
                   ) -> list[np.ndarray] | None:
    """The blob ``cnt`` (top-down px) without the glare on the felt around its cards: its
    :func:`felt_tinted` pixels that join the felt outside it through felt-tinted pixels with
    no sharp edge (below ``GLARE_EDGE``) between.

    WHY: a glare patch washes the felt out to a pale violet that :func:`card_mask` takes for
    card, so a card lying in it (a discard thrown at any angle, a column's foot) grows into a
    blob bigger than a card, which is then cut into pieces of no card (4 of 5 UNO layouts
    read wrong on tuning seeds 16,000,000+). Glare keeps the felt's hue and chroma, the cards
    in it do not; only tinted pixels reached from the felt are taken away, so that violet print
    enclosed by a card's border stays. A blob that is more than ``GLARE_MAX_SHARE`` such
    pixels is cards under a violet cast, not glare: it is kept whole. Returns None when
    nothing was taken away.
    """
    x, y, w, h = cv2.boundingRect(cnt)
    H, W = tinted.shape
    x0, y0, x1, y1 = max(0, x - 1), max(0, y - 1), min(W, x + w + 1), min(H, y + h + 1)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [cnt], -1, 255, -1, offset=(-x0, -y0))
    tint = tinted[y0:y1, x0:x1]
    if cv2.countNonZero(tint & blob) < GLARE_MIN_MM2 * p * p:
        return None
    # a card's outline is a sharp step, glare's fringe a soft one: only the smooth part of the
    # tint joins felt and glare, so a card whose white a violet cast tints stays apart
    roi = edges.gray[y0:y1, x0:x1]  # the blob's own gradient: a whole view's costs 10 ms
    grad = np.abs(cv2.Sobel(roi, cv2.CV_32F, 1, 0, ksize=3)) + np.abs(
        cv2.Sobel(roi, cv2.CV_32F, 0, 1, ksize=3))
    smooth = tint & cv2.compare(grad, GLARE_EDGE, cv2.CMP_LT)
    _, labels = cv2.connectedComponents(smooth, connectivity=4)
    outside = np.unique(labels[(smooth > 0) & (blob == 0)])
    glare = np.isin(labels, outside[outside > 0]) & (blob > 0)
    n_glare = np.count_nonzero(glare)
    if not GLARE_MIN_MM2 * p * p <= n_glare <= GLARE_MAX_SHARE * cv2.countNonZero(blob):
        return None
    rest = blob.copy()
    rest[glare] = 0
    rest = _fill_holes(cv2.morphologyEx(rest, cv2.MORPH_OPEN, _kernel(2.5, p)))
    return [c + [x0, y0] for c in _contours(rest)]


def felt_share(quad: np.ndarray, tinted: np.ndarray) -> float:
    """Share of a quad (top-down px) that is :func:`felt_tinted` (``tinted``, the whole view's)."""
    roi = _quad_roi(quad, tinted.shape)
    return 0.0 if roi is None else _roi_share(roi, tinted)


def _roi_share(roi: tuple[slice, slice, np.ndarray], plane: np.ndarray) -> float:
    """Share of a quad (its :func:`_quad_roi`) that is set (> 0) in ``plane``."""
    rows, cols, piece = roi
    return cv2.countNonZero(plane[rows, cols] & piece) / max(cv2.countNonZero(piece), 1)


def _unexplained_regions(mask: np.ndarray, explained: np.ndarray, p: float
                         ) -> list[np.ndarray]:
    """Contours (top-down px) of the regions of card pixels (``mask``) that no card found
    (``explained``) covers, bigger than a quarter of a card: a hand, or a card the prior did
    not expect. Made once for :func:`_unexpected_cards` and :func:`_obstructions` alike."""
    rest = cv2.subtract(mask, cv2.dilate(explained, _kernel(3.5, p)))
    rest = cv2.morphologyEx(rest, cv2.MORPH_OPEN, _kernel(3.5, p))
    return [cnt for cnt in _contours(rest) if cv2.contourArea(cnt) > 0.25 * 57.0 * 88.0 * p * p]


def _unexpected_cards(regions: list[np.ndarray], mask: np.ndarray, edges: _Edges,
                      size: tuple[float, float], p: float, angle: float,
                      cards: list[np.ndarray]) -> list[np.ndarray]:
    """Whole cards (top-down quads) that explain some of the ``regions`` that the found cards
    leave unexplained (:func:`_unexplained_regions`).

    WHY: the runner's prior says how many rows to split the bands into; a card laid at a
    column's foot beyond them (a row too many) lies on top of the card above, whole, with only
    its foot unexplained (:func:`_trimmed` keeps it out of the band). Taken for a hand, it would
    stop the still table from ever being committed, and the mistake from being reported. Such
    a card is found by its outline (:func:`fit_outline`, as strong as a placed card's), on card
    pixels all over, carrying print; a hand's soft shading and smooth skin have neither. Only a
    strip wider than tall and smaller than a card is looked at: a hand reaching in is bigger.
    ``cards`` are the quads found (top-down px): the print a card carries is measured on them.
    """
    cw, ch = size[0] * p, size[1] * p
    out: list[np.ndarray] = []
    printed: list[float] = []  # the median print of ``cards``, measured on first need
    for cnt in regions:
        x, y, bw, bh = cv2.boundingRect(cnt)
        if bw < bh or bw > cw + REFINE_MM * p or bh > ch:
            continue
        # lower rows lie over upper ones: the strip is the foot of a card reaching up over its
        # column
        anchor = (x + bw / 2, y + bh - ch / 2)
        quad, score = fit_outline(_rect_quad((anchor, (cw, ch), angle)), edges, size, p)
        if score < PLACE_MIN_EDGE:
            continue
        if not printed:
            printed.append(float(np.median([_detail(q, edges.gray) for q in cards[:40]]))
                           if cards else 0.0)
        if _detail(quad, edges.gray) < DETAIL_SHARE * printed[0]:
            continue
        piece = np.zeros_like(mask)
        cv2.fillConvexPoly(piece, np.round(quad).astype(np.int32), 255)
        strip = np.zeros_like(mask)
        cv2.drawContours(strip, [cnt], -1, 255, -1)
        if cv2.countNonZero(piece & mask) < PIECE_ON_CARD * cv2.countNonZero(piece) \
                or cv2.countNonZero(strip & piece) < 0.8 * cv2.countNonZero(strip):
            continue
        out.append(quad)
    return out


def _obstructions(regions: list[np.ndarray], p: float) -> tuple[np.ndarray, ...]:
    """Boxes (mm: x0, y0, x1, y1) of the large non-felt regions that no card explains
    (:func:`_unexplained_regions`): a hand."""
    boxes = []
    for cnt in regions:
        x, y, w, h = cv2.boundingRect(cnt)
        boxes.append(np.array([x, y, x + w, y + h], np.float32) / p)
    return tuple(boxes)


def crop_card(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = (64, 96),
              interpolation: int = cv2.INTER_LINEAR) -> np.ndarray:
    """The card inside ``quad`` (canonical order) rectified to a portrait ``size`` = (w, h)."""
    w, h = size
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
    return cv2.warpPerspective(image, M, (w, h), flags=interpolation,
                               borderMode=cv2.BORDER_REPLICATE)
