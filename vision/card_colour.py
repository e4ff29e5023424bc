"""An UNO card's colour as a pixel statistic of its field, after white balance by its border.

WHY: the networks learned colour from renders, and the issue's probe got real cards' colours
right on only 51-88% of photos; the single-card reader got 82%. Colour needs no learning: after
dividing by the card's own white border (a white reference in every photo, :func:`border_gain`),
the field of a red, yellow, green or blue card is a
large area of one saturated hue, and that of a wild card is black around a four-colour oval
(whose share common to its colours counts as black, :func:`oval_to_black`).
This module counts the field's pixels by hue (:func:`field_colour`) and turns the counts into a
floored expert over the deck's codes (:func:`colour_weights`) that multiplies the networks'
probabilities, like the corner indices (:mod:`vision.corner_index`).

The bins and thresholds below are fixed a priori from the printed colours (the hues the renderer
draws real printings from, :data:`vision.synth.faces._UNO_HSV`, and the hue circle), not fitted
on any photo.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.classifier import WHITE_TARGET, apply_gain
from vision.classifier import border_gain as classifier_border_gain

COLOURS: tuple[str, ...] = ("R", "Y", "G", "B", "K")
"""Red, yellow, green, blue, and K for the black field of the wild cards."""
HUE_BINS: dict[str, tuple[tuple[int, int], ...]] = {
    "R": ((0, 10), (165, 180)),  # OpenCV hue (0-179): printed red is 175-7
    "Y": ((17, 33),),  # printed yellow 20-30; skin and orange (10-17) vote for nothing
    "G": ((33, 90),),  # olive (36) to bluish greens (76)
    "B": ((92, 132),),  # printed blue 100-116; purple (135-165) votes for nothing
}
MIN_CHROMA = 40.0
"""A pixel is coloured when its largest and smallest channel differ by this much (of 255) after
white balance: the white border and oval differ by a few units, a washed-out field by 60+."""
DARK = 0.45
"""A colourless pixel darker than this share of the border's white is black (a wild card's field,
lifted by a hazy webcam to about 0.45 of white; the printed black is about 0.08)."""
COLOUR_FLOOR = 0.3
"""Probability that the statistic says nothing (a finger or a sliver of table fills the field, a
wrong quad): the expert is ``(1 - floor) · q + floor / 5``. A priori, as ``CORNER_FLOOR``."""
INSET = 0.1  # the field starts this far in from the crop's edge (past the white border)


def border_gain(crop: np.ndarray, band: tuple[float, float] = (0.02, 0.08),
                brightest: float = 0.3) -> np.ndarray:
    """Per-channel gains (BGR) that make the card's border white: the classifier's border
    reference (:func:`vision.classifier.border_gain`) over the ``brightest`` share of a thinner
    ring ``band``.

    WHY the brightest 30% of a thin ring: printed borders are 4.5-8.5% of the card's width, so a
    ring from 2 to 8% holds the field's colour on up to half its pixels, a rounded corner's table
    and a finger on some; the border is the brightest part of it. Gains are numbers so that they
    can be applied elsewhere too (the corner patches are cut from the photo, not the crop)."""
    return classifier_border_gain(crop, band, 100.0 * (1.0 - brightest))


def field_colour(crop: np.ndarray, oval: bool = True) -> np.ndarray:
    """Shares (over :data:`COLOURS`) of the field's coloured and black pixels in a rectified
    card ``crop`` (BGR, portrait or landscape, any size), after white balance by its border.

    Pixels that are neither (the white oval, the index, a grey wall) do not vote; the shares
    sum to 1 (uniform when nothing voted). ``oval`` False leaves out :func:`oval_to_black`
    (the statistic before the sixty-first session, for :mod:`vision.colour_check`)."""
    if not isinstance(crop, np.ndarray) or crop.ndim != 3 or crop.shape[2] != 3:
        raise ValueError(f"expected a BGR card crop (H, W, 3), got {getattr(crop, 'shape', crop)}")
    small = cv2.resize(crop, (100, 150) if crop.shape[0] >= crop.shape[1] else (150, 100),
                       interpolation=cv2.INTER_AREA)
    bal = apply_gain(small, border_gain(small))
    h, w = bal.shape[:2]
    i = int(round(INSET * min(h, w)))
    inner = bal[i:h - i, i:w - i]
    field = inner.reshape(-1, 3).astype(np.float32)
    hue = cv2.cvtColor(inner, cv2.COLOR_BGR2HSV)[..., 0].reshape(-1)
    chroma = field.max(1) - field.min(1)
    coloured = chroma >= MIN_CHROMA
    votes = np.zeros(len(COLOURS), np.float64)
    for k, c in enumerate(COLOURS[:4]):
        in_bin = np.zeros_like(coloured)
        for lo, hi in HUE_BINS[c]:
            in_bin |= (hue >= lo) & (hue < hi)
        votes[k] = np.count_nonzero(coloured & in_bin)
    votes[4] = np.count_nonzero(~coloured & (field.max(1) < DARK * WHITE_TARGET))
    if oval:
        votes = oval_to_black(votes)
    total = votes.sum()
    return votes / total if total > 0 else np.full(len(COLOURS), 1 / len(COLOURS))


def oval_to_black(votes: np.ndarray) -> np.ndarray:
    """Votes (over :data:`COLOURS`) with the share that all four colours have in common moved
    to black: every colour gives up as many votes as the least voted colour has, and ``K``
    gains them.

    WHY: current decks print the wild card's oval as large as the white oval of the coloured
    cards, so four coloured quarters cover about three quarters of its field; a webcam that
    lifts the black leaves one of them on top (the real webcam photos' wild cards were read
    black 5 times in 16). A coloured card never shows all four hues, so it gives up nothing;
    a finger (red) or a shade (a third hue) over it does not make the fourth. Taking what
    three colours share instead cost 5 coloured cards on fresh renders (RULE 60,
    models/HISTORY.md, sixty-first session). Fixed a priori, not fitted on any photo."""
    out = np.asarray(votes, np.float64).copy()
    common = out[:4].min()
    out[:4] -= common
    out[4] += 4 * common
    return out


def code_colour(code: str) -> str | None:
    """The field colour of an UNO code (``K`` for the black wild cards), None for any other."""
    from protocol_runner.cards import parse_card

    try:
        card = parse_card(code)
    except ValueError:
        return None
    if card.deck != "uno":
        return None
    return card.colour or "K"


def colour_weights(crop: np.ndarray, codes: Sequence[str], floor: float = COLOUR_FLOOR
                   ) -> np.ndarray:
    """The colour expert over ``codes``: ``(1 - floor) · q(colour of code) + floor / 5`` with
    ``q`` from :func:`field_colour`; a code with no UNO colour gets the mean weight (the
    statistic says nothing about it)."""
    q = field_colour(crop)
    expert = (1 - floor) * q + floor / len(COLOURS)
    out = np.full(len(codes), expert.mean())
    for j, code in enumerate(codes):
        c = code_colour(code)
        if c is not None:
            out[j] = expert[COLOURS.index(c)]
    return out
