"""Card localisation: every card lying in a zone of the mat, as a quadrilateral in image pixels.

WHY classical and top-down: once the mat's homography is known, every card is a rectangle of a
known size in millimetres lying on felt of a known colour. Segmenting "not felt" in the rectified
view and fitting rectangles finds cards of any face (UNO, standard, backs) with no training, in a
few milliseconds, and the fit gives the exact quad that the classifier's crop needs. A learned
detector here would cost hours of CPU training per class set and give only axis-aligned boxes.

Blobs that are bigger than one card (cards touching, or a fanned column where each card shows
only its top strip) are split along their long axis where the image has card edges: every card's
top edge draws a line (its edge and shadow) across the card below.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import TableGeometry
from vision.synth.scenes import canonical_quad

TOPDOWN_PX_PER_MM = 2.0
CARD_W_MM = (44.0, 72.0)
CARD_H_MM = (74.0, 100.0)
STRIP_MIN_MM = 12.0
"""The smallest visible strip of a covered card in a fanned column that still counts as a card."""


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


def card_mask(top: np.ndarray) -> np.ndarray:
    """255 where the top-down view is card rather than felt.

    The felt is violet, a hue no card prints; a card is anything else — its white border, a face
    of any colour, a dark back. The felt's brightness is estimated locally so that black cards
    (far darker than the felt around them) count as cards while soft shadows do not.
    """
    hsv = cv2.cvtColor(top, cv2.COLOR_BGR2HSV)
    h, s, v = hsv[..., 0], hsv[..., 1].astype(np.float32), hsv[..., 2].astype(np.float32)
    violet = (h >= 122) & (h <= 165) & (s > 80)
    felt_v = np.where(violet, v, 0).astype(np.float32)
    weight = violet.astype(np.float32)
    k = (0, 0)
    sigma = 40.0
    local_v = cv2.GaussianBlur(felt_v, k, sigma) / np.maximum(cv2.GaussianBlur(weight, k, sigma),
                                                               1e-3)
    local_v = np.maximum(local_v, 20.0)
    felt = violet & (v > local_v * 0.4)
    mask = np.where(felt, 0, 255).astype(np.uint8)
    return mask


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, -1)
    return out


def _rect_quad(rect: tuple) -> np.ndarray:
    return cv2.boxPoints(rect).astype(np.float32)


def _split_long(rect: tuple, edges: np.ndarray, p: float) -> list[tuple[np.ndarray, bool]]:
    """Split an over-long blob (a fanned column) into card quads (top-down px) by its edges."""
    (cx, cy), (w, h), ang = rect
    if w > h:  # make the long axis "h"
        w, h, ang = h, w, ang - 90.0
    a = np.deg2rad(ang)
    ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    if uy[1] < 0:  # the long axis points down the mat
        uy, ux = -uy, -ux
    card_h = float(np.clip(w * 88.0 / 57.0, CARD_H_MM[0] * p, CARD_H_MM[1] * p))
    top = np.array([cx, cy]) - uy * h / 2
    # profile of edge strength across the column, sampled along the long axis
    n = int(h)
    ts = np.arange(n, dtype=np.float32)
    offs = np.linspace(-0.35, 0.35, 15, dtype=np.float32) * w
    xs = top[0] + ts[:, None] * uy[0] + offs[None, :] * ux[0]
    ys = top[1] + ts[:, None] * uy[1] + offs[None, :] * ux[1]
    prof = cv2.remap(edges, xs.astype(np.float32), ys.astype(np.float32), cv2.INTER_LINEAR)
    prof = np.median(prof, axis=1)
    prof = np.convolve(prof, np.ones(3) / 3, mode="same")
    min_gap = STRIP_MIN_MM * p
    limit = h - card_h + 0.5 * min_gap  # the last card is whole: no top edge below this
    cuts: list[float] = [0.0]
    order = np.argsort(-prof)
    thr = max(float(np.percentile(prof, 60)) * 2.0, 8.0)
    for t in order:
        if prof[t] < thr:
            break
        if t < min_gap or t > limit or any(abs(t - c) < min_gap for c in cuts):
            continue
        cuts.append(float(t))
    cuts.sort()
    if h - cuts[-1] > card_h * 1.25:  # an edge was missed: fall back to even steps
        k = max(1, round((h - card_h) / (card_h * 0.3)))
        step = (h - card_h) / k
        cuts = [i * step for i in range(k + 1)]
    out = []
    for i, t0 in enumerate(cuts):
        c = top + uy * (t0 + card_h / 2)
        r = ((float(c[0]), float(c[1])), (float(w), card_h), float(np.rad2deg(np.arctan2(
            ux[1], ux[0]))))
        out.append((_rect_quad(r), i < len(cuts) - 1))
    return out


def _split_wide(rect: tuple, p: float) -> list[np.ndarray]:
    """Cards touching side by side (or end to end): cut a blob into whole-card rectangles."""
    (cx, cy), (w, h), ang = rect
    a = np.deg2rad(ang)
    ux, uy = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    nw = max(1, round(w / (60.0 * p))) if w < h * 1.2 or h < CARD_H_MM[1] * p else 1
    nh = max(1, round(h / (60.0 * p))) if h < w * 1.2 or w < CARD_H_MM[1] * p else 1
    # choose the split that makes portrait/landscape card-shaped pieces
    best = None
    for kw in {nw, max(1, round(w / (88.0 * p)))}:
        for kh in {nh, max(1, round(h / (88.0 * p)))}:
            pw, ph = w / kw, h / kh
            short, long_ = min(pw, ph), max(pw, ph)
            err = abs(short / p - 60.0) / 60.0 + abs(long_ / p - 87.5) / 87.5
            if best is None or err < best[0]:
                best = (err, kw, kh)
    assert best is not None
    _, kw, kh = best
    pw, ph = w / kw, h / kh
    out = []
    for i in range(kw):
        for j in range(kh):
            c = np.array([cx, cy]) + ux * (-w / 2 + (i + 0.5) * pw) + uy * (-h / 2 + (j + 0.5) * ph)
            out.append(_rect_quad(((float(c[0]), float(c[1])), (pw, ph), ang)))
    return out


def _contours(mask: np.ndarray) -> list[np.ndarray]:
    return list(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0])


def _classify(cnt: np.ndarray, p: float, edges: np.ndarray,
              found: list[tuple[np.ndarray, bool]], grow: float = 0.0, split: bool = False) -> bool:
    """Add the card(s) this blob is to ``found``; False if it is bigger than a card (unsplit)."""
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
    if narrow and long_ > CARD_H_MM[1] and fill > 0.8:
        found.extend(_split_long(rect, edges, p))
        return True
    if short > CARD_W_MM[1] and fill > (0.7 if split else 0.88):
        found.extend((q, False) for q in _split_wide(rect, p))
        return True
    return split


def locate_cards(image: np.ndarray, geometry: TableGeometry,
                 p: float = TOPDOWN_PX_PER_MM) -> list[Located]:
    """Every card lying in a zone of the mat: whole-card quads in image pixels and mm."""
    mat = geometry.mat
    T = geometry.topdown_transform(p)
    top = cv2.warpPerspective(image, T, (round(mat.width * p), round(mat.height * p)),
                              flags=cv2.INTER_LINEAR)
    zones = np.zeros(top.shape[:2], np.uint8)
    for z in mat.zones:
        cv2.rectangle(zones, (round(z.x * p), round(z.y * p)),
                      (round((z.x + z.w) * p), round((z.y + z.h) * p)), 255, -1)
    mask = card_mask(top) & zones
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    mask = _fill_holes(mask)
    gray = cv2.cvtColor(top, cv2.COLOR_BGR2GRAY)
    edges = np.abs(cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)) + np.abs(
        cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3))
    found: list[tuple[np.ndarray, bool]] = []
    for cnt in _contours(mask):
        if _classify(cnt, p, edges, found):
            continue
        # bigger than a card: cards touch. Card edges and shadows are thin dark lines, which
        # black-hat picks out of the bright cards; cut the blob along them and try again.
        x, y, w, h = cv2.boundingRect(cnt)
        blob = np.zeros((h + 2, w + 2), np.uint8)
        cv2.drawContours(blob, [cnt], -1, 255, -1, offset=(1 - x, 1 - y))
        roi = gray[max(0, y - 1):y + h + 1, max(0, x - 1):x + w + 1]
        if roi.shape != blob.shape:
            continue
        lines = cv2.morphologyEx(roi, cv2.MORPH_BLACKHAT, np.ones((7, 7), np.uint8))
        blob[lines > 18] = 0
        blob = cv2.erode(blob, np.ones((3, 3), np.uint8))
        blob = _fill_holes(cv2.morphologyEx(blob, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8)))
        for part in _contours(blob):
            _classify(part + [x - 1, y - 1], p, edges, found, grow=2.0, split=True)
    out = []
    for q_top, covered in found:
        q_mm = q_top / p
        centre = q_mm.mean(axis=0)
        zone = mat.zone_of(centre)
        if zone is None:
            continue
        q_img = canonical_quad(geometry.to_image(q_mm))
        out.append(Located(q_img, canonical_quad(q_mm), zone, covered))
    return out


def crop_card(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = (64, 96)) -> np.ndarray:
    """The card inside ``quad`` (canonical order) rectified to a portrait ``size`` = (w, h)."""
    w, h = size
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
    return cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
