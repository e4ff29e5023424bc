"""Touching cards: pieces fitted to their card's outline, whole cards placed in merged blobs,
glare taken off a blob, holes in a layout's grid searched, faint cards placed by the grid."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect import (
    OUTLINE_MIN,
    PLACE_MIN_EDGE,
    Located,
    _Edges,
    _grid_gaps,
    _snap_to_grid,
    _without_glare,
    fit_outline,
    outline_size,
    outline_strength,
    place_cards,
)
from vision.geometry import DEFAULT_MAT
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
    assert _err(fit_outline(start.astype(np.float32), edges, SIZE, P)[0], cards[1]) < 2.0


def test_a_piece_beyond_reach_stays_near_where_it_was() -> None:
    # nothing to find (bare felt): the piece keeps its place and takes the card's size
    edges = _Edges(np.full((400, 400), 60, np.uint8))
    start = _card((200, 200))
    assert _err(fit_outline(start, edges, SIZE, P)[0], start) < 2.0


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
        fitted = fit_outline(q, edges, SIZE, P)[0]
        assert min(_err(fitted, c) for c in cards) < 2.5


def test_a_glare_halo_around_a_card_gives_one_card() -> None:
    card = _card((300, 260))
    gray = _table([card], glare=(390, 260, 60))
    halo = cv2.boxPoints(((330, 260), (CW + 70, CH + 20), 0.0)).astype(np.float32)
    placed = place_cards(_blob([card], [halo]), [], gray, SIZE, P, 0.0)
    assert len(placed) == 1
    assert _err(fit_outline(placed[0], _Edges(gray), SIZE, P)[0], card) < 2.5


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


def _glare(centre: tuple[int, int], radius: float, shape: tuple[int, int] = (520, 700)
           ) -> np.ndarray:
    """A soft glare spot on the felt: light falling off from its middle, no edge anywhere."""
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]]
    d2 = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2
    return (60 + 150 * np.exp(-d2 / (2 * radius**2))).astype(np.uint8)


def _parts(blob: np.ndarray, gray: np.ndarray, tinted: np.ndarray) -> list[np.ndarray] | None:
    cnt = max(cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0],
              key=cv2.contourArea)
    return _without_glare(cnt, tinted, _Edges(gray), P)


def test_glare_around_a_card_is_taken_off_its_blob() -> None:
    card = _card((200, 260))
    gray = _glare((300, 260), 60)
    cv2.fillConvexPoly(gray, np.round(card).astype(np.int32), 225)
    cards = np.zeros(gray.shape, np.uint8)
    cv2.fillConvexPoly(cards, np.round(card).astype(np.int32), 255)
    blob = cards | cv2.compare(gray, 120, cv2.CMP_GT)  # the mask took the glare for card
    tinted = cv2.bitwise_not(cards)  # glare keeps the felt's hue, the card does not
    parts = _parts(blob, gray, tinted)
    assert parts is not None
    biggest = max(parts, key=cv2.contourArea)
    (cx, cy), (w, h), _ = cv2.minAreaRect(biggest)
    assert abs(cx - 200) < 3 and abs(cy - 260) < 3
    assert sorted((w, h)) == pytest.approx(sorted((CW, CH)), abs=4)


@pytest.mark.parametrize(
    "case",
    [
        "cast",  # two touching cards whose white a violet cast tints: sharp outlines
        "print",  # violet print inside a card's border: not joined to the felt
        "glare only",  # a blob that is glare all over is no card with glare around it
        "no tint",  # nothing felt-coloured in the blob at all
    ],
)
def test_what_is_not_glare_around_cards_is_left_whole(case: str) -> None:
    cards = [_card((150, 260)), _card((150 + CW + 2, 260))]
    gray = _table(cards)
    blob = np.zeros(gray.shape, np.uint8)
    for q in cards:
        cv2.fillConvexPoly(blob, np.round(q).astype(np.int32), 255)
    tinted = np.zeros(gray.shape, np.uint8)
    if case == "cast":
        tinted[:] = 255
    elif case == "print":
        tinted = cv2.bitwise_not(blob)
        cv2.circle(tinted, (150, 260), 20, 255, -1)
    elif case == "glare only":
        gray = _glare((350, 260), 80)
        blob = cv2.compare(gray, 100, cv2.CMP_GT)
        tinted[:] = 255
    assert _parts(blob, gray, tinted) is None


MAT_SHAPE = (round(DEFAULT_MAT.height * P), round(DEFAULT_MAT.width * P))
GRID = [(200.0 + 70.0 * i, 100.0 + 100.0 * j) for j in range(3) for i in range(4)]
"""Centres (mm) of a 4 × 3 layout in the mat's work area: 14 mm gaps, 13 mm between rows."""


def _located(centres: list[tuple[float, float]]) -> list[Located]:
    out = []
    for x, y in centres:
        q = _card((x * P, y * P)) / P
        out.append(Located(q, q, "work"))
    return out


@pytest.mark.parametrize(
    ("drawn", "listed", "found"),
    [
        (GRID, [c for c in GRID if c != GRID[5]], [GRID[5]]),  # a hole the felt test left
        (GRID, [c for c in GRID if c not in (GRID[5], GRID[6])], [GRID[5], GRID[6]]),
        ([c for c in GRID if c != GRID[5]], [c for c in GRID if c != GRID[5]], []),  # felt
        (GRID, [c for c in GRID if c != GRID[7]], [GRID[7]]),  # a row's end, mid-column
        (GRID, [c for c in GRID if c != GRID[11]], []),  # a corner: no hole, not looked at
        (GRID, GRID, []),  # nothing missing
    ],
)
def test_a_hole_in_the_grid_is_searched_for_a_card(drawn: list, listed: list,
                                                   found: list) -> None:
    gray = _table([_card((x * P, y * P)) for x, y in drawn], MAT_SHAPE)
    quads = _grid_gaps(_located(listed), _Edges(gray), SIZE, P, DEFAULT_MAT)
    assert sorted(tuple(np.round(q.mean(axis=0) / P)) for q in quads) == \
        sorted(tuple(np.round(c)) for c in found)


@pytest.mark.parametrize(
    ("centres", "weak", "moved"),
    [
        (GRID, 5, (0.0, 14.0)),  # a black card's outline pulled it 14 mm down
        (GRID, 5, (-9.0, 6.0)),
        (GRID, 0, (8.0, 0.0)),  # a corner: its neighbours right and below place it
        (GRID, 5, (45.0, 0.0)),  # nearer its neighbour's place than its own: left as it is
        (GRID[:2], 1, (0.0, 9.0)),  # too few cards with an outline to place it
    ],
)
def test_a_faint_card_is_placed_by_its_neighbours(centres: list, weak: int,
                                                  moved: tuple[float, float]) -> None:
    found = [(_card((x * P, y * P)), False) for x, y in centres]
    edges = _Edges(_table([q for q, _ in found], MAT_SHAPE))
    found[weak] = (found[weak][0] + np.float32(moved) * P, False)
    flags = np.zeros(len(found), bool)
    flags[weak] = True
    _snap_to_grid(found, flags, edges, SIZE, P, DEFAULT_MAT)
    placed = found[weak][0].mean(axis=0) / P
    snapped = len(centres) >= 3 and np.hypot(*moved) < 0.35 * SIZE[0]
    expected = np.array(centres[weak]) + (0 if snapped else np.array(moved))
    assert np.allclose(placed, expected, atol=0.75)
    for k, (q, _) in enumerate(found):  # the cards with an outline stay where they are
        if k != weak:
            assert np.allclose(q.mean(axis=0) / P, centres[k], atol=1e-3)


@pytest.mark.parametrize(
    ("grown", "turn"),
    [
        ((0.0, 0.0), 0.0),
        ((6.0, 4.0), 0.0),  # a soft shadow on the right and below, as a blob takes it in
        ((8.0, 0.0), 2.0),  # a blob 4 mm too wide, the card turned
        ((-4.0, -4.0), -1.0),  # a blob a little short of the card (a washed-out border)
    ],
)
def test_a_card_is_measured_by_its_outline_not_its_blob(grown: tuple[float, float],
                                                        turn: float) -> None:
    card = _card((300, 260), turn)
    gray = _table([card])
    blob = cv2.boxPoints(((300 + grown[0] / 2, 260 + grown[1] / 2),
                          (CW + grown[0], CH + grown[1]), turn)).astype(np.float32)
    guess = ((CW + grown[0]) / P, (CH + grown[1]) / P)
    size, score = outline_size(blob, _Edges(gray), guess, P)
    assert size == pytest.approx(SIZE, abs=1.0)
    assert score >= PLACE_MIN_EDGE


def test_a_blob_with_no_outline_has_no_size_to_measure() -> None:
    gray = _glare((300, 260), 60)  # a glare patch the colour test took for a card
    blob = _card((300, 260))
    _, score = outline_size(blob, _Edges(gray), SIZE, P)
    assert score < PLACE_MIN_EDGE
