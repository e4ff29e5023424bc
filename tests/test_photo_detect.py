"""The photo reader of standard cards without the mat (corner indices found, read, paired).

The measurements use the held-out split of the shared CC BY photos (scene groups never trained
on, :mod:`vision.photo_split`); they are skipped where that folder or the models are absent.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.cli import main
from vision.evaluate import _contains, read_names, read_yolo_labels
from vision.index_spotter import DEFAULT_SPOTTER
from vision.photo_cards import MIN_SIDES, card_quads, portrait
from vision.photo_detect import (
    CORNER_CLASSES,
    CORNER_SIZE,
    DEFAULT_CLASSIFIER,
    GREY_SPREAD,
    INDEX_ALONE,
    NONE,
    OUTLINE_CODES,
    PAIR_EACH,
    PAIR_JOINT,
    Corner,
    CornerClassifier,
    PhotoModelError,
    PhotoReader,
    _grown,
    _infer,
    _pair,
    corner_crop,
    greyscale,
    joint_reading,
    one_per_code,
    part_of,
    plain_backs,
    take_in_indices,
)
from vision.photo_split import (
    group_of,
    in_split,
    in_validation,
    scene_kind,
    split_of,
    trained_on,
)
from vision.pip_suits import DEFAULT_PIP_MODEL, PipSuitReader, fuse_suits
from vision.recognise import Detection
from vision.still_detect import is_standard_set, still_detector
from vision.synth.faces import render_standard

PHOTOS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / \
    "playing-cards-photos-cc-by"
needs_models = pytest.mark.skipif(
    not (DEFAULT_SPOTTER.is_file() and DEFAULT_CLASSIFIER.is_file()),
    reason="no corner models in models/ (cardtable train --corners)")
needs_photos = pytest.mark.skipif(not (PHOTOS / "data.yaml").is_file(),
                                  reason="shared CC BY photos not found")


@pytest.mark.parametrize(("name", "group"), [
    ("IMG_20220921_193915_jpg.rf.10adff.jpg", "burst-20220921-1939"),
    ("IMG_20220921_193959_jpg.rf.aa.jpg", "burst-20220921-1939"),
    ("IMG_20220921_194010_jpg.rf.bb.jpg", "burst-20220921-1940"),
    ("IMG_7702_JPG.rf.70cf.jpg", "series-770"),
    ("IMG_7709_JPG.rf.5519.jpg", "series-770"),
    ("IMG_7710_JPG.rf.1bd4.jpg", "series-771"),
    ("10c-fd3b3136-3991-11ed-a342-ec2e98cc7ff6_jpg.rf.abf3.jpg", "webcam-10c"),
    ("QH-fd3b3136-3991-11ed-a342-ec2e98cc7ff6_jpg.rf.abf3.jpg", "webcam-qh"),
    ("holiday.rf.123.jpg", "file-holiday"),
    ("some/dir/holiday.jpg", "file-holiday.jpg"),
])
def test_photos_are_grouped_by_scene(name: str, group: str) -> None:
    assert group_of(name) == group
    assert scene_kind(name) == group.split("-")[0]


def test_split_is_by_group_and_deterministic() -> None:
    names = [f"IMG_20220921_19{m:02d}{s:02d}_jpg.rf.x.jpg" for m in range(60) for s in (1, 30)]
    splits = [split_of(n) for n in names]
    assert splits == [split_of(n) for n in names]
    for a, b in zip(splits[::2], splits[1::2], strict=True):
        assert a == b  # the two photos of one minute's burst never straddle the split
    assert 0.1 < splits.count("test") / len(splits) < 0.35


def _series_photo(split: str, validation: bool) -> str:
    """A numbered-series photo name of ``split`` whose group is (or is not) a validation group."""
    return next(name for k in range(0, 100_000, 10) if split_of(name := f"IMG_{k}_JPG.rf.x.jpg")
                == split and in_validation(name) is validation)


@pytest.mark.parametrize(("photo", "split", "expected"), [
    (("test", False), "all", True), (("test", False), "train", False),
    (("test", False), "test", True), (("test", False), "val", False),
    (("test", True), "val", False),  # the held-out split never lends a group to validation
    (("train", True), "val", True), (("train", True), "train", True),
    (("train", False), "val", False), (("train", False), "test", False),
])
def test_in_split(photo: tuple[str, bool], split: str, expected: bool) -> None:
    assert in_split(_series_photo(*photo), split) is expected


@pytest.mark.parametrize(("photo", "trained"), [
    (("train", False), True),  # the readers train on it
    (("train", True), False),  # a validation group: fits their temperatures, never trained on
    (("test", False), False),  # held out
])
def test_trained_on(photo: tuple[str, bool], trained: bool) -> None:
    assert trained_on(_series_photo(*photo)) is trained


@pytest.mark.parametrize("split", ["validation", "held-out", ""])
def test_unknown_split_is_refused(split: str) -> None:
    with pytest.raises(ValueError, match=f"unknown split '{split}'"):
        in_split("a.jpg", split)


@pytest.mark.parametrize(("names", "expected"), [
    (["AS", "10h", "JK", "BACK"], True),
    (["7R", "AS"], False),
    ([], False),
])
def test_is_standard_set(names: list[str], expected: bool) -> None:
    assert is_standard_set(names) is expected


def test_classes_are_the_standard_faces_jokers_and_none() -> None:
    assert len(CORNER_CLASSES) == 54 and NONE in CORNER_CLASSES and "JK" in CORNER_CLASSES


@pytest.mark.parametrize("box", [(10, 20, 40, 70), (-15, -15, 10, 10), (600, 600, 700, 660)])
def test_corner_crop_is_a_square_around_the_box(box: tuple[int, int, int, int]) -> None:
    image = np.zeros((640, 640, 3), np.uint8)
    image[30:60, 15:35] = 255
    crop = corner_crop(image, box)
    assert crop.shape == (CORNER_SIZE, CORNER_SIZE, 3)
    if box == (10, 20, 40, 70):  # the white patch sits in the middle of the crop
        assert crop[CORNER_SIZE // 2, CORNER_SIZE // 2].min() > 200
        assert crop[2, 2].max() < 50


@pytest.mark.parametrize(("code", "part", "label"), [
    ("10H", "rank", "10"), ("10H", "suit", "H"), ("AS", "rank", "A"), ("QC", "code", "QC"),
    ("JK", "rank", "JK"), ("JK", "suit", None), (NONE, "rank", NONE), (NONE, "suit", None),
])
def test_part_of(code: str, part: str, label: str | None) -> None:
    assert part_of(code, part) == label


def test_unknown_part_is_refused() -> None:
    with pytest.raises(PhotoModelError, match="unknown classifier part 'colour'"):
        part_of("AS", "colour")


@pytest.mark.parametrize("text", ["{", "{}", '{"classes": ["AS"], "input_size": 64}',
                                  '{"classes": ["AS"], "input_size": 64, "factors": '
                                  '[{"model": "missing.onnx", "part": "rank", "classes": []}]}'])
def test_a_bad_classifier_description_says_how_to_rebuild(tmp_path: Path, text: str) -> None:
    path = tmp_path / "corner_classifier.json"
    path.write_text(text)
    with pytest.raises(PhotoModelError, match="cardtable train --corners"):
        CornerClassifier.load(path)


@needs_models
def test_factor_probabilities_multiply_into_codes() -> None:
    """P(7H) = P(rank 7) x P(suit H); JK and none keep their rank probability; rows sum to 1."""
    clf = CornerClassifier.load()
    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 256, (CORNER_SIZE, CORNER_SIZE, 3), dtype=np.uint8)
             for _ in range(3)]
    probs = clf.classify(crops)
    rank, suit = (clf.factor_probs(f, crops) for f in clf.factors)
    assert probs.shape == (3, len(CORNER_CLASSES))
    np.testing.assert_allclose(probs.sum(1), 1, atol=1e-5)
    r7, sh = clf.factors[0].classes.index("7"), clf.factors[1].classes.index("H")
    np.testing.assert_allclose(probs[:, clf.classes.index("7H")], rank[:, r7] * suit[:, sh],
                               rtol=1e-4)
    rjk = clf.factors[0].classes.index("JK")
    np.testing.assert_allclose(probs[:, clf.classes.index("JK")], rank[:, rjk], rtol=1e-4)


@needs_models
@pytest.mark.parametrize("sure", [0.0, 0.5, 0.9, 2.0])
def test_only_crops_surely_without_an_index_are_read_at_one_turn(sure: float) -> None:
    """A crop whose first reading (as cut) gives ``none`` at ``sure`` or more keeps it; any
    other is read at all four quarter turns, its log-probabilities averaged (``sure`` 2.0:
    every crop at four turns; 0.0: every crop at one)."""
    clf = CornerClassifier.load()
    face = render_standard("7H", (200, 300))
    rng = np.random.default_rng(1)
    crops = [np.full((CORNER_SIZE, CORNER_SIZE, 3), 235, np.uint8),  # a blank corner
             cv2.resize(face[:70, :45], (CORNER_SIZE, CORNER_SIZE)),  # an index
             cv2.resize(face[110:190, 60:140], (CORNER_SIZE, CORNER_SIZE)),  # the middle
             *(rng.integers(0, 256, (CORNER_SIZE, CORNER_SIZE, 3), dtype=np.uint8)
               for _ in range(3))]
    session = clf.factors[0].session
    raw = [_infer(session, [np.rot90(c, k) for c in crops]) for k in range(4)]

    def calibrated(turns: range) -> np.ndarray:
        probs = []
        for f in clf.factors:
            logp = np.mean([np.log(np.maximum(raw[k][f.output], 1e-12)) for k in turns], 0)
            z = np.exp(logp / f.temperature - (logp / f.temperature).max(1, keepdims=True))
            probs.append(z / z.sum(1, keepdims=True))
        return clf.codes(probs)

    first, every = calibrated(range(1)), calibrated(range(4))
    assert not np.allclose(first, every, atol=1e-3)  # the turns do change the readings
    got = replace(clf, sure=sure).classify(crops)
    at_once = first[:, CORNER_CLASSES.index(NONE)] >= sure
    assert at_once.all() == (sure == 0.0) and at_once.any() == (sure <= 0.9)  # mixed between
    np.testing.assert_allclose(got[at_once], first[at_once], atol=1e-5)
    np.testing.assert_allclose(got[~at_once], every[~at_once], atol=1e-5)


def _table_with_card(card: int | str, size: tuple[float, float] = (90, 130),
                     table: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """A 640 × 640 photo of a table of grey ``table`` (with a little grain) and one card turned
    20° lying on it: of grey ``card``, or ``"print"``: a face's print (noise of every grey).
    Returns the photo and the card's outline."""
    rng = np.random.default_rng(3)
    img = np.clip(rng.normal(table, 3, (640, 640, 3)), 0, 255).astype(np.uint8)
    quad = cv2.boxPoints(((320, 320), size, 20.0)).astype(np.float32)
    mask = np.zeros((640, 640), np.uint8)
    cv2.fillConvexPoly(mask, quad.astype(np.int32), 1)
    face = rng.integers(0, 256, img.shape, dtype=np.uint8) if card == "print" \
        else np.clip(rng.normal(card, 3, img.shape), 0, 255).astype(np.uint8)
    img[mask > 0] = face[mask > 0]
    return img, quad


@pytest.mark.parametrize(("card", "size", "table", "face_at", "backs"), [
    (30, (90, 130), 200, None, 1),  # a plain black back on a light desk
    (235, (90, 130), 60, None, 1),  # a plain white back on a dark table
    ("print", (90, 130), 200, None, 0),  # a face's print is no plain back
    (30, (40, 130), 200, None, 0),  # too long and thin for a card (aspect 3.25)
    (30, (125, 130), 200, None, 1),  # as square as a card seen at a slant (RULE 71)
    (30, (90, 95), 200, None, 1),  # an upright card (90 x 126) in a 3:4 photo squeezed to 1:1
    (30, (30, 45), 200, None, 0),  # a speck, not a card (0.3% of the photo)
    (200, (90, 130), 200, None, 0),  # the table itself: no edge
    (30, (90, 130), 200, (330, 330), 0),  # on a face-up card already found
    (30, (90, 130), 200, (100, 100), 1),  # beside one, and of its size
])
def test_a_plain_outline_with_no_index_is_a_face_down_card(
        card: int | str, size: tuple[float, float], table: int,
        face_at: tuple[int, int] | None, backs: int) -> None:
    from vision.recognise import Detection

    img, quad = _table_with_card(card, size, table)
    found = [] if face_at is None else [Detection("7H", 0.99, cv2.boxPoints(
        (face_at, (90 * 1.15, 130 * 1.15), 0.0)).astype(np.float32))]
    got = plain_backs(img, [(quad, 0.0)], found)
    assert [d.code for d in got] == ["BACK"] * backs
    if backs:
        assert got[0].confidence == pytest.approx(0.9)
        np.testing.assert_allclose(got[0].quad.mean(0), quad.mean(0), atol=1.0)


@pytest.mark.parametrize(("face", "backs"), [
    ((90, 130), 1),  # the face-up card's size
    ((64, 92), 1),  # a face-up card farther from the camera: the back twice its area (RULE 91)
    ((62, 90), 1),  # 2.1 times its area, within 1 / PLAIN_SIZE (2.22)
    ((52, 75), 0),  # three times its area: a table's patch, not a card of this photo
    ((150, 210), 0),  # 0.37 times its area: a piece of something, not a card
])
def test_a_plain_face_down_card_may_be_twice_a_face_up_cards_area(
        face: tuple[int, int], backs: int) -> None:
    """In a phone photo taken at a slant a card near the camera covers twice the area of one
    far from it (training split IMG_7814 and IMG_7816): a plain back is sized against the
    face-up cards within :data:`PLAIN_SIZE`, looser than other face-down cards' ``BACK_SIZE``."""
    from vision.recognise import Detection

    img, quad = _table_with_card(30, (90, 130), 200)
    found = [Detection("7H", 0.99, cv2.boxPoints(
        ((90, 90), (face[0] * 1.15, face[1] * 1.15), 0.0)).astype(np.float32))]
    assert [d.code for d in plain_backs(img, [(quad, 0.0)], found)] == ["BACK"] * backs


@needs_models
@needs_photos
@pytest.mark.parametrize("stem", ["IMG_7814_JPG", "IMG_7816_JPG"])
def test_a_face_down_card_near_the_camera_is_found(photo_reader: PhotoReader,
                                                   stem: str) -> None:
    """Training-split photos (models/HISTORY.md, RULE 91): a plain black back near the camera
    covers about twice the area of the face-up card farther off, and is found."""
    image, labels = _photo(stem)
    found = photo_reader.detect(image)
    backs = [(x, y) for c, x, y in labels if c == "BACK"]
    assert sum(any(d.code == "BACK" and _contains(d, x, y) for d in found)
               for x, y in backs) == len(backs)


@needs_models
@pytest.mark.parametrize(("left", "backs"), [
    (200, 1),  # a plain white card lying wholly in view
    (0, 0),  # the same against the photo's left edge: a wall panel's shape as much as a card's
    (1, 0),  # within EDGE_GAP of it
    (12, 1),  # clear of it
])
def test_a_blank_outline_cut_by_the_frame_is_no_face_down_card(photo_reader: PhotoReader,
                                                                left: int, backs: int) -> None:
    """RULE 70 (sixty-sixth session): an outline with no index is a face-down card only when
    it lies wholly in the photo (`vision.photo_cards.clear_of_edge`)."""
    img = np.full((480, 640, 3), (40, 110, 40), np.uint8)
    img += np.random.default_rng(0).integers(0, 6, img.shape, dtype=np.uint8)
    cv2.rectangle(img, (left, 150), (left + 110, 310), (235, 235, 235), -1)
    found, _ = photo_reader.cards_and_indices(img)
    assert [d.code for d in found] == ["BACK"] * backs


FACE_UP = Detection("7H", 0.99, np.float32([[480, 140], [606, 140], [606, 324], [480, 324]]))
"""A face-up card found at the right of the photos below, the size of the card drawn there."""


@needs_models
@pytest.mark.parametrize(("left", "heat", "centre", "found", "backs"), [
    # a plain white card on a green table; a face-down peak of the spotter at ``centre``
    (0, 0.4, (55, 230), [FACE_UP], 1),  # cut by the frame (no back by RULE 70), a faint peak
    (200, 0.3, (255, 230), [FACE_UP], 1),  # wholly in view, at the least heat (``min_score``)
    (0, 0.29, (55, 230), [FACE_UP], 0),  # below it
    (0, None, None, [FACE_UP], 0),  # no peak
    (0, 0.4, (400, 230), [FACE_UP], 0),  # the peak on the table, beside the card
    (0, 0.4, (55, 230), [], 0),  # no other card found in the photo
    (-1, 0.4, (55, 230), [FACE_UP], 0),  # a card with a UNO face's oval and numeral
])
def test_a_faint_face_down_peak_in_a_plain_outline_beside_cards_found_is_a_back(
        photo_reader: PhotoReader, left: int, heat: float | None,
        centre: tuple[int, int] | None, found: list[Detection], backs: int) -> None:
    """RULE 96 (eighty-third session): in a photo where cards were found, the spotter's
    face-down peak under ``back_score`` and a plain card outline with no index are witnesses of
    one face-down card together; ``left`` -1: the card at 0 with a red oval and a numeral."""
    img = np.full((480, 640, 3), (40, 110, 40), np.uint8)
    img += np.random.default_rng(0).integers(0, 6, img.shape, dtype=np.uint8)
    cv2.rectangle(img, (max(left, 0), 150), (max(left, 0) + 110, 310), (235, 235, 235), -1)
    if left < 0:
        cv2.ellipse(img, (55, 230), (40, 65), 30, 0, 360, (30, 30, 200), -1)
        cv2.putText(img, "7", (30, 265), cv2.FONT_HERSHEY_SIMPLEX, 3, (235, 235, 235), 8)
        left = 0
    peaks = [] if centre is None else \
        [Corner(np.float32([centre[0] - 20, centre[1] - 20, centre[0] + 20, centre[1] + 20]),
                heat, "back")]
    _, blank = photo_reader.read_outlines(img)
    backs_found = photo_reader.faint_backs(img, found, peaks, blank)
    assert [d.code for d in backs_found] == ["BACK"] * backs
    assert all(d.confidence == heat and d.quad[:, 0].min() <= left + 2 for d in backs_found)


@needs_models
def test_a_faint_peak_inside_a_card_found_is_not_read_again(photo_reader: PhotoReader) -> None:
    img = np.full((480, 640, 3), (40, 110, 40), np.uint8)
    cv2.rectangle(img, (200, 150), (310, 310), (235, 235, 235), -1)
    card = Detection("BACK", 0.9, np.float32([[195, 145], [315, 145], [315, 315], [195, 315]]))
    peak = Corner(np.float32([235, 210, 275, 250]), 0.4, "back")
    assert photo_reader.faint_backs(img, [card], [peak], photo_reader.read_outlines(img)[1]) == []


@needs_models
@needs_photos
@pytest.mark.parametrize("stem", ["IMG_7801_JPG", "IMG_7802_JPG"])
def test_a_back_with_a_faint_edge_or_cut_by_the_frame_is_found_by_its_faint_peak(
        photo_reader: PhotoReader, stem: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation-group photos (models/HISTORY.md, RULE 96): a black back whose edge against a
    dark table is too faint for :func:`plain_backs` (IMG_7801), and one the photo's frame cuts
    (IMG_7802), each beside other backs found; the spotter gives each a face-down peak under
    ``back_score``."""
    image, labels = _photo(stem)
    backs = [(x, y) for c, x, y in labels if c == "BACK"]

    def found() -> int:
        cards = photo_reader.detect(image)
        return sum(any(d.code == "BACK" and _contains(d, x, y) for d in cards) for x, y in backs)

    with_rule = found()
    monkeypatch.setattr(PhotoReader, "faint_backs", lambda self, *args: [])
    assert with_rule == found() + 1


@needs_models
@needs_photos
def test_a_wall_panel_at_a_webcam_frames_edge_is_no_face_down_card(
        photo_reader: PhotoReader) -> None:
    """A CC BY webcam frame (training split) at its camera's 4:3: the white wall panel the
    frame cuts at its left edge was read as a plain face-down card before RULE 70."""
    from vision.photo_size import resized

    path = next((PHOTOS / "images" / "webcam_hand_held_UUID").glob("10d-68385ee0-*"))
    found, _ = photo_reader.cards_and_indices(resized(cv2.imread(str(path)), (853, 640)))
    assert "BACK" not in [d.code for d in found]


def _index(box: tuple[float, float, float, float], code: str, p: float,
           second: tuple[str, float] | None = None) -> Corner:
    """A detected index read as ``code`` with probability ``p`` (and ``second`` with its own),
    the rest spread evenly."""
    sure = {code: p, **dict([second] if second else [])}
    rest = (1 - sum(sure.values())) / (len(CORNER_CLASSES) - len(sure))
    probs = np.full(len(CORNER_CLASSES), rest, np.float32)
    for c, q in sure.items():
        probs[CORNER_CLASSES.index(c)] = q
    return Corner(np.array(box, float), 0.9, "index", probs)


A, FAR = (0, 0, 20, 30), (500, 500, 520, 530)
"""One index's box; one too far from it to be the same card's."""
B, C = (100, 150, 120, 180), (60, 60, 80, 90)
"""Boxes within reach of ``A`` (about 6 and 3 index sizes away)."""
SURE, UNSURE, LOW = INDEX_ALONE + 0.01, 0.8, PAIR_EACH - 0.1
"""Readings of an index: a card alone; a card only with another index of its code (two read
at 0.8 join at more than :data:`PAIR_JOINT`); too low to join another index's code."""


@pytest.mark.parametrize(("corners", "pairs", "alone"), [
    # one card: its two indices at diagonal corners, about 6 index sizes apart
    ([_index(A, "7H", UNSURE), _index(B, "7H", UNSURE)], [(0, 1)], []),
    # the same code too far apart: two cards
    ([_index(A, "7H", UNSURE), _index(FAR, "7H", UNSURE)], [], [0, 1]),
    # different codes never pair
    ([_index(A, "7H", UNSURE), _index(C, "7D", UNSURE)], [], [0, 1]),
    # three indices of one code: the surest two pair, the third is left alone
    ([_index(A, "QS", UNSURE), _index(C, "QS", SURE), _index(B, "QS", SURE)], [(1, 2)], [0]),
    # a sure index does not carry one that reads another code: each must give the code PAIR_EACH
    ([_index(A, "7H", SURE), _index(B, "7D", 0.6, ("7H", LOW))], [], [0, 1]),
    # ... but one whose second reading is that code joins it
    ([_index(A, "7H", SURE), _index(B, "7D", 0.5, ("7H", 0.4))], [(0, 1)], []),
    ([], [], []),
])
def test_indices_pair_into_cards(corners: list[Corner], pairs: list[tuple[int, int]],
                                 alone: list[int]) -> None:
    got, left = _pair(corners, CORNER_CLASSES, PAIR_JOINT, PAIR_EACH)
    ids = {id(c): i for i, c in enumerate(corners)}
    assert sorted(tuple(sorted(ids[id(c)] for c in g)) for g, _ in got) == pairs
    assert [ids[id(c)] for c in left] == alone


@pytest.mark.parametrize(("a", "b", "code", "least"), [
    # two readings of one code reinforce each other
    (("7H", 0.8), ("7H", 0.8), "7H", 0.99),
    # an index read as "none" (a finger on it) is neutral: the other decides alone
    (("7H", 0.9), (NONE, 0.99), "7H", 0.85),
    # two readings of different codes: the surer wins, unsurely
    (("7H", 0.9), ("7D", 0.6), "7H", 0.5),
])
def test_joint_reading_of_two_indices(a: tuple[str, float], b: tuple[str, float], code: str,
                                      least: float) -> None:
    dist = joint_reading(_index(A, *a).probs, _index(B, *b).probs, CORNER_CLASSES)
    assert dist[CORNER_CLASSES.index(NONE)] == 0
    assert dist.sum() == pytest.approx(1, abs=1e-5)
    assert CORNER_CLASSES[int(dist.argmax())] == code
    assert dist.max() >= least


@pytest.mark.parametrize(("corners", "codes"), [
    # one index read surely is a card; read unsurely alone it is not
    ([_index(A, "7H", SURE)], ["7H"]),
    ([_index(A, "7H", UNSURE)], []),
    # two unsure indices of one card that agree are that card
    ([_index(A, "7H", UNSURE), _index(B, "7H", UNSURE)], ["7H"]),
    # ... an unsure one agreeing with a sure one joins it (one card, not two)
    ([_index(A, "7H", SURE), _index(B, "7H", UNSURE)], ["7H"]),
    # they must agree on the code, be near each other, and each give it enough
    ([_index(A, "7H", UNSURE), _index(B, "7D", UNSURE)], []),
    ([_index(A, "7H", UNSURE), _index(FAR, "7H", UNSURE)], []),
    ([_index(A, "7H", UNSURE), _index(B, "7H", LOW)], []),
    # two weak readings of one code are still too weak together
    ([_index(A, "7H", 0.3), _index(B, "7H", 0.3)], []),
    # no index agrees with itself, and "none" is no code
    ([_index(A, NONE, SURE), _index(B, NONE, SURE)], []),
])
def test_unsure_indices_of_one_card_that_agree_are_a_card(corners: list[Corner],
                                                           codes: list[str]) -> None:
    reader = PhotoReader(CornerClassifier((), CORNER_CLASSES, 32, {}))
    assert [d.code for d in reader.cards(corners)] == codes


def test_missing_model_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(PhotoModelError, match="cardtable train --corners"):
        PhotoReader.load(tmp_path / "nothing.onnx")
    with pytest.raises(PhotoModelError, match="cardtable train --corners"):
        CornerClassifier.load(tmp_path / "nothing.onnx")


# ----------------------------------------------------------------------------- pip suits

needs_pips = pytest.mark.skipif(not DEFAULT_PIP_MODEL.is_file(),
                                reason="no pip-suit weights in models/")


def _outline_reader(pips: PipSuitReader | None) -> PhotoReader:
    """A reader whose outline stage is tested alone: the pip reader is real; the detector and
    the corner networks are not needed by :meth:`PhotoReader.pip_suits`."""
    clf = CornerClassifier((), CORNER_CLASSES, 32, {})
    return PhotoReader(clf, pips=pips)


def _photo_of(face: np.ndarray, stretch: float) -> tuple[np.ndarray, np.ndarray]:
    """A face about 130 × 180 px on a wooden table, a little askew, the photo then stretched
    ``stretch`` times along x as the CC BY photos are (640 × 640); image and card outline."""
    img = np.empty((300, 300, 3), np.uint8)
    img[:] = (70, 110, 160)
    quad = cv2.boxPoints(((150, 150), (130, 180), 4.0)).astype(np.float32)
    src = np.float32([[0, 0], [face.shape[1], 0], [face.shape[1], face.shape[0]],
                      [0, face.shape[0]]])
    m = cv2.getPerspectiveTransform(src, portrait(quad))
    warped = cv2.warpPerspective(face, m, (300, 300), flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full(face.shape[:2], 255, np.uint8), m, (300, 300))
    img[mask > 127] = warped[mask > 127]
    size = (int(round(300 * stretch)), 300)
    img = cv2.resize(cv2.GaussianBlur(img, (0, 0), 0.8), size, interpolation=cv2.INTER_LINEAR)
    return img, quad * np.float32([stretch, 1.0])


def _turn_probs(turn: int) -> np.ndarray:
    """Four index crops' readings (rows as :func:`vision.photo_cards.index_squares`) whose
    index lies in the corners of quarter turn ``turn``: the other two read ``none``."""
    probs = np.zeros((4, len(CORNER_CLASSES)), np.float32)
    probs[:, CORNER_CLASSES.index(NONE)] = 1.0
    probs[2 * turn:2 * turn + 2] = 1.0 / len(CORNER_CLASSES)
    return probs


def _split(code: str, other: str) -> np.ndarray:
    dist = np.zeros(len(CORNER_CLASSES), np.float32)
    dist[CORNER_CLASSES.index(code)] = dist[CORNER_CLASSES.index(other)] = 0.5
    return dist


@needs_pips
@pytest.mark.parametrize(("code", "other", "stretch", "turn"), [
    # the corners' reading left the outline between the two suits of its colour; the pips
    # settle it, the card photographed as it is and stretched until it looks landscape (its
    # corners then read in the other quarter turn, which the pips must follow)
    ("5S", "5C", 1.0, 0), ("5C", "5S", 1.0, 0), ("7H", "7D", 1.0, 0), ("9D", "9H", 1.0, 0),
    ("2S", "2C", 1.0, 0), ("3S", "3C", 1.0, 0), ("10C", "10S", 1.0, 0),
    ("5S", "5C", 1.9, 1), ("2S", "2C", 1.9, 1), ("8H", "8D", 1.9, 1), ("6C", "6S", 1.9, 1),
])
def test_an_outline_read_between_two_suits_is_settled_by_its_pips(
        code: str, other: str, stretch: float, turn: int) -> None:
    image, quad = _photo_of(render_standard(code, (250, 350)), stretch)
    reader = _outline_reader(PipSuitReader.load())
    suits = reader.pip_suits(image, [quad], [_turn_probs(turn)])[0]
    fused = fuse_suits(_split(code, other), suits, CORNER_CLASSES, reader.pip_floor,
                       reader.pip_court_floor)
    assert fused[CORNER_CLASSES.index(code)] > 0.9, suits
    assert fused.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(("face", "pips"), [
    ("blank", True),    # a card with no pip: the pip reader says nothing
    ("5S", False),      # no pip reader (no weights shipped): nothing either
])
def test_an_outline_without_pips_keeps_its_reading(face: str, pips: bool) -> None:
    if pips and not DEFAULT_PIP_MODEL.is_file():
        pytest.skip("no pip-suit weights in models/")
    card = np.full((350, 250, 3), 235, np.uint8) if face == "blank" \
        else render_standard(face, (250, 350))
    image, quad = _photo_of(card, 1.0)
    reader = _outline_reader(PipSuitReader.load() if pips else None)
    suits = reader.pip_suits(image, [quad], [_turn_probs(0)])[0]
    assert np.isnan(suits).all()
    dist = _split("5S", "5C")
    assert np.array_equal(fuse_suits(dist, suits, CORNER_CLASSES, reader.pip_floor), dist)


def test_no_outlines_no_pip_reading() -> None:
    reader = _outline_reader(None)
    assert reader.pip_suits(np.zeros((40, 40, 3), np.uint8), [], []).shape == (0, 4)


# ----------------------------------------------------------------------------- measured


def _held_out(n: int) -> list[Path]:
    images = sorted((PHOTOS / "images").rglob("*.jpg"))
    return [p for p in images if split_of(p.name) == "test"][:n]


@needs_models
@needs_photos
def test_held_out_photos_are_read() -> None:
    """Held-out scenes (never trained on), the first 40 photos: a regression guard well below
    what the shipped models measure on the whole held-out split (`cardtable eval ... --split
    test`, models/HISTORY.md) — itself far below the issue's target."""
    reader = PhotoReader.load()
    names = read_names(PHOTOS / "data.yaml")
    found = total = false = dets_n = 0
    for path in _held_out(40):
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        rel = path.relative_to(PHOTOS / "images")
        labels = read_yolo_labels((PHOTOS / "labels" / rel).with_suffix(".txt"), names, w, h)
        dets = reader.detect(image)
        total += len(labels)
        dets_n += len(dets)
        found += sum(any(d.code == c and _contains(d, x, y) for d in dets) for c, x, y in labels)
        false += sum(not any(d.code == c and _contains(d, x, y) for c, x, y in labels)
                     for d in dets)
        for d in dets:
            assert 0 <= d.confidence <= 1 and d.quad.shape == (4, 2)
    assert total > 50
    assert found / total >= 0.07
    assert false / max(dets_n, 1) <= 0.25


def _photo(stem: str) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """A training-split photo of the CC BY set and its labels (code, centre x, centre y)."""
    path = next((PHOTOS / "images").rglob(stem + "*.jpg"))
    assert in_split(path.name, "train")
    image = cv2.imread(str(path))
    h, w = image.shape[:2]
    rel = path.relative_to(PHOTOS / "images")
    names = read_names(PHOTOS / "data.yaml")
    return image, read_yolo_labels((PHOTOS / "labels" / rel).with_suffix(".txt"), names, w, h)


@pytest.fixture(scope="module")
def photo_reader() -> PhotoReader:
    return PhotoReader.load()


@needs_models
@needs_photos
@pytest.mark.parametrize(("stem", "jokers"), [
    ("IMG_20220921_194554", 1),     # a joker on dark stone: its corners read KD 0.93
    ("IMG_20220921_200136", 1),     # a joker in a greyscale photo: its corners read no index
    ("IMG_20220921_194751", 1),     # a joker whose corners read KD 0.89
    ("8h-e5b82d7b-3990-11ed-8a41-ec2e98cc7ff6", 0),  # an 8H held up to a webcam: corners JK
    ("IMG_7823_JPG", 0),                             # a desk's outline: its corners read JK
    ("IMG_20220921_200154", 0),                      # a king of diamonds, no joker
])
def test_a_joker_is_found_by_its_word_never_by_its_corners(photo_reader: PhotoReader,
                                                           stem: str, jokers: int) -> None:
    """Training-split photos (models/HISTORY.md): an outline's corners are read as one of the
    52 faces or no card (the reader learned ``JK`` only from the word), and an outline is a
    joker when the word squares at both its ends read ``JK``; the joker's quad holds the
    labelled word's centre."""
    assert len(OUTLINE_CODES) == 52 and "JK" not in OUTLINE_CODES
    image, labels = _photo(stem)
    found = [d for d in photo_reader.detect(image) if d.code == "JK"]
    assert len(found) == jokers
    words = [(x, y) for code, x, y in labels if code == "JK"]
    assert all(any(_contains(d, x, y) for x, y in words) for d in found)


@needs_models
@needs_photos
@pytest.mark.parametrize(("stem", "code"), [
    ("10d-68385ee0-3991-11ed-b662-ec2e98cc7ff6", "10D"),  # held up to a webcam, merged
    ("Jh-c43af0fd-3990-11ed-b89f-ec2e98cc7ff6", "JH"),    # held up to a webcam, merged
])
def test_a_card_merged_with_another_region_is_read_from_its_piece(
        photo_reader: PhotoReader, stem: str, code: str) -> None:
    """Training-split photos (models/HISTORY.md): the card lies in no outline the finder sees
    whole (its region takes in another card or the background), but a piece of that region
    cut at two notches is its outline; the card is found, and no outline (pieces included) is a
    false card. (IMG_7840's 4D was a case here until the tenth session: its piece's centre lies
    in the KD's grown outline, so the piece is never read; the spotter's pair of its indices
    found it with the 20-epoch corner reader, at 0.77, and no longer with the 30-epoch one.
    IMG_7829's AC, a black card touching others on a white desk, was one until the
    eighty-first session: its whole outline is thinner than 0.42, see below.)"""
    image, labels = _photo(stem)
    points = [(x, y) for c, x, y in labels if c == code]
    plain = [q.quad for q in card_quads(image)]
    assert not any(_contains_point(_grown(q), p) for q in plain for p in points)
    assert any(d.code == code and _contains(d, x, y)
               for d in photo_reader.detect(image) for x, y in points)
    outlines, _ = photo_reader.read_outlines(image)
    assert all(any(d.code == c and _contains(d, x, y) for c, x, y in labels) for d in outlines)


@needs_models
@needs_photos
@pytest.mark.parametrize(("stem", "code"), [
    ("IMG_7829_JPG", "AC"),   # a black card touching others on a white desk
    ("IMG_7713_JPG", "7D"),   # a black card at a slant
])
def test_a_card_at_a_slant_is_read_from_its_thin_outline(
        photo_reader: PhotoReader, stem: str, code: str) -> None:
    """Training-split photos (models/HISTORY.md, RULE 88): the card's whole outline is
    thinner than a short-to-long side ratio of 0.42 (a slant foreshortens it, the photo's
    squeeze to 640 × 640 more), so at 0.42 no outline holds its index; at :data:`MIN_SIDES`
    one does, and the card is found."""
    image, labels = _photo(stem)
    points = [(x, y) for c, x, y in labels if c == code]

    def held(sides: float) -> bool:
        quads = [q.quad for q in card_quads(image, sides=sides)]
        return any(_contains_point(_grown(q), p) for q in quads for p in points)

    assert not held(0.42) and held(MIN_SIDES)
    assert any(d.code == code and _contains(d, x, y)
               for d in photo_reader.detect(image) for x, y in points)


@needs_models
@needs_photos
@pytest.mark.parametrize(("stem", "code"), [
    ("10s-99beb21f-3992-11ed-882d-ec2e98cc7ff6", "10S"),  # held up to a webcam, both indices
    ("7h-f0226160-3990-11ed-a610-ec2e98cc7ff6", "7H"),    # two proposals, both read 7H
    ("9s-a34a4afa-3992-11ed-9e09-ec2e98cc7ff6", "9S"),    # outlines 9S at 0.41 and 0.74, its
    #                                indices 6S at 0.16 and 9C at 0.50: 9S at 0.99 together
    ("6d-96fccd63-3991-11ed-a765-ec2e98cc7ff6", "6D"),    # held up to a webcam
    ("6d-935e297c-3991-11ed-ad47-ec2e98cc7ff6", None),    # outline 6D 1.0, indices QD: unsure
    ("8h-e6ecc271-3990-11ed-989c-ec2e98cc7ff6", None),    # off the frame, no index in corners
    ("Ac-cf549b97-3991-11ed-958f-ec2e98cc7ff6", None),    # its outline read JS at 0.34
    ("backcard-0311bc91-3993-11ed-9600-ec2e98cc7ff6", None),  # a back: read JS at 0.39
])
def test_a_card_the_reader_misses_is_read_where_the_locator_finds_it(
        photo_reader: PhotoReader, stem: str, code: str | None) -> None:
    """Training-split webcam frames in which the photo reader finds no card (RULES 64 and
    65, models/HISTORY.md): the single-card locator's proposals read as outlines are, each
    with the spotter's indices inside it as witnesses, give the held card, holding its
    labelled indices' centres, or nothing where no proposal reads as surely as an outline must
    (an outline misread where its indices disagree among them); a standard-deck reading of the
    photo answers the same. Rows as the card mask of RULE 74 (forty epochs) proposes; the
    twenty-epoch mask's proposals found the first 6D, the 8H and the AC, not the 9S nor the
    second 6D."""
    from vision.card_locator import candidates
    from vision.recognise import TableReader

    image, labels = _photo(stem)
    cards, corners = photo_reader.cards_and_indices(image)
    assert cards == [] and photo_reader.detect(image) == []
    found = photo_reader.located(image, candidates(image), corners)
    assert [d.code for d in found] == ([code] if code else [])
    assert all(_contains(d, x, y) for d in found for _, x, y in labels)
    if code:
        assert found[0].confidence >= photo_reader.min_card_confidence
        standard = still_detector(TableReader.load(), "standard")(image)
        assert [(d.code, d.confidence) for d in standard] == \
            [(d.code, d.confidence) for d in found]


@needs_models
@pytest.mark.parametrize("scores", [[], [-0.6], [-0.9, -0.7], [0.8]])
def test_no_located_proposal_no_located_card(photo_reader: PhotoReader,
                                             scores: list[float]) -> None:
    """No proposal, only those the locator itself rejects (score -0.5 or less), or one over
    a blank grey photo: no card."""
    cands = [("white", _rect(10, 10, 60, 90), s) for s in scores]
    assert photo_reader.located(np.full((100, 100, 3), 128, np.uint8), cands, []) == ()


def _joker_on_wood(angle: float, source: str = "IMG_20220921_194554"
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The joker of a training photo rectified from its outline and laid at ``angle`` on a
    synthetic wooden table: image and its outline (the test of the rule on other scenes)."""
    image, labels = _photo(source)
    x, y = next((x, y) for code, x, y in labels if code == "JK")
    quad = next(q.quad for q in card_quads(image) if _contains_point(q.quad, (x, y)))
    card = cv2.warpPerspective(image, cv2.getPerspectiveTransform(
        portrait(quad), np.float32([[0, 0], [250, 0], [250, 350], [0, 350]])), (250, 350))
    return _on_wood(card, angle)


def _contains_point(quad: np.ndarray, point: tuple[float, float]) -> bool:
    return cv2.pointPolygonTest(quad.reshape(-1, 1, 2).astype(np.float32), point, False) >= 0


def _on_wood(card: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    img = np.empty((640, 640, 3), np.uint8)
    img[:] = (60, 100, 150)
    quad = cv2.boxPoints(((320, 320), (200, 280), angle)).astype(np.float32)
    src = np.float32([[0, 0], [250, 0], [250, 350], [0, 350]])
    m = cv2.getPerspectiveTransform(src, portrait(quad))
    warped = cv2.warpPerspective(card, m, (640, 640), flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full((350, 250), 255, np.uint8), m, (640, 640))
    img[mask > 127] = warped[mask > 127]
    return img, portrait(quad)


@needs_models
@needs_photos
@pytest.mark.parametrize(("angle", "card", "faces", "jokers"), [
    (0.0, "joker", [], 1),          # the joker, upright
    (90.0, "joker", [], 1),         # turned a quarter: the other quarter turn's word squares
    (200.0, "joker", [], 1),        # upside down and askew
    (0.0, "joker", ["on it"], 0),   # an outline over a face-up card is no joker
    (0.0, "joker", ["small"], 0),   # nor one far larger than the face-up cards found
    (0.0, "5S", [], 0),             # a number card: no word at its ends
    (0.0, "blank", [], 0),          # a blank card
])
def test_jokers_by_the_word_at_both_ends(photo_reader: PhotoReader, angle: float, card: str,
                                         faces: list[str], jokers: int) -> None:
    from vision.recognise import Detection

    if card == "joker":
        image, quad = _joker_on_wood(angle)
    else:
        face = np.full((350, 250, 3), 235, np.uint8) if card == "blank" \
            else render_standard(card, (250, 350))
        image, quad = _on_wood(face, angle)
    c = quad.mean(0)
    up = {"on it": quad, "small": (quad - c) * 0.5 + c}
    found = photo_reader.jokers(image, [quad], [Detection("7H", 0.99, up[f]) for f in faces])
    assert len(found) == jokers
    assert all(d.code == "JK" and d.confidence >= 0.9 for d in found)


@pytest.mark.parametrize(("spread", "grey"), [
    (0, True), (3, True), (GREY_SPREAD, True),   # no colour, JPEG rounding of grey
    (GREY_SPREAD + 1, False), (40, False),        # one pixel of colour is colour
])
def test_greyscale_means_no_colour_anywhere(spread: int, grey: bool) -> None:
    image = np.full((120, 160, 3), 128, np.uint8)
    image[50, 70] = (128, 128 + spread, 128)
    assert greyscale(image) is grey


def test_a_greyscale_photo_stays_greyscale_through_jpeg() -> None:
    rng = np.random.default_rng(1)
    grey = cv2.cvtColor(rng.integers(0, 256, (120, 160), np.uint8), cv2.COLOR_GRAY2BGR)
    ok, data = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, 70])
    assert ok and greyscale(cv2.imdecode(data, cv2.IMREAD_COLOR))
    assert not greyscale(cv2.applyColorMap(grey, cv2.COLORMAP_JET))


@needs_models
@needs_photos
@pytest.mark.parametrize(("stem", "code", "read"), [
    ("IMG_20220921_200154", "KS", False),   # a KD read KS at 0.991 in a greyscale photo
    ("IMG_20220921_200027", "8D", True),    # an 8D read at 0.995
    ("IMG_20220921_200121", "9D", True),    # a 9D at 0.984, both corners agreeing
    ("IMG_20220921_195500", "QD", True),    # a colour photo: a QD at 0.984 still reads
])
def test_greyscale_photos_need_a_surer_reading(photo_reader: PhotoReader, stem: str,
                                               code: str, read: bool) -> None:
    """Training-split photos; the probabilities in the table are those the bound was chosen
    with (the 64-px whole-card classifier). With the 96-px one a third misread of that set, a
    JS read JH in IMG_20220921_200231, reaches 0.997 and passes the bound; with the 48-px
    corner reader the card of IMG_20220921_201314 read JC (0.983 before) reaches 1.0, and it is
    a jack of clubs that the labels call JS (models/HISTORY.md): the bound narrows the greyscale
    misreadings, it does not end them."""
    image, _ = _photo(stem)
    assert greyscale(image) is (stem != "IMG_20220921_195500")
    assert (code in [d.code for d in photo_reader.read_outlines(image)[0]]) is read


@needs_models
def test_an_empty_table_has_no_cards() -> None:
    reader = PhotoReader.load()
    table = np.full((480, 640, 3), (60, 90, 120), np.uint8)
    assert reader.detect(table) == []


@needs_models
@pytest.mark.parametrize("stopped", [False, True])
def test_a_stopped_reading_gives_up_between_stages(stopped: bool) -> None:
    """`cardtable detect` stops the photo reader it ran beside the UNO check once that check
    found a UNO card; a reading never stopped is the plain reading."""
    import threading

    from vision.photo_detect import PhotoStopped

    image, _ = _photo_of(render_standard("7H", (250, 350)), 1.0)
    reader = PhotoReader.load()
    stop = threading.Event()
    if stopped:
        stop.set()
        with pytest.raises(PhotoStopped):
            reader.detect(image, stop)
    else:
        assert [d.code for d in reader.detect(image, stop)] == ["7H"]


@needs_models
@needs_photos
def test_detect_and_eval_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cardtable detect --photos` prints one JSON line per image with cards; `cardtable eval`
    on a YOLO folder of standard cards reads it by corners (auto) and honours --split."""
    folder = tmp_path / "set"
    (folder / "images").mkdir(parents=True)
    (folder / "labels").mkdir()
    shutil.copy(PHOTOS / "data.yaml", folder / "data.yaml")
    reader = PhotoReader.load()
    expected = {}
    for path in _held_out(40):  # three held-out photos in which the reader sees some card
        codes = sorted(d.code for d in reader.detect(cv2.imread(str(path))))
        if codes:
            expected[path.name] = codes
        if len(expected) == 3:
            break
    picked = [p for p in _held_out(40) if p.name in expected]
    for path in picked:
        shutil.copy(path, folder / "images" / path.name)
        label = (PHOTOS / "labels" / path.relative_to(PHOTOS / "images")).with_suffix(".txt")
        shutil.copy(label, folder / "labels" / label.name)
    (folder / "images" / "broken.jpg").write_bytes(b"not an image")
    assert main(["detect", "--photos", str(folder / "images")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [Path(x["image"]).name for x in lines] == sorted(
        [p.name for p in picked] + ["broken.jpg"])
    assert sum("error" in x for x in lines) == 1
    for x in lines:
        if "error" in x:
            continue
        assert sorted(d["code"] for d in x["detections"]) == expected[Path(x["image"]).name]
        for d in x["detections"]:
            assert set(d) == {"code", "confidence", "box", "quad"}
    (folder / "images" / "broken.jpg").unlink()
    assert main(["eval", str(folder), "--split", "test", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["images"] == 3 and rep["cards"] >= 3 and rep["detections"] >= 3
    assert rep["median_cpu_ms_per_image"] > 0
    cal = rep["calibration"]  # every detection scored: a labelled card or a false one
    assert cal["count"] == rep["detections"]
    wrong = sum(b["count"] * (1 - b["accuracy"]) for b in cal["bins"])
    assert round(wrong) == rep["false_cards"]
    assert main(["eval", str(folder), "--split", "train", "--json"]) == 2
    assert "no images" in capsys.readouterr().err


def test_training_without_the_photos_says_where_they_go(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    pytest.importorskip("ultralytics")
    argv = ["train", "--corners", "--quick", "--photos", str(tmp_path / "none"),
            "--runs", str(tmp_path / "runs")]
    assert main(argv) == 2
    assert "give their folder with --photos" in capsys.readouterr().err


@needs_models
@needs_photos
def test_detect_reads_a_uno_photo_as_one_card_and_standard_photos_by_their_indices(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cardtable detect` with no flag: a photo without the mat whose one card is surely UNO is
    that card; a photo of standard cards is read by the photo reader, as with --photos."""
    from vision.synth.photos import single_card_photo

    uno = tmp_path / "a_uno.png"
    cv2.imwrite(str(uno), single_card_photo("7R", np.random.default_rng([7, 0]))[0])
    reader = PhotoReader.load()
    standard = next(p for p in _held_out(40) if len(reader.detect(cv2.imread(str(p)))) >= 2)
    shutil.copy(standard, tmp_path / "b_standard.jpg")
    assert main(["detect", str(tmp_path), "--json"]) == 0
    auto = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [d["code"] for d in auto[0]["detections"]] == ["7R"]
    assert main(["detect", "--photos", str(tmp_path / "b_standard.jpg")]) == 0
    forced = json.loads(capsys.readouterr().out)
    assert auto[1]["detections"] == forced["detections"]
    assert len(forced["detections"]) >= 2
    assert main(["detect", "--deck", "uno", str(uno)]) == 0  # the deck known: no photo reader
    assert json.loads(capsys.readouterr().out)["detections"] == auto[0]["detections"]
    assert main(["detect", "--deck", "standard", str(tmp_path / "b_standard.jpg")]) == 0
    assert json.loads(capsys.readouterr().out)["detections"] == forced["detections"]


def test_still_detector_refuses_an_unknown_deck() -> None:
    with pytest.raises(ValueError, match="unknown deck 'dominoes'"):
        still_detector(None, "dominoes")


def _rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


@pytest.mark.parametrize(("first", "second", "kept"), [
    # an inner-frame outline and the spotter's pair of the indices just outside it: one card
    (("5C", 0.99, (20, 30, 80, 110)), ("5C", 0.9, (5, 5, 95, 135)), 1),
    (("JK", 0.8, (0, 0, 40, 40)), ("JK", 0.81, (10, 5, 50, 45)), 1),  # one word spotted twice
    (("5C", 0.99, (20, 30, 80, 110)), ("5D", 0.9, (5, 5, 95, 135)), 2),  # two faces overlap
    (("5C", 0.99, (0, 0, 60, 90)), ("5C", 0.9, (200, 0, 260, 90)), 2),  # apart: two decks
    # one index's box on the corner of its card's outline, neither centre in the other
    (("QD", 1.0, (100, 100, 200, 240)), ("QD", 0.95, (80, 80, 110, 120)), 1),
    (("QD", 1.0, (100, 100, 200, 240)), ("QD", 0.95, (70, 80, 99, 120)), 2),  # not touching
    (("JK", 0.9, (100, 100, 200, 240)), ("JK", 0.8, (190, 100, 290, 240)), 2),  # two jokers
    (("BACK", 0.7, (0, 0, 60, 90)), ("BACK", 0.6, (20, 10, 80, 100)), 2),  # backs stay apart
])
def test_a_card_seen_twice_is_one_card(first: tuple, second: tuple, kept: int) -> None:
    from vision.recognise import Detection

    found = [Detection(code, conf, _rect(*box)) for code, conf, box in (first, second)]
    out = one_per_code(found)
    assert len(out) == kept
    assert [d.confidence for d in out] == sorted((d.confidence for d in out), reverse=True)
    if kept == 1:
        assert out[0].confidence == max(first[1], second[1])
        corners = np.concatenate([d.quad for d in found])
        assert all(cv2.pointPolygonTest(out[0].quad.reshape(-1, 1, 2), (float(x), float(y)),
                                        True) >= -0.01 for x, y in corners)


CARD = (100, 100, 200, 240)
"""A card's quad (as a box); an index box of side 20 lies beside it in the cases below."""


@pytest.mark.parametrize(("cards", "index", "widened"), [
    ([("5C", CARD)], _index((195, 110, 215, 140), "5C", 0.8), 0),   # half out: taken in
    ([("5C", CARD)], _index((205, 110, 225, 140), "5C", 0.4), 0),   # just outside: taken in
    ([("5C", CARD)], _index((225, 110, 245, 140), "5C", 0.9), None),  # too far: a card apart
    ([("5C", CARD)], _index((205, 110, 225, 140), "5D", 0.9), None),  # another card's code
    # a neighbour's index, unsure between its own code and the card's: the neighbour's
    ([("5C", CARD)], _index((205, 110, 225, 140), "4C", 0.5, ("5C", 0.4)), None),
    ([("5C", CARD)], _index((205, 110, 225, 140), "5C", 0.25), None),  # too unsure of it
    ([("5C", CARD)], _index((205, 110, 225, 140), NONE, 0.9), None),  # no index there
    ([("5C", CARD)], replace(_index((205, 110, 225, 140), "5C", 0.9), score=0.1), None),
    ([("5C", CARD)], replace(_index((205, 110, 225, 140), "5C", 0.9), kind="back"), None),
    ([("BACK", CARD)], _index((205, 110, 225, 140), "5C", 0.9), None),  # backs have no index
    # the index lies on another card found: it is that card's
    ([("5C", CARD), ("9H", (190, 100, 300, 240))], _index((195, 110, 215, 140), "5C", 0.9),
     None),
    # two cards of its code near (two decks): the nearer takes it
    ([("5C", CARD), ("5C", (236, 100, 336, 240))], _index((205, 110, 225, 140), "5C", 0.9), 0),
])
def test_a_card_quad_takes_in_its_index(cards: list, index: Corner, widened: int | None
                                        ) -> None:
    from vision.recognise import Detection

    found = [Detection(code, 0.99, _rect(*box)) for code, box in cards]
    out = take_in_indices(found, [index], CORNER_CLASSES, PAIR_EACH, 0.3)
    assert [(d.code, d.confidence) for d in out] == [(d.code, d.confidence) for d in found]
    for i, (before, after) in enumerate(zip(found, out, strict=True)):
        if i != widened:
            assert np.array_equal(before.quad, after.quad)
            continue
        inside = [*before.quad, *_rect(*index.box)]
        assert all(cv2.pointPolygonTest(after.quad.reshape(-1, 1, 2), (float(x), float(y)),
                                        True) >= -0.01 for x, y in inside)
