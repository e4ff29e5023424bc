"""Card outlines in photos without the mat (vision/photo_cards.py) and how an outline is read
from its two index corners (vision/photo_detect.read_quad)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.index_spotter import DEFAULT_SPOTTER
from vision.photo_cards import (
    CARD_H,
    CARD_W,
    INDEX_CENTRE,
    MIN_SIDES,
    WORD_CENTRE,
    card_quads,
    cut,
    edge_contrast,
    index_squares,
    portrait,
    word_squares,
)
from vision.photo_detect import (
    CORNER_CLASSES,
    DEFAULT_CLASSIFIER,
    NONE,
    PhotoImageError,
    PhotoReader,
    corners_agree,
    face_down,
    read_quad,
)
from vision.recognise import Detection

needs_models = pytest.mark.skipif(
    not (DEFAULT_SPOTTER.is_file() and DEFAULT_CLASSIFIER.is_file()),
    reason="no corner models in models/ (cardtable train --corners)")


def _card(centre: tuple[float, float], size: tuple[float, float], angle: float) -> np.ndarray:
    return cv2.boxPoints((centre, size, angle)).astype(np.float32)


def _scene(background: tuple[int, int, int], cards: list[tuple[np.ndarray, tuple[int, ...]]],
           border: tuple[int, int, int] | None = None, noise: float = 6.0) -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.empty((640, 640, 3), np.float32)
    img[:] = background
    for quad, colour in cards:
        cv2.fillConvexPoly(img, quad.astype(np.int32), colour)
        if border is not None:
            cv2.polylines(img, [quad.astype(np.int32)], True, border, 4)
    img += rng.normal(0, noise, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return inter / (cv2.contourArea(a) + cv2.contourArea(b) - inter)


WHITE_ON_WOOD = [_card((200, 250), (150, 210), 20), _card((450, 420), (140, 196), -35)]
BLACK_ON_DESK = [_card((320, 300), (180, 250), 8)]


@pytest.mark.parametrize(("name", "image", "truth"), [
    ("white cards on wood", _scene((40, 80, 130), [(q, (235, 235, 235)) for q in WHITE_ON_WOOD]),
     WHITE_ON_WOOD),
    ("black card, light border, white desk",
     _scene((215, 215, 210), [(q, (25, 25, 25)) for q in BLACK_ON_DESK], border=(170, 190, 200)),
     BLACK_ON_DESK),
    ("empty table", _scene((40, 80, 130), []), []),
    ("flat grey", np.full((480, 640, 3), 128, np.uint8), []),
])
def test_card_outlines_are_found(name: str, image: np.ndarray, truth: list[np.ndarray]) -> None:
    found = card_quads(image)
    for quad in truth:
        assert max((_iou(quad, f.quad) for f in found), default=0.0) > 0.85, name
    if not truth:
        assert found == [], name


@pytest.mark.parametrize(("width", "sides", "found"), [
    (76, MIN_SIDES, True),    # 0.38 of its length: a card foreshortened by a slant
    (76, 0.42, False),        # the corner reader's training outlines stop at 0.42
    (100, 0.42, True),
    (52, MIN_SIDES, False),   # 0.26: a strip, no card
])
def test_a_card_seen_at_a_slant_is_thin(width: int, sides: float, found: bool) -> None:
    quad = _card((320, 300), (width, 200), 12)
    image = _scene((215, 215, 210), [(quad, (25, 25, 25))])
    outlines = card_quads(image, sides=sides)
    assert (max((_iou(quad, f.quad) for f in outlines), default=0.0) > 0.85) == found


def _lit(background: tuple[int, int, int], card: tuple[int, int, int], quad: np.ndarray,
         gradient: float) -> np.ndarray:
    """A white card on a pale table under light falling off across the photo (± ``gradient``
    of the brightness from left to right): every global threshold splits the card."""
    rng = np.random.default_rng(0)
    img = np.empty((640, 640, 3), np.float32)
    img[:] = background
    cv2.fillConvexPoly(img, quad.astype(np.int32), card)
    ramp = np.linspace(1 - gradient, 1 + gradient, 640, dtype=np.float32)
    img *= ramp[None, :, None] * np.sqrt(ramp)[:, None, None]
    img += rng.normal(0, 4.0, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


LARGE_CARD = _card((320, 330), (330, 450), 3)


@pytest.mark.parametrize(("background", "card", "gradient"), [
    ((170, 190, 205), (225, 225, 225), 0.3),   # light wood
    ((180, 195, 210), (230, 230, 230), 0.35),
    ((190, 200, 215), (235, 235, 235), 0.4),   # paler wood, stronger fall-off
    ((200, 205, 210), (230, 230, 230), 0.3),   # grey desk
])
def test_a_white_card_on_a_pale_table_under_a_light_gradient_is_found(
        background: tuple[int, int, int], card: tuple[int, int, int], gradient: float) -> None:
    found = card_quads(_lit(background, card, LARGE_CARD, gradient))
    assert max((_iou(LARGE_CARD, f.quad) for f in found), default=0.0) > 0.85


TOUCHING = [_card((230, 320), (160, 224), 12), _card((395, 330), (160, 224), -20)]
ROW = [_card((x, 320), (150, 210), a) for x, a in ((150, -25), (310, 15), (470, -25))]
ON_A_STRIP = [_card((300, 300), (160, 224), 5)]
STRIP = _card((300, 470), (600, 40), 0)
L_STRIPS = [_card((300, 200), (300, 50), 0), _card((175, 300), (50, 250), 0)]
WOOD, WHITE = (40, 80, 130), (235, 235, 235)
DESK, BLACK = (215, 215, 210), (25, 25, 25)


@pytest.mark.parametrize(("name", "image", "truth"), [
    ("white cards touching on wood", _scene(WOOD, [(q, WHITE) for q in TOUCHING]), TOUCHING),
    ("black cards touching on a desk", _scene(DESK, [(q, BLACK) for q in TOUCHING]), TOUCHING),
    # three in a row: the two at the ends (the middle one's notches are too shallow)
    ("a row of three white cards", _scene(WOOD, [(q, WHITE) for q in ROW]), ROW[::2]),
])
def test_cards_that_touch_are_split_at_the_notches(name: str, image: np.ndarray,
                                                   truth: list[np.ndarray]) -> None:
    """Two cards that touch are one region, no card-shaped quad: the finder alone finds
    neither; cut at the notches where their outlines meet, each is a piece of card shape."""
    whole = card_quads(image)
    assert all(max((_iou(q, f.quad) for f in whole), default=0.0) < 0.7 for q in truth), name
    found = card_quads(image, split=True)
    for quad in truth:
        assert max((_iou(quad, f.quad) for f in found if f.piece), default=0.0) > 0.75, name


@pytest.mark.parametrize(("name", "image", "no_card"), [
    ("a card on a strip of table", _scene(WOOD, [(q, WHITE) for q in ON_A_STRIP + [STRIP]]),
     [STRIP]),
    ("two strips in an L", _scene(WOOD, [(q, WHITE) for q in L_STRIPS]), L_STRIPS),
    ("black strips in an L", _scene(DESK, [(q, BLACK) for q in L_STRIPS]), L_STRIPS),
    ("one card alone", _scene(WOOD, [(ON_A_STRIP[0], WHITE)]), []),
])
def test_splitting_makes_no_card_of_a_strip(name: str, image: np.ndarray,
                                            no_card: list[np.ndarray]) -> None:
    """A strip of table or of another card is too long and thin to be a card, whole or cut;
    a card alone is a whole region, never a piece; and the whole outlines are exactly those
    found without splitting (the reader's training crops are cut from them)."""
    plain = card_quads(image)
    found = card_quads(image, split=True)
    whole = [f for f in found if not f.piece]
    assert len(whole) == len(plain), name
    assert all(np.array_equal(a.quad, b.quad) for a, b in zip(whole, plain, strict=True)), name
    for strip in no_card:
        assert max((_iou(strip, f.quad) for f in found), default=0.0) < 0.3, name
    if not no_card:
        assert not [f for f in found if f.piece], name


@pytest.mark.parametrize(("quad", "top"), [
    (np.float32([[0, 0], [250, 0], [250, 350], [0, 350]]), (0, 1)),  # portrait already
    (np.float32([[0, 0], [350, 0], [350, 250], [0, 250]]), (1, 2)),  # landscape: rolled
])
def test_portrait_puts_a_short_side_first(quad: np.ndarray, top: tuple[int, int]) -> None:
    q = portrait(quad)
    assert np.allclose(q[:2], quad[list(top)])
    assert np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1])


def test_index_squares_sit_at_diagonal_corners() -> None:
    quad = np.float32([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]])
    sq = index_squares(quad)
    assert sq.shape == (4, 4, 2)
    cx, cy = INDEX_CENTRE
    np.testing.assert_allclose(sq[0].mean(0), (cx * CARD_W, cy * CARD_H), atol=1e-3)
    np.testing.assert_allclose(sq[1].mean(0), ((1 - cx) * CARD_W, (1 - cy) * CARD_H), atol=1e-3)
    # the bottom-right crop is turned 180°: its first corner is the one nearest the card's corner
    assert np.linalg.norm(sq[1][0] - (CARD_W, CARD_H)) < np.linalg.norm(sq[1][2] - (CARD_W,
                                                                                     CARD_H))
    # the other quarter turn reads the other diagonal
    assert sq[2].mean(0)[0] < CARD_W / 2 < sq[3].mean(0)[0]
    assert sq[2].mean(0)[1] > CARD_H / 2 > sq[3].mean(0)[1]


@pytest.mark.parametrize(("squares", "centre", "side"), [
    (index_squares, INDEX_CENTRE, 0.28 * CARD_H),
    (word_squares, WORD_CENTRE, CARD_W),        # the joker's word: a square as wide as the card
])
def test_end_squares_sit_about_a_point_and_its_turn(
        squares: Callable[[np.ndarray], np.ndarray], centre: tuple[float, float],
        side: float) -> None:
    quad = np.float32([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]])
    sq = squares(quad)
    cx, cy = centre
    np.testing.assert_allclose(sq[0].mean(0), (cx * CARD_W, cy * CARD_H), atol=1e-3)
    np.testing.assert_allclose(sq[1].mean(0), ((1 - cx) * CARD_W, (1 - cy) * CARD_H), atol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(sq[:2, 1] - sq[:2, 0], axis=1), side, rtol=1e-4)
    # the bottom square is turned 180°, so the printing at both ends is cut upright
    np.testing.assert_allclose(sq[1][0], (CARD_W, CARD_H) - sq[0][0], atol=1e-3)


def test_cut_outside_the_photo_repeats_its_edge() -> None:
    image = np.zeros((100, 100, 3), np.uint8)
    image[:, :50] = 255
    crop = cut(image, np.float32([[-20, -20], [30, -20], [30, 30], [-20, 30]]), 48)
    assert crop.shape == (48, 48, 3) and crop[0, 0].min() == 255


def _p(**mass: float) -> np.ndarray:
    """A probability row over CORNER_CLASSES with the given masses, the rest spread evenly."""
    row = np.zeros(len(CORNER_CLASSES))
    for code, m in mass.items():
        row[CORNER_CLASSES.index(code)] = m
    rest = 1 - row.sum()
    row[row == 0] = rest / int((row == 0).sum())
    return row


E = _p(none=0.999)  # an empty corner
TEN_H = "10H"


@pytest.mark.parametrize(("rows", "code", "least", "most"), [
    # both corners agree (first quarter turn): the code, confidently
    ([_p(AS=0.9), _p(AS=0.8), E, E], "AS", 0.95, 1.0),
    # the card read the other way round: the second pair holds the indices
    ([E, E, _p(QC=0.9), _p(QC=0.7)], "QC", 0.9, 1.0),
    # one index under a finger: the other decides alone
    ([_p(**{TEN_H: 0.95}), E, E, E], TEN_H, 0.9, 1.0),
    # two corners disagree: no confident reading
    ([_p(AS=0.9), _p(KD=0.85), E, E], "AS", 0.0, 0.6),
    # no index anywhere: no card
    ([E, E, E, E], None, 0.0, 0.0),
])
def test_read_quad(rows: list[np.ndarray], code: str | None, least: float, most: float) -> None:
    got, conf, dist = read_quad(np.array(rows), CORNER_CLASSES)
    assert got == code
    assert least <= conf <= most
    assert dist.shape == (len(CORNER_CLASSES),) and dist[CORNER_CLASSES.index(NONE)] == 0
    assert abs(dist.sum() - 1) < 1e-5


@pytest.mark.parametrize(("rows", "code"), [
    ([_p(AS=0.9), _p(AS=0.85), E, E], "AS"),                 # both corners, each ≥ 0.8
    ([E, E, _p(QC=0.9), _p(QC=0.95)], "QC"),                 # the other quarter turn
    ([_p(AS=0.9), _p(AS=0.6), E, E], None),                  # one of them unsure
    ([_p(AS=0.9), _p(AC=0.9), E, E], None),                  # they name different codes
    ([_p(**{TEN_H: 0.95}), E, E, E], None),                  # one corner alone is no agreement
    ([_p(KD=0.9), _p(KD=0.9), _p(QS=0.99), _p(QS=0.99)], "QS"),  # the turn with more index
    ([E, E, E, E], None),
])
def test_corners_agree(rows: list[np.ndarray], code: str | None) -> None:
    assert corners_agree(np.array(rows), CORNER_CLASSES) == code


@needs_models
@pytest.mark.parametrize("image", [
    None, np.zeros((640, 640), np.uint8), np.zeros((8, 8, 3), np.uint8), "a.jpg",
])
def test_bad_images_are_refused(image: object) -> None:
    with pytest.raises(PhotoImageError, match="expected a BGR image"):
        PhotoReader.load().detect(image)  # type: ignore[arg-type]


def test_the_reader_trainer_exports_what_the_reader_loads(tmp_path: Path) -> None:
    """One epoch on a handful of crops: one network with both heads exported, described and
    loadable, run once for both factors (a smoke test of `cardtable train --corners --part
    reader`, not a measurement)."""
    pytest.importorskip("torch")
    import json

    from vision.photo_detect import CORNER_SIZE, CornerClassifier
    from vision.train.corners import READER_SIZE, CropSet, calibrate_classifier, train_reader

    rng = np.random.default_rng(0)
    sets = {name: CropSet() for name in ("train", "val")}
    for code in ("AS", "10H", "JK", NONE) * 3:
        for s in sets.values():
            s.add(code, rng.integers(0, 256, (CORNER_SIZE, CORNER_SIZE, 3), dtype=np.uint8))
    factors = train_reader(sets, tmp_path, READER_SIZE, 1, log=lambda _: None)
    meta_path = tmp_path / "corner_classifier.json"
    meta_path.write_text(json.dumps({"classes": list(CORNER_CLASSES), "input_size": READER_SIZE,
                                     "crop_size": CORNER_SIZE, "factors": factors}))
    meta = calibrate_classifier(meta_path, sets["val"])
    assert [(f["part"], f["output"]) for f in meta["factors"]] == [("rank", 0), ("suit", 1)]
    assert len({f["model"] for f in meta["factors"]}) == 1
    assert meta["val_crops"] == 12 and 0 <= meta["val_top1"] <= 1
    clf = CornerClassifier.load(meta_path)
    assert clf.factors[0].session is clf.factors[1].session
    probs = clf.classify(sets["val"].crops[:2])
    assert probs.shape == (2, len(CORNER_CLASSES))


@pytest.mark.parametrize(("first", "second", "same"), [
    ((0, "float32"), (0, "float32"), True),
    ((0, "float32"), (1, "float32"), False),
    ((0, "bfloat16"), (0, "bfloat16"), True),
    ((0, "float32"), (0, "bfloat16"), False),  # another precision is another recipe
])
def test_the_reader_seed_and_precision_decide_the_network(
        tmp_path: Path, first: tuple[int, str], second: tuple[int, str], same: bool) -> None:
    """One seed and precision give one network (the shipped reader is seed 0's in float32),
    another seed or precision another: what lets recipes be compared over seeds
    (`cardtable train --corners --part reader --seed N`) and screens within one precision
    (`python -m vision.train.leave_out --precision bfloat16`). Either exports a float32 ONNX."""
    pytest.importorskip("torch")
    import onnxruntime as ort

    from vision.photo_detect import CORNER_SIZE
    from vision.train.corners import READER_FILE, READER_SIZE, CropSet, train_reader

    rng = np.random.default_rng(0)
    crops = CropSet()
    for code in ("AS", "10H", "JK", NONE) * 4:
        crops.add(code, rng.integers(0, 256, (CORNER_SIZE, CORNER_SIZE, 3), dtype=np.uint8))
    x = rng.random((4, 3, READER_SIZE, READER_SIZE), dtype=np.float32)
    outputs = []
    for n, (seed, precision) in enumerate((first, second)):
        train_reader({"train": crops}, tmp_path / str(n), READER_SIZE, 1, lambda _: None, seed,
                     precision)
        session = ort.InferenceSession(str(tmp_path / str(n) / READER_FILE))
        assert session.get_inputs()[0].type == "tensor(float)"
        outputs.append(session.run(None, {"images": x})[0])
    assert np.array_equal(outputs[0], outputs[1]) == same


def test_an_unknown_precision_is_refused_before_training(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from vision.train.corners import READER_SIZE, CropSet, train_reader

    with pytest.raises(ValueError, match="unknown precision 'float16'"):
        train_reader({"train": CropSet()}, tmp_path, READER_SIZE, 1, lambda _: None, 0,
                     "float16")
    assert not list(tmp_path.iterdir())


def _graph(path: Path) -> tuple[list[str], set[str], set[str]]:
    """An ONNX file's op types, the tensors QuantizeLinear takes, and the softmaxes' tensors."""
    onnx = pytest.importorskip("onnx")  # the [train] extra's

    nodes = onnx.load(str(path)).graph.node
    return ([n.op_type for n in nodes],
            {n.input[0] for n in nodes if n.op_type == "QuantizeLinear"},
            {t for n in nodes if n.op_type == "Softmax" for t in (*n.input, *n.output)})


def test_the_8_bit_reader_keeps_the_float_one_and_its_probabilities(tmp_path: Path) -> None:
    """`cardtable train --corners --part reader` ships the reader with 8-bit convolutions and
    dense layers (quantize_reader): the float file is kept where asked, the 8-bit one reads
    like it, and its softmax stays float (in 8 bits a probability under 1/256 became 0, which
    the four-turn log-average took for certainty)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import onnxruntime as ort

    from vision.photo_detect import CORNER_SIZE, reader_input
    from vision.train.corners import (
        READER_FILE,
        READER_SIZE,
        CropSet,
        quantize_reader,
        train_reader,
    )

    rng = np.random.default_rng(0)
    crops = CropSet()
    for code in ("AS", "10H", "JK", NONE) * 8:
        crops.add(code, rng.integers(0, 256, (CORNER_SIZE, CORNER_SIZE, 3), dtype=np.uint8))
    train_reader({"train": crops}, tmp_path, READER_SIZE, 2, lambda _: None)
    path, keep = tmp_path / READER_FILE, tmp_path / "runs" / "float.onnx"
    exported = path.read_bytes()
    assert quantize_reader(path, crops.crops, READER_SIZE, keep) == len(crops.crops)
    assert keep.read_bytes() == exported
    ops, quantized, softmax = _graph(path)
    assert ops.count("Conv") == 6 and "QuantizeLinear" in ops and "DequantizeLinear" in ops
    assert not quantized & softmax
    assert "QuantizeLinear" not in _graph(keep)[0]
    x = reader_input(crops.crops)
    eight, flt = (ort.InferenceSession(str(p)).run(None, {"images": x}) for p in (path, keep))
    for a, b in zip(eight, flt, strict=True):
        assert a.dtype == np.float32 and (a > 0).all()
        assert np.abs(a - b).max() < 0.05


@needs_models
def test_the_shipped_reader_never_rounds_a_probability_to_zero() -> None:
    """The shipped reader's softmax is float: the four-turn log-average needs every
    probability (an 8-bit softmax gave exact zeros on these crops)."""
    import onnxruntime as ort

    from vision.photo_detect import reader_input
    from vision.train.corners import READER_FILE, READER_SIZE

    rng = np.random.default_rng(0)
    x = reader_input([rng.integers(0, 256, (READER_SIZE, READER_SIZE, 3), dtype=np.uint8)
                      for _ in range(32)])
    session = ort.InferenceSession(str(DEFAULT_CLASSIFIER.parent / READER_FILE))
    for probs in session.run(None, {"images": x}):
        assert (probs > 0).all()
        assert np.allclose(probs.sum(1), 1, atol=1e-4)


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "--part", "reader"], "add --corners"),
    (["train", "--part", "spotter"], "add --corners"),
    (["train", "--corners", "--part", "card"], "not a part of the corner models"),
    (["train", "--corners", "--part", "strip"], "not a part of the corner models"),
    (["train", "--corners", "--part", "mask"], "not a part of the corner models"),
    (["train", "--seed", "1"], "--seed is the whole-card classifier's (--part card) or the"),
    (["train", "--part", "strip", "--seed", "1"], "--seed is the whole-card classifier's"),
    (["train", "--part", "card", "--wide"], "--wide is the corner-strip network's"),
    (["train", "--wide"], "give --part strip"),
])
def test_corner_parts_need_corners(argv: list[str], message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ultralytics")
    from protocol_runner.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "missing"), [
    (["train", "--corners", "--part", "reader"], "torch"),
    (["train", "--corners", "--part", "reader"], "onnx"),
    (["train", "--corners", "--part", "spotter", "--seed", "1"], "torch"),  # a seed is taken
    (["train", "--corners"], "onnx"),
    (["train", "--part", "card"], "ultralytics"),
    (["train", "--part", "mask"], "torch"),
    (["train", "--part", "mask"], "onnx"),
])
def test_train_names_the_missing_extra_before_it_starts(
        argv: list[str], missing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A package of the [train] extra missing is said before any data is built or folder made,
    not after the hours of training (the reader's 8-bit step needs onnx)."""
    import importlib.util

    from protocol_runner.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == missing else real(name, *rest))
    out, runs = tmp_path / "out", tmp_path / "runs"
    assert main([*argv, "--out", str(out), "--runs", str(runs)]) == 2
    assert "pip install -e '.[train]'" in capsys.readouterr().err
    assert not out.exists() and not runs.exists()


DARK_CARD = _card((450, 300), (140, 196), 10)
FACE_UP = _card((180, 300), (140, 196), -5)
TABLE = (200, 190, 180)
BACK_SCENE = _scene(TABLE, [(DARK_CARD, (30, 30, 35)), (FACE_UP, (245, 245, 245))])
AT_EDGE = _card((40, 300), (140, 196), 0)
EDGE_SCENE = _scene(TABLE, [(AT_EDGE, (30, 30, 35))])


@pytest.mark.parametrize(("image", "quad", "least", "most"), [
    (BACK_SCENE, DARK_CARD, 0.5, 1.0),                          # a dark card on a light table
    (BACK_SCENE, _card((450, 300), (136, 192), 10), 0.5, 1.0),  # its outline 2 px inside it
    (BACK_SCENE, FACE_UP, 0.1, 0.3),                            # a white card on it
    (BACK_SCENE, _card((320, 560), (100, 140), 0), 0.0, 0.03),  # a patch of bare table
    (BACK_SCENE, _card((-300, -300), (50, 70), 0), 0.0, 0.0),   # wholly outside the photo
    (EDGE_SCENE, AT_EDGE, 0.5, 1.0),                      # cut by the frame: the part in view
])
def test_edge_contrast(image: np.ndarray, quad: np.ndarray, least: float, most: float) -> None:
    assert least <= edge_contrast(image, quad) <= most


def _face(quad: np.ndarray) -> Detection:
    c = quad.mean(0)
    return Detection("7H", 0.99, ((quad - c) * 1.15 + c).astype(np.float32))


@pytest.mark.parametrize(("blank", "faces", "backs"), [
    ([(DARK_CARD, 0.6)], [_face(FACE_UP)], 1),                              # a face-down card
    ([(DARK_CARD, 0.6)], [], 0),                                  # no face-up card: no size
    ([(_card((450, 300), (60, 84), 10), 0.6)], [_face(FACE_UP)], 0),        # too small
    ([(_card((320, 300), (400, 560), 0), 0.6)], [_face(FACE_UP)], 0),       # too large
    ([(_card((190, 300), (140, 196), 0), 0.6)], [_face(FACE_UP)], 0),       # on the face-up card
    ([(_card((320, 520), (140, 196), 90), 0.6)], [_face(FACE_UP)], 0),      # bare table
    ([], [_face(FACE_UP)], 0),
])
def test_face_down_cards(blank: list, faces: list[Detection], backs: int) -> None:
    found = face_down(BACK_SCENE, blank, faces)
    assert len(found) == backs
    assert all(d.code == "BACK" and d.confidence == 0.6 for d in found)
