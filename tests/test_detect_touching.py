"""Touching cards: pieces fitted to their card's outline, whole cards placed in merged blobs."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect import OUTLINE_MIN, _Edges, outline_strength, place_cards, refine_quad
from vision.synth.scenes import canonical_quad

P = 2.0  # top-down px per mm
SIZE = (56.0, 87.0)
CW, CH = SIZE[0] * P, SIZE[1] * P


def _card(centre: tuple[float, float], turn: float = 0.0) -> np.ndarray:
    return cv2.boxPoints((centre, (CW, CH), turn)).astype(np.float32)


def _table(cards: list[np.ndarray], shape: tuple[int, int] = (520, 700),
           glare: tuple[int, int, int] | None = None) -> np.ndarray:
    """A grey top-down view: dark felt, cards with a white border, a darker printed field
    and a dark edge line, optionally a bright glare disc on the felt."""
    img = np.full(shape, 60, np.uint8)
    if glare is not None:
        cv2.circle(img, glare[:2], glare[2], 200, -1)
        img = cv2.GaussianBlur(img, (0, 0), 6)
    for q in cards:
        cv2.fillConvexPoly(img, np.round(q).astype(np.int32), 225)
        c = q.mean(axis=0)
        inner = c + (q - c) * np.array([(CW - 14) / CW, (CH - 14) / CH])
        cv2.fillConvexPoly(img, np.round(inner).astype(np.int32), 110)
        cv2.polylines(img, [np.round(q).astype(np.int32)], True, 35, 1)
    return cv2.GaussianBlur(img, (0, 0), 0.8)


def _err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(canonical_quad(a) - canonical_quad(b), axis=1).mean())


@pytest.mark.parametrize(
    ("offset", "turn"),
    [((0.0, 0.0), 0.0), ((9.0, 0.0), 0.0), ((0.0, -12.0), 1.0), ((-7.0, 8.0), -1.5),
     ((12.0, 12.0), 2.0)],
)
def test_a_misplaced_piece_is_moved_onto_its_card(offset: tuple[float, float],
                                                  turn: float) -> None:
    # three touching cards in a row: the middle one's neighbours draw strong lines nearby
    cards = [_card((160 + k * (CW + 2), 260)) for k in range(3)]
    edges = _Edges(_table(cards))
    start = cv2.boxPoints(((cards[1].mean(axis=0) + offset), (CW + 6, CH + 10), turn))
    assert _err(refine_quad(start.astype(np.float32), edges, SIZE, P), cards[1]) < 2.0


def test_a_piece_beyond_reach_stays_near_where_it_was() -> None:
    # nothing to find (bare felt): the piece keeps its place and takes the card's size
    edges = _Edges(np.full((400, 400), 60, np.uint8))
    start = _card((200, 200))
    assert _err(refine_quad(start, edges, SIZE, P), start) < 2.0


def _blob(cards: list[np.ndarray], extra: list[np.ndarray] = ()) -> np.ndarray:
    mask = np.zeros((520, 700), np.uint8)
    for q in [*cards, *extra]:
        cv2.fillConvexPoly(mask, np.round(q).astype(np.int32), 255)
    return max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0],
               key=cv2.contourArea)


@pytest.mark.parametrize(
    ("layout", "angle"),
    [
        # an L of five touching cards
        ([(80, 100), (80 + CW + 1, 100), (80 + 2 * (CW + 1), 100), (80, 100 + CH + 1),
          (80 + CW + 1, 100 + CH + 1)], 0.0),
        # a block of two by two, turned with the layout
        ([(200, 150), (200 + CW + 2, 150), (200, 150 + CH + 2), (200 + CW + 2, 150 + CH + 2)],
         2.0),
    ],
)
def test_cards_merged_into_one_blob_are_placed(layout: list[tuple[float, float]],
                                               angle: float) -> None:
    centre = np.mean(layout, axis=0)
    rot = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), -angle, 1.0)
    cards = [_card(tuple(rot[:, :2] @ c + rot[:, 2]), angle) for c in np.array(layout)]
    gray = _table(cards)
    placed = place_cards(_blob(cards), [], gray, SIZE, P, angle)
    assert len(placed) == len(cards)
    edges = _Edges(gray)
    for q in placed:
        fitted = refine_quad(q, edges, SIZE, P)
        assert min(_err(fitted, c) for c in cards) < 2.5


def test_a_glare_halo_around_a_card_gives_one_card() -> None:
    card = _card((300, 260))
    gray = _table([card], glare=(390, 260, 60))
    halo = cv2.boxPoints(((330, 260), (CW + 70, CH + 20), 0.0)).astype(np.float32)
    placed = place_cards(_blob([card], [halo]), [], gray, SIZE, P, 0.0)
    assert len(placed) == 1
    assert _err(refine_quad(placed[0], _Edges(gray), SIZE, P), card) < 2.5


def test_what_the_cuts_explained_is_not_placed_again() -> None:
    cards = [_card((150, 260)), _card((150 + CW + 1, 260))]
    gray = _table(cards)
    assert place_cards(_blob(cards), [cards[0]], gray, SIZE, P, 0.0) != []
    assert place_cards(_blob(cards), cards, gray, SIZE, P, 0.0) == []


def test_a_smooth_blob_holds_no_card() -> None:
    # a sleeve or a hand: card-sized and bigger, but no outline anywhere
    gray = np.full((520, 700), 60, np.uint8)
    region = cv2.boxPoints(((350, 260), (3 * CW, 1.5 * CH), 0.0)).astype(np.float32)
    cv2.fillConvexPoly(gray, np.round(region).astype(np.int32), 170)
    gray = cv2.GaussianBlur(gray, (0, 0), 25)
    assert place_cards(_blob([region]), [], gray, SIZE, P, 0.0) == []


@pytest.mark.parametrize("shape", [(40, 400), (400, 40), (30, 30)])
def test_a_blob_too_small_for_a_card_holds_none(shape: tuple[int, int]) -> None:
    # narrower or shorter than a card (a sliver of a hand, a strip of glare): nothing fits
    gray = _table([])
    strip = cv2.boxPoints(((300, 260), (shape[1], shape[0]), 0.0)).astype(np.float32)
    cv2.fillConvexPoly(gray, np.round(strip).astype(np.int32), 220)
    assert place_cards(_blob([strip]), [], gray, SIZE, P, 0.0) == []


def test_a_washed_out_card_keeps_its_outline_and_glare_has_none() -> None:
    # a card whose print glare has washed out: only its border's edge against the felt shows
    card = _card((200, 260))
    washed = np.full((520, 700), 60, np.uint8)
    cv2.fillConvexPoly(washed, np.round(card).astype(np.int32), 230)
    patch = _card((500, 260))
    # a glare spot on the felt, which the colour test cut to a card's shape: light falls off
    # softly from its middle, with no edge anywhere
    yy, xx = np.mgrid[0:520, 0:700]
    glare = (60 + 110 * np.exp(-((xx - 500) ** 2 + (yy - 260) ** 2) / (2 * 70.0**2))
             ).astype(np.uint8)
    assert outline_strength(card, _Edges(washed), SIZE, P) > 3 * OUTLINE_MIN
    assert outline_strength(patch, _Edges(glare), SIZE, P) < OUTLINE_MIN
