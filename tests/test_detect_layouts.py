"""Whole layouts read with no error: an unsure card is settled by the rest of its frame.

Failure modes seen on tuning seeds (rendered 50-card tables, seeds 10,500,000+ and 10,600,000+):
every layout error there was a misread, uncovered card, and they came in three kinds, each
fixed in :mod:`vision.consistency`:

* colour: a printing's lime green read as yellow (a whole frame's greens at once);
* symbol: a digit in the frame's font read as a look-alike (5 as 2 or 3, 6 as 9, 3 as 8);
* deck: an UNO card read as a standard face on a table of UNO cards.

Localisation errors seen there: cards laid a centimetre apart merging, through the shadows
between them, into one blob that was then cut as if they touched (quads straddling two cards,
one card missed and false ones found), and a wide glare patch on the felt cut into
card-sized pieces, one of which passed for a card back.

On later tuning seeds (11,000,000+ to 11,600,000+): look-alike symbols, now settled by the
corner indices as well (:mod:`vision.table_corners`, tested in ``test_table_corners.py``);
fairly sure colour misreadings (green read as yellow at 0.97), now checked against the frame's
colours like the symbols; and glare on the felt merging with a block of cards into a blob no
grid of whole cards fits, which was dropped whole (its cards missed) instead of cut.

The constructed cases take real crops of a rendered scene and make one card's reading doubtful
the way the classifier does; the scene cases are rendered tables (training seeds) whose plain
reading had exactly such an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import vision.recognise
from vision.consistency import (
    GLYPH_SIZE,
    GLYPH_UNSURE,
    balanced,
    frame_consistent,
    glyph_map,
    glyph_similarity,
)
from vision.detect import crop_card, locate_cards
from vision.geometry import TableGeometry
from vision.recognise import CROP_SIZE, UNSURE_BELOW, TableReader
from vision.synth.scenes import Scene, render_scene

MODELS = Path(__file__).resolve().parent.parent / "models"
pytestmark = pytest.mark.skipif(not (MODELS / "card_classifier.onnx").exists(),
                                reason="no trained classifier in models/")
CLASSES = tuple(json.loads((MODELS / "card_classifier.json").read_text())["classes"])
SEED = 9_000_002  # 50 UNO cards: 9s, 6s, 3s, skips five times each, every colour


@pytest.fixture(scope="module")
def table() -> tuple[list[np.ndarray], list[str]]:
    scene = render_scene(SEED)
    return [crop_card(scene.image, c.quad, CROP_SIZE) for c in scene.cards], \
        [c.code for c in scene.cards]


def _sure(code: str) -> np.ndarray:
    p = np.full(len(CLASSES), 0.02 / (len(CLASSES) - 1), np.float32)
    p[CLASSES.index(code)] = 0.98
    return p


def _doubt(reading: dict[str, float]) -> np.ndarray:
    p = np.full(len(CLASSES), 1e-4, np.float32)
    for code, v in reading.items():
        p[CLASSES.index(code)] = v
    return p / p.sum()


def _read(probs: list[np.ndarray]) -> list[str]:
    return [CLASSES[int(np.argmax(p))] for p in probs]


@pytest.mark.parametrize(
    ("truth", "reading"),
    [
        ("1G", {"1Y": 0.6, "1G": 0.4}),  # colour: green read as yellow
        ("2Y", {"2G": 0.55, "2Y": 0.45}),  # colour: yellow read as green
        ("1G", {"1Y": 0.97, "1G": 0.029}),  # colour: fairly sure, and wrong
        ("6G", {"9G": 0.55, "6G": 0.43}),  # symbol: 6 read as 9
        ("3R", {"8R": 0.6, "3R": 0.35}),  # symbol: 3 read as 8
        ("9B", {"6B": 0.97, "9B": 0.02}),  # symbol: fairly sure, and wrong
        ("3B", {"2B": 0.45, "3B": 0.35, "8B": 0.2}),  # symbol: three look-alikes
        ("8B", {"8S": 0.55, "8B": 0.45}),  # deck: a standard face among UNO cards
    ],
)
def test_a_doubtful_card_is_settled_by_its_frame(table: tuple[list[np.ndarray], list[str]],
                                                 truth: str, reading: dict[str, float]) -> None:
    crops, codes = table
    i = codes.index(truth)
    probs = [_sure(c) for c in codes]
    probs[i] = _doubt(reading)
    assert _read(probs)[i] != truth
    out = frame_consistent(crops, probs, CLASSES, UNSURE_BELOW)
    assert _read(out) == codes
    assert all(np.array_equal(a, b) for k, (a, b) in enumerate(zip(out, probs, strict=True))
               if k != i)  # sure cards are never touched
    assert float(out[i].sum()) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    ("case", "reading"),
    [
        ("covered", {"1Y": 0.6, "1G": 0.4}),  # only a corner shows: its crop is other cards
        ("sure", {"1Y": 0.995, "1G": 0.005}),  # beyond doubt: left to the classifier
        ("alone", {"1Y": 0.6, "1G": 0.4}),  # a frame of one card has nothing to go by
        ("no symbol reference", {"4G": 0.6, "1G": 0.4}),  # nobody sure of a 4 or a 1
    ],
)
def test_a_doubtful_card_without_evidence_is_left_alone(
        table: tuple[list[np.ndarray], list[str]], case: str, reading: dict[str, float]) -> None:
    crops, codes = table
    i = codes.index("1G")
    probs = [_sure(c) for c in codes]
    probs[i] = _doubt(reading)
    covered = None
    if case == "covered":
        covered = [k == i for k in range(len(codes))]
    if case == "alone":
        crops, probs = [crops[i]], [probs[i]]
        i = 0
    if case == "no symbol reference":  # every other 1 and 4 is half a 7: no reference
        for k, c in enumerate(codes):
            if k != i and c[0] in "14" and len(c) == 2:
                probs[k] = _doubt({c: 0.5, "7" + c[1]: 0.5})
    out = frame_consistent(crops, probs, CLASSES, UNSURE_BELOW, covered)
    if case == "no symbol reference":  # the colour is sure all round, the symbol is not
        assert _read(out)[i] == "4G"
    else:
        assert np.array_equal(out[i], probs[i])


def test_classes_that_are_not_cards_pass_through() -> None:
    crops = [np.full((120, 80, 3), v, np.uint8) for v in (60, 200)]
    probs = [np.array([0.6, 0.4], np.float32), np.array([0.3, 0.7], np.float32)]
    out = frame_consistent(crops, probs, ("tile-1", "tile-2"), UNSURE_BELOW)
    assert all(np.array_equal(a, b) for a, b in zip(out, probs, strict=True))


def test_a_symbol_matches_itself_either_way_up_and_not_its_look_alike(
        table: tuple[list[np.ndarray], list[str]]) -> None:
    crops, codes = table
    six, other_six, nine = (glyph_map(balanced(crops[codes.index(c)], GLYPH_SIZE))
                            for c in ("6G", "6R", "9B"))
    assert glyph_similarity(six, other_six) > 0.9
    assert glyph_similarity(six, six[::-1, ::-1].copy()) > 0.99
    assert glyph_similarity(six, nine) < 0.85
    assert UNSURE_BELOW <= GLYPH_UNSURE


def _reads(reader: TableReader, scene: Scene) -> list[str]:
    """The code read for each labelled card (nearest quad), as the scene evaluation pairs them."""
    reader.geometry = None
    reader.reuse = False
    dets = reader.read(scene.image).detections
    assert len(dets) == len(scene.cards)
    return [min(dets, key=lambda d: float(np.linalg.norm(d.quad - c.quad, axis=1).mean())).code
            for c in scene.cards]


@pytest.mark.parametrize(
    ("seed", "truth", "misread"),
    [
        # symbols: the classifier alone misreads one card in few of the tables from seed
        # 9,000,000 on (sixth session: 2 of ~400; the eighth session's 96-px classifier: 1 of
        # 400, 9,000,000-9,000,399); if the classifier changes, search for such tables again
        (9_000_367, "8B", "3B"),
    ],
)
def test_a_table_the_classifier_alone_misreads_is_read_with_no_error(
        seed: int, truth: str, misread: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = render_scene(seed)
    reader = TableReader.load()
    assert _reads(reader, scene) == [c.code for c in scene.cards]
    # the same table read card by card by the whole-card classifier alone, without the frame's
    # say and without the corner indices (which settle these two as well: test_table_corners)
    monkeypatch.setattr(vision.recognise, "frame_consistent",
                        lambda crops, probs, *args, **kwargs: list(probs))
    monkeypatch.setattr(vision.recognise, "fuse_table_card", lambda probs, *args: probs)
    alone = _reads(reader, scene)
    assert [(c.code, r) for c, r in zip(scene.cards, alone, strict=True) if c.code != r] == \
        [(truth, misread)]


@pytest.mark.parametrize(
    "seed",
    [
        9_000_040,  # work columns 2-4: six cards, two of them backs, merged into one blob
        9_000_017,  # a glare patch on the side area's felt, wider than a card
        9_000_037,  # glare on the felt merging with a block of cards: no grid of cards fits
    ],
)
def test_a_table_is_located_card_for_card(seed: int, deck: str = "uno") -> None:
    scene = render_scene(seed, deck=deck)
    loc = locate_cards(scene.image, TableGeometry.from_markers(scene.image), fanned=False)
    assert len(loc.cards) == len(scene.cards)
    for card in scene.cards:
        width = float(np.linalg.norm(card.quad[1] - card.quad[0]))
        err = min(float(np.linalg.norm(c.quad - card.quad, axis=1).mean()) for c in loc.cards)
        assert err < 0.1 * width, (card.code, card.zone, card.column, card.row)


@pytest.mark.parametrize(
    ("seed", "deck"),
    [
        (16_000_060, "uno"),  # glare over a column's foot: two cards cut as one and a sliver
        (16_000_078, "uno"),  # glare over a block of eight cards: four missed, three false
        (16_000_089, "uno"),  # the discard in a patch of glare as wide again: missed
        (16_000_027, "uno"),  # touching cards, 2 single ones measured 4 mm too big: all off
        (16_500_021, "standard"),  # a back in the felt's own violet: felt to the colour test
        (16_500_060, "standard"),  # a violet crosshatched back: the same
        (16_500_032, "standard"),  # a pink cast: a white card's rim merged with the felt
        (15_500_099, "standard"),  # two black cards touching: one fitted 7 mm off, misread
        (16_500_066, "standard"),  # three black cards touching: one missed
    ],
)
def test_a_tuning_table_once_misread_is_located_card_for_card(seed: int, deck: str) -> None:
    """Tuning tables (seeds 15,500,000+, 16,000,000+ and 16,500,000+) that each had a card
    missed or placed off before the glare, grid-hole, grid-snap and card-size fixes of
    :mod:`vision.detect`."""
    test_a_table_is_located_card_for_card(seed, deck)
