"""Classical corner-index proposals (rank glyph beside suit glyph) and how the photo reader pairs
them into cards: on drawn cards, on synthetic read corners, and on CC BY training photos."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from test_photo_detect import _photo  # a training-split photo and its labels

from vision.index_proposals import (
    GROW,
    NO_PROPOSALS,
    IndexProposalError,
    glyphs,
    proposals,
)
from vision.photo_cards import quad_iou
from vision.photo_detect import (
    DEFAULT_CLASSIFIER,
    DEFAULT_DETECTOR,
    PAIR_AGREE,
    PROPOSAL_AGREE,
    Corner,
    PhotoReader,
    _agree,
    _box_quad,
    _one_card,
)

PHOTOS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / \
    "playing-cards-photos-cc-by"
needs_photos = pytest.mark.skipif(not (PHOTOS / "data.yaml").is_file(),
                                  reason="shared CC BY photos not found")
needs_models = pytest.mark.skipif(
    not (DEFAULT_DETECTOR.is_file() and DEFAULT_CLASSIFIER.is_file()),
    reason="no corner models in models/ (cardtable train --corners)")

UNSURE = PROPOSAL_AGREE - 0.05
"""A proposal's reading too unsure to pair with another proposal."""
DECKS = {  # table, card, ink (BGR)
    "white": ((40, 70, 110), (235, 235, 235), (20, 20, 20)),
    "red": ((40, 70, 110), (235, 235, 235), (40, 30, 200)),
    "black": ((215, 215, 210), (25, 25, 25), (60, 170, 210)),
}


def drawn_index(deck: str, glyph: int, angle: float, rank: str = "7"
                ) -> tuple[np.ndarray, np.ndarray]:
    """A 480×480 photo of one card of ``deck`` whose index (``rank`` over a diamond) has
    glyphs ``glyph`` px tall, turned by ``angle`` degrees; and the index's box grown as a
    proposal's is (:data:`vision.index_proposals.GROW`)."""
    table, card, ink = DECKS[deck]
    img = np.full((480, 480, 3), table, np.uint8)
    h = 9 * glyph
    x0, y0 = 240 - int(0.36 * h), 240 - h // 2
    cv2.rectangle(img, (x0, y0), (x0 + int(0.72 * h), y0 + h), card, -1)
    scale = glyph / 22.0
    thick = max(1, glyph // 6)
    (tw, _), _ = cv2.getTextSize(rank, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    lx, ty = x0 + glyph // 2, y0 + glyph // 2
    cv2.putText(img, rank, (lx, ty + glyph), cv2.FONT_HERSHEY_SIMPLEX, scale, ink, thick,
                cv2.LINE_AA)
    cx, sy = lx + tw // 2, ty + glyph + glyph // 4
    diamond = np.int32([[cx, sy], [cx + int(0.35 * glyph), sy + glyph // 2],
                        [cx, sy + glyph], [cx - int(0.35 * glyph), sy + glyph // 2]])
    cv2.fillPoly(img, [diamond], ink, cv2.LINE_AA)
    ix0, iy0, ix1, iy1 = min(lx, cx - int(0.35 * glyph)), ty, max(lx + tw, cx + int(
        0.35 * glyph)), sy + glyph
    turn = cv2.getRotationMatrix2D((240, 240), angle, 1.0)
    img = cv2.warpAffine(img, turn, (480, 480), borderValue=table)
    pts = np.float32([[ix0, iy0], [ix1, iy0], [ix1, iy1], [ix0, iy1]])
    pts = cv2.transform(pts[None], turn)[0]
    box = np.concatenate([pts.min(0), pts.max(0)])
    mid, half = (box[:2] + box[2:]) / 2, (box[2:] - box[:2]) * GROW / 2
    return img, np.concatenate([mid - half, mid + half])


@pytest.mark.parametrize(("deck", "glyph", "angle"), [
    ("white", 10, 0), ("white", 16, 30), ("white", 24, 90), ("white", 40, -20),
    ("red", 12, 0), ("red", 20, 135), ("black", 12, 0), ("black", 18, 60),
    ("black", 30, 180), ("white", 48, 0),
])
def test_a_drawn_index_is_proposed(deck: str, glyph: int, angle: float) -> None:
    image, index = drawn_index(deck, glyph, angle)
    found = proposals(image, most=1000)
    assert max((quad_iou(_box_quad(b), _box_quad(index)) for b in found.boxes),
               default=0.0) >= 0.5


@pytest.mark.parametrize(("image", "count"), [
    (np.full((200, 200, 3), 128, np.uint8), 0),  # plain table
    (np.full((200, 200), 250, np.uint8), 0),  # plain greyscale
    (np.zeros((12, 12, 3), np.uint8), 0),  # smaller than the threshold window
])
def test_nothing_to_propose(image: np.ndarray, count: int) -> None:
    assert len(proposals(image)) == count
    assert len(glyphs(image)) == count


def test_one_blob_alone_is_no_index() -> None:
    image = np.full((200, 200, 3), 230, np.uint8)
    cv2.circle(image, (100, 100), 8, (0, 0, 0), -1)
    assert len(glyphs(image)) >= 1 and proposals(image) is NO_PROPOSALS


@pytest.mark.parametrize("bad", [
    np.zeros((50, 50, 3), np.float32), np.zeros((50, 50, 4), np.uint8),
    np.zeros((50, 50, 3, 1), np.uint8), None, "photo.jpg",
])
def test_bad_input_is_refused_clearly(bad: object) -> None:
    with pytest.raises(IndexProposalError, match="expected an 8-bit BGR"):
        proposals(bad)  # type: ignore[arg-type]


def _corner(kind: str, x: float, y: float, size: float = 20.0, score: float = 1.0) -> Corner:
    return Corner(np.array([x, y, x + size, y + size], np.float32), score, kind)


@pytest.mark.parametrize(("a", "b", "one"), [
    (_corner("proposal", 0, 0), _corner("proposal", 70, 0), True),  # 3.5 sizes apart
    (_corner("proposal", 0, 0), _corner("proposal", 30, 0), False),  # two glyphs of one index
    (_corner("proposal", 0, 0), _corner("proposal", 150, 0), False),  # two cards
    (_corner("proposal", 0, 0), _corner("proposal", 70, 0, size=34), False),  # sizes unlike
    (_corner("index", 0, 0), _corner("proposal", 40, 50), True),
])
def test_one_card_places_its_two_indices(a: Corner, b: Corner, one: bool) -> None:
    assert _one_card(a.box, b.box) is one


@pytest.mark.parametrize(("kinds", "codes", "probs", "dx", "agree"), [
    (("index", "index"), ("7D", "7D"), (0.5, 0.5), 150, True),  # the detector's rule, as before
    (("index", "index"), ("7D", "7H"), (0.9, 0.9), 70, False),
    (("index", "proposal"), ("7D", "7D"), (PAIR_AGREE, PAIR_AGREE), 70, True),
    (("index", "proposal"), ("7D", "7D"), (0.9, 0.9), 150, False),  # too far for one card
    (("proposal", "proposal"), ("7D", "7D"), (PROPOSAL_AGREE, 0.99), 70, True),
    (("proposal", "proposal"), ("7D", "7D"), (UNSURE, 0.99), 70, False),  # one is unsure
    (("proposal", "proposal"), ("7D", "7D"), (0.99, 0.99), 30, False),  # one index's glyphs
])
def test_which_indices_agree(kinds: tuple[str, str], codes: tuple[str, str],
                             probs: tuple[float, float], dx: float, agree: bool) -> None:
    a = (_corner(kinds[0], 0, 0), codes[0], probs[0])
    b = (_corner(kinds[1], dx, 0), codes[1], probs[1])
    assert _agree(a, b, PAIR_AGREE) is agree


@pytest.fixture(scope="module")
def reader() -> PhotoReader:
    return PhotoReader.load()


def _read(reader: PhotoReader, corner: Corner, code: str, p: float) -> Corner:
    probs = np.full(len(reader.classes), (1 - p) / (len(reader.classes) - 1), np.float32)
    probs[reader.classes.index(code)] = p
    return Corner(corner.box, corner.score, corner.kind, probs)


@needs_models
@pytest.mark.parametrize(("corners", "cards"), [
    ([("proposal", 0, "7D", 0.999)], []),  # a proposal is never a card alone
    ([("proposal", 0, "7D", 0.99), ("proposal", 70, "7D", 0.98)], ["7D"]),
    ([("proposal", 0, "7D", 0.99), ("proposal", 70, "7D", UNSURE)], []),
    ([("proposal", 0, "7D", 0.99), ("proposal", 25, "7D", 0.99)], []),  # one index's glyphs
    ([("index", 0, "7D", 0.6), ("proposal", 70, "7D", 0.6)], ["7D"]),  # rescued together
    ([("index", 0, "7D", 0.6), ("proposal", 70, "7H", 0.99)], []),
    ([("index", 0, "7D", 0.9)], ["7D"]),  # the detector alone, as before
    ([("index", 0, "7D", 0.9), ("proposal", 70, "7D", 0.6)], ["7D"]),  # one card, both ends
    # a second pair over a card already made is the same card
    ([("index", 0, "7D", 0.9), ("index", 70, "7D", 0.9), ("proposal", 10, "7D", 0.99),
      ("proposal", 80, "7D", 0.99)], ["7D"]),
])
def test_proposals_pair_into_cards(reader: PhotoReader, corners: list[tuple], cards: list[str]
                                   ) -> None:
    read = [_read(reader, _corner(kind, 100 + x, 100), code, p) for kind, x, code, p in corners]
    out = reader.cards(read)
    assert [d.code for d in out] == cards
    if len(corners) == 2 and cards:  # the card holds both indices
        quad = out[0].quad.astype(np.float32).reshape(-1, 1, 2)
        for c in read:
            mid = (float(c.box[0] + c.box[2]) / 2, float(c.box[1] + c.box[3]) / 2)
            assert cv2.pointPolygonTest(quad, mid, False) >= 0


@needs_models
def test_no_proposals_are_read_when_none_are_asked_for(reader: PhotoReader) -> None:
    image, _ = drawn_index("white", 14, 0)
    assert reader.propose(image, [], []) != []
    off = PhotoReader(reader.detector, reader.classifier, reader.det_size, proposals_read=0)
    assert off.propose(image, [], []) == []




def _holds(quad: np.ndarray, x: float, y: float) -> bool:
    return cv2.pointPolygonTest(np.asarray(quad, np.float32).reshape(-1, 1, 2),
                                (float(x), float(y)), False) >= 0


@needs_models
@needs_photos
@pytest.mark.parametrize(("stem", "code"), [
    ("Kd-466bb137", "KD"),  # held up to the webcam, no outline; the detector misses both
    ("7h-f4f39bdd", "7H"),
    ("IMG_20220921_201317", "7D"),  # on the phone, cut by a hand
])
def test_a_card_with_no_outline_is_found_from_its_proposed_indices(
        reader: PhotoReader, stem: str, code: str) -> None:
    """Training-split photos (models/README.md): without proposals neither labelled index of
    the card is found; with them both are, in one card, and nothing else is a false card."""
    image, labels = _photo(stem)
    points = [(x, y) for c, x, y in labels if c == code]
    off = PhotoReader(reader.detector, reader.classifier, reader.det_size,
                      cards_model=reader.cards_model, pips=reader.pips, proposals_read=0)
    assert not any(d.code == code and _holds(d.quad, x, y) for d in off.detect(image)
                   for x, y in points)
    found = reader.detect(image)
    assert any(d.code == code and all(_holds(d.quad, x, y) for x, y in points) for d in found)
    assert all(any(d.code == c and _holds(d.quad, x, y) for c, x, y in labels) for d in found)
