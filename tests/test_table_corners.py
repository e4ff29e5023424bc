"""A table card's reading fused with its printed corner indices (:mod:`vision.table_corners`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import vision.recognise
from vision.corner_index import read_corners
from vision.detect import locate_cards
from vision.geometry import TableGeometry
from vision.recognise import TableReader
from vision.strip_classifier import StripClassifier
from vision.synth.scenes import render_scene
from vision.table_corners import TABLE_CORNER_FLOOR, fuse_table_card

MODELS = Path(__file__).resolve().parent.parent / "models"
pytestmark = pytest.mark.skipif(
    not (MODELS / "card_classifier.onnx").exists() or not (MODELS / "strip_classifier.onnx")
    .exists(), reason="no trained classifiers in models/")
CLASSES = tuple(json.loads((MODELS / "card_classifier.json").read_text())["classes"])
STRIP = tuple(json.loads((MODELS / "strip_classifier.json").read_text())["classes"])
NAN = None  # a corner not seen


def _card(**codes: float) -> np.ndarray:
    """Whole-card probabilities: the named codes (``_`` for ``+``), the rest spread evenly."""
    named = {k.replace("_", "+"): v for k, v in codes.items()}
    rest = (1.0 - sum(named.values())) / (len(CLASSES) - len(named))
    return np.array([named.get(c, rest) for c in CLASSES], np.float32)


def _corner(code: str | None, p: float = 0.95) -> np.ndarray:
    if code is None:
        return np.full(len(STRIP), np.nan)
    out = np.full(len(STRIP), (1.0 - p) / (len(STRIP) - 1))
    out[STRIP.index(code)] = p
    return out


@pytest.mark.parametrize(
    ("card", "corners", "read"),
    [
        # a look-alike misreading is overturned when both corners show the index
        (_card(**{"8G": 0.7, "3G": 0.3}), ("3G", "3G"), "3G"),
        (_card(SR=0.9, **{"2R": 0.1}), ("2R", "2R"), "2R"),
        # ... but one corner alone (the other off the photo) cannot overturn a sure reading
        (_card(SR=0.9, **{"2R": 0.1}), ("2R", NAN), "SR"),
        # corners that disagree with each other leave the whole card's reading
        (_card(**{"6B": 0.8, "9B": 0.2}), ("9B", "6B"), "6B"),
        # corners say nothing where none is seen
        (_card(**{"6B": 0.55, "9B": 0.45}), (NAN, NAN), "6B"),
        # a misread corner (a 5 read as 3 twice) cannot overturn a sure whole card
        (_card(**{"5Y": 0.99, "3Y": 0.005}), ("3Y", "3Y"), "5Y"),
        # the corners judge the symbol, not the colour (their sliver of field under a colour
        # cast is no better evidence than the whole card's field)
        (_card(**{"8G": 0.6, "8Y": 0.4}), ("8Y", "8Y"), "8G"),
        (_card(**{"RB": 0.3, "SB": 0.3, "SG": 0.4}), ("RY", "RY"), "RB"),
    ],
)
def test_corners_weigh_the_whole_card_reading(card: np.ndarray, corners: tuple, read: str
                                              ) -> None:
    out = fuse_table_card(card, np.array([_corner(c) for c in corners]), CLASSES, STRIP)
    assert out.dtype == np.float32
    assert float(out.sum()) == pytest.approx(1.0, abs=1e-5)
    assert CLASSES[int(np.argmax(out))] == read


@pytest.mark.parametrize(
    ("card", "kept"),
    [
        (_card(BACK=0.6, **{"+4": 0.3}), "BACK"),  # the strip network's BACK is UNO's only
        (_card(AS=0.5, **{"3G": 0.4}), "AS"),  # standard faces: the corners know nothing of them
        (_card(JK=0.97), "JK"),
    ],
)
def test_classes_the_corners_do_not_know_keep_their_probability(card: np.ndarray, kept: str
                                                                ) -> None:
    k = CLASSES.index(kept)
    out = fuse_table_card(card, np.array([_corner("W"), _corner("W")]), CLASSES, STRIP)
    assert float(out[k]) == pytest.approx(float(card[k]), rel=1e-5)
    assert float(out.sum()) == pytest.approx(1.0, abs=1e-5)


def test_a_corner_that_always_says_nothing_changes_nothing() -> None:
    card = _card(**{"8G": 0.6, "3G": 0.4})
    out = fuse_table_card(card, np.array([_corner("3G"), _corner("3G")]), CLASSES, STRIP,
                          floor=1.0)
    np.testing.assert_allclose(out, card, rtol=1e-5, atol=1e-7)
    assert 0.0 < TABLE_CORNER_FLOOR < 1.0


@pytest.fixture(scope="module")
def strip() -> StripClassifier:
    return StripClassifier.load()


def test_both_index_corners_of_a_rendered_table_are_read(strip: StripClassifier) -> None:
    scene = render_scene(9_000_002)  # a training seed: 50 UNO cards, some upside down
    read = read_corners(strip, scene.image, [c.quad for c in scene.cards])
    assert read.shape == (len(scene.cards), 2, len(STRIP))
    np.testing.assert_allclose(read.sum(axis=2), 1.0, atol=1e-4)
    codes = np.array(STRIP)[read.argmax(axis=2)]
    right = np.mean([[r == c.code for r in row] for row, c in zip(codes, scene.cards,
                                                                     strict=True)], axis=0)
    assert right.min() > 0.85  # each corner, top-left and the turned bottom-right


@pytest.mark.parametrize(
    ("shift", "seen"),
    [
        ((0.0, 0.0), [True, True]),
        ((-2000.0, 0.0), [False, False]),  # the card entirely off the image
        (None, [True, False]),  # the card's bottom half off the image's bottom edge
    ],
)
def test_a_corner_outside_the_image_is_not_read(strip: StripClassifier,
                                                shift: tuple[float, float] | None,
                                                seen: list[bool]) -> None:
    scene = render_scene(9_000_002)
    quad = scene.cards[0].quad.copy()
    if shift is None:  # move the card so that its lower half hangs off the bottom edge
        quad += [0.0, scene.image.shape[0] - float(quad[:, 1].mean())]
    else:
        quad += shift
    read = read_corners(strip, scene.image, [quad])
    assert [not bool(np.isnan(row).any()) for row in read[0]] == seen


def test_no_cards_no_corners(strip: StripClassifier) -> None:
    image = np.zeros((720, 1280, 3), np.uint8)
    assert read_corners(strip, image, []).shape == (0, 2, len(STRIP))


@pytest.mark.parametrize(
    ("seed", "truth", "misread"),
    [
        (9_000_367, "8B", "3B"),  # the whole card's 8 looks like a 3; its corners do not
        # (the cases of tests/test_detect_layouts.py: search again if the classifier changes)
    ],
)
def test_the_corners_settle_a_misread_table_card_without_the_frame(
        seed: int, truth: str, misread: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = render_scene(seed)
    reader = TableReader.load()
    # read card by card, without the frame's say (vision.consistency)
    monkeypatch.setattr(vision.recognise, "frame_consistent",
                        lambda crops, probs, *args, **kwargs: list(probs))

    def reads() -> list[tuple[str, str]]:
        reader.geometry = None
        reader.reuse = False
        dets = reader.read(scene.image).detections
        assert len(dets) == len(scene.cards)
        near = [min(dets, key=lambda d: float(np.linalg.norm(d.quad - c.quad, axis=1).mean()))
                for c in scene.cards]
        return [(c.code, d.code) for c, d in zip(scene.cards, near, strict=True)
                if c.code != d.code]

    assert reads() == []
    monkeypatch.setattr(vision.recognise, "fuse_table_card", lambda probs, *args: probs)
    assert reads() == [(truth, misread)]


def test_cards_read_again_only_when_new(strip: StripClassifier,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The corners are read with a card's first reading and cached with it: a still table's
    cards, localised again, cost no corner reads."""
    scene = render_scene(9_000_002)
    reader = TableReader.load()
    calls: list[int] = []
    real = vision.recognise.read_corners

    def counted(strip_: StripClassifier, image: np.ndarray, quads: list) -> np.ndarray:
        calls.append(len(quads))
        return real(strip_, image, quads)

    monkeypatch.setattr(vision.recognise, "read_corners", counted)
    n = len(locate_cards(scene.image, TableGeometry.from_markers(scene.image),
                         fanned=False).cards)
    reader.read(scene.image)
    reader._last_small = None  # as if something moved: localise again
    reader.read(scene.image)
    assert calls == [n]
