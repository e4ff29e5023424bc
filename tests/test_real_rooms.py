"""Real webcam frames as backdrops: the card inferred from its two index corners, which frames
are used, the card painted out, a rendered card laid over the real one, and the locator's
measurement on the held-out frames."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.locate_eval import DIM, LocateReport, evaluate_locator
from vision.photo_cards import INDEX_CENTRE
from vision.photo_split import split_of
from vision.synth.photos import empty_room, empty_surface, held_in_room, lying_in_room
from vision.synth.real_rooms import (
    CARD_RATIO,
    SOURCES,
    RoomFrame,
    card_from_indices,
    load_room,
    painted_out,
    room_frames,
)
from vision.train.corners import DEFAULT_PHOTOS

PHOTOS = DEFAULT_PHOTOS
FOLDER, FRAME = SOURCES["webcam"].folder, SOURCES["webcam"].frame
PHONE = SOURCES["phone"].folder


def _card(centre: tuple[float, float], width: float, degrees: float) -> np.ndarray:
    t = np.radians(degrees)
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    hw, hh = width / 2, width * CARD_RATIO / 2
    return np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]) @ rot.T + centre


def _indices(card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The index centres of ``card`` (clockwise from its top-left corner)."""
    right, down = card[1] - card[0], card[3] - card[0]
    a = card[0] + INDEX_CENTRE[0] * right + INDEX_CENTRE[1] * down
    b = card[2] - INDEX_CENTRE[0] * right - INDEX_CENTRE[1] * down
    return a, b


@pytest.mark.parametrize(("centre", "width", "degrees"), [
    ((320, 240), 100, 0),
    ((200, 150), 60, 30),
    ((400, 300), 140, 90),
    ((320, 240), 80, -70),
    ((100, 400), 50, 180),
])
@pytest.mark.parametrize("swap", [False, True])
def test_the_card_is_recovered_from_its_index_corners(
        centre: tuple[float, float], width: float, degrees: float, swap: bool) -> None:
    card = _card(centre, width, degrees)
    a, b = _indices(card)
    got = card_from_indices(*((b, a) if swap else (a, b)))
    # the same rectangle, its corners in the same cyclic order up to a half turn
    dist = min(np.abs(np.roll(got, k, axis=0) - card).max() for k in (0, 2))
    assert dist < 1e-3


def _write_frame(root: Path, name: str, boxes: list[tuple[int, float, float]] | None,
                 folder: str = FOLDER) -> Path:
    image = root / "images" / folder / name
    image.parent.mkdir(parents=True, exist_ok=True)
    frame = np.full((640, 640, 3), 90, np.uint8)
    cv2.rectangle(frame, (280, 200), (360, 420), (235, 235, 235), -1)
    cv2.imwrite(str(image), frame)
    if boxes is not None:
        label = root / "labels" / folder / (Path(name).stem + ".txt")
        label.parent.mkdir(parents=True, exist_ok=True)
        label.write_text("".join(f"{c} {x} {y} 0.02 0.05\n" for c, x, y in boxes))
    return image


TWO = [(7, 0.45, 0.33), (7, 0.55, 0.64)]


@pytest.mark.parametrize(("name", "boxes", "used"), [
    ("1h-00000001-aaaa.jpg", TWO, True),
    ("0h-00000000-aaaa.jpg", TWO, False),  # a held-out frame (split_of: test)
    ("2h-00000002-aaaa.jpg", TWO[:1], False),  # one index: the card's extent is unknown
    ("3h-00000003-aaaa.jpg", [TWO[0], (8, 0.55, 0.64)], False),  # two cards' indices
    ("4h-00000004-aaaa.jpg", None, False),  # no label file
])
def test_only_training_frames_with_both_indices_of_one_card_are_used(
        tmp_path: Path, name: str, boxes: list[tuple[int, float, float]] | None,
        used: bool) -> None:
    _write_frame(tmp_path, name, boxes)
    assert (split_of(name) == "train") == (name != "0h-00000000-aaaa.jpg")
    assert (room_frames(tmp_path) != ()) is used


@pytest.mark.parametrize(("boxes", "used"), [
    (TWO, True),
    ([(1, 0.45, 0.33), (1, 0.55, 0.64)], False),  # a joker: its boxes are its word
    (TWO[:1], False),
])
@pytest.mark.parametrize(("source", "name"), [
    ("phone", "IMG_1001_JPG.rf.aa.jpg"),
    ("webcam", "1h-00000001-aaaa.jpg"),
])
def test_frames_of_one_card_by_its_indices_are_used(
        tmp_path: Path, boxes: list[tuple[int, float, float]], used: bool, source: str,
        name: str) -> None:
    (tmp_path / "data.yaml").write_text("names: ['AC', 'JK', '2C', '3C', '4C', '5C', '6C', "
                                        "'7C']\n")
    _write_frame(tmp_path, name, boxes, SOURCES[source].folder)
    assert split_of(name) == "train"
    assert (room_frames(tmp_path, source=source) != ()) is used
    other = "webcam" if source == "phone" else "phone"
    assert room_frames(tmp_path, source=other) == ()  # not a frame of the other source


def test_a_phone_photo_is_squeezed_back_to_portrait(tmp_path: Path) -> None:
    room = load_room(_write_frame(tmp_path, "IMG_1002_JPG.rf.aa.jpg", TWO, PHONE))
    assert room.image.shape == (640, 480, 3)
    assert room.card[:, 0].max() <= 480
    assert painted_out(room).shape == room.image.shape


def test_a_frame_of_another_folder_is_named(tmp_path: Path) -> None:
    image = _write_frame(tmp_path, "8h-00000008-aaaa.jpg", TWO, "elsewhere")
    with pytest.raises(ValueError, match="none of the folders"):
        load_room(image)


def test_an_unreadable_frame_is_named(tmp_path: Path) -> None:
    image = _write_frame(tmp_path, "5h-00000005-aaaa.jpg", TWO)
    image.write_bytes(b"not a jpeg")
    with pytest.raises(OSError, match="cannot read the room frame"):
        load_room(image)


def test_a_frame_without_two_index_boxes_is_named(tmp_path: Path) -> None:
    image = _write_frame(tmp_path, "7h-00000007-aaaa.jpg", TWO[:1])
    with pytest.raises(ValueError, match="two labelled index boxes"):
        load_room(image)


def test_painting_out_changes_the_card_and_nothing_far_from_it(tmp_path: Path) -> None:
    room = load_room(_write_frame(tmp_path, "6h-00000006-aaaa.jpg", TWO))
    assert room.image.shape == (FRAME[1], FRAME[0], 3)
    out = painted_out(room)
    centre = room.card.mean(0).astype(int)
    assert out[centre[1], centre[0]].mean() < room.image[centre[1], centre[0]].mean() - 50
    assert np.array_equal(out[:40], room.image[:40])


@pytest.mark.parametrize("code", ["5R", "+4", "7H"])  # UNO faces are narrower than poker cards
@pytest.mark.parametrize("seed", range(8))
def test_a_rendered_card_is_laid_over_the_real_one(code: str, seed: int) -> None:
    image = np.full((FRAME[1], FRAME[0], 3), 90, np.uint8)
    card = _card((320, 240), 90, 12).astype(np.float32)
    photo, quad = held_in_room(code, np.random.default_rng(seed), RoomFrame(image, card))
    assert photo.shape == image.shape and photo.dtype == np.uint8
    # it covers the real card both ways: the middle of each of its sides (its corners may
    # peek out by the few degrees it is turned)
    sides = (card + np.roll(card, -1, axis=0)) / 2
    assert all(cv2.pointPolygonTest(quad.astype(np.float32), (float(x), float(y)), False) >= 0
               for x, y in sides)
    empty = empty_room(RoomFrame(image, card), np.random.default_rng(seed))
    assert empty.shape == image.shape


@pytest.mark.parametrize(("white", "light"), [
    ((235, 235, 235), (0.92, 0.92, 0.92)),
    ((60, 75, 90), (0.24, 0.29, 0.35)),  # a dim room with a green-blue cast
    ((20, 20, 20), (0.08, 0.08, 0.08)),
])
def test_the_light_is_the_held_cards_white(white: tuple[int, int, int],
                                           light: tuple[float, float, float]) -> None:
    image = np.full((FRAME[1], FRAME[0], 3), 200, np.uint8)  # a bright room around the card
    card = _card((320, 240), 120, 20).astype(np.float32)
    cv2.fillPoly(image, [np.round(card).astype(np.int32)], white)
    cv2.circle(image, (320, 240), 15, (10, 10, 10), -1)  # the print on its face
    assert np.allclose(RoomFrame(image, card).light, light, atol=0.01)


def test_a_card_in_a_dim_room_is_laid_dim() -> None:
    card = _card((320, 240), 120, 5).astype(np.float32)
    whites = []
    for level in (50, 230):
        image = np.full((FRAME[1], FRAME[0], 3), 40, np.uint8)
        cv2.fillPoly(image, [np.round(card).astype(np.int32)], (level,) * 3)
        photo, quad = held_in_room("5R", np.random.default_rng(4), RoomFrame(image, card))
        inside = np.zeros(photo.shape[:2], np.uint8)
        cv2.fillPoly(inside, [np.round(quad).astype(np.int32)], 1)
        whites.append(np.percentile(photo[inside > 0], 90))
    assert whites[0] < 0.5 * whites[1]


@pytest.mark.parametrize("level", [60, 220])
def test_a_rendered_card_is_laid_over_a_real_lying_one_and_lit_like_it(level: int) -> None:
    image = np.full((640, 480, 3), 70, np.uint8)  # a phone photo, portrait
    card = _card((240, 330), 200, -25).astype(np.float32)
    cv2.fillPoly(image, [np.round(card).astype(np.int32)], (level,) * 3)
    room = RoomFrame(image, card)
    photo, quad = lying_in_room("7G", np.random.default_rng(5), room)
    assert photo.shape == image.shape and photo.dtype == np.uint8
    assert all(cv2.pointPolygonTest(quad.astype(np.float32), (float(x), float(y)), False) >= 0
               for x, y in card)
    inside = np.zeros(photo.shape[:2], np.uint8)
    cv2.fillPoly(inside, [np.round(quad).astype(np.int32)], 1)
    white = np.percentile(photo[inside > 0], 90)
    assert 0.7 * level < white < 1.3 * level + 10
    empty = empty_surface(room, np.random.default_rng(5))
    assert empty.shape == image.shape
    centre = card.mean(0).astype(int)
    assert abs(int(empty[centre[1], centre[0]].mean()) - 70) < 30  # the card painted out


@pytest.mark.parametrize(("frames", "missing"), [
    ((), "no webcam frames"),
    ((("1h-00000001-aaaa.jpg", FOLDER),), "no phone photos of one card"),
    ((("IMG_1001_JPG.rf.aa.jpg", PHONE),), "no webcam frames"),
])
def test_the_mask_trainer_names_a_missing_photo_set(
        tmp_path: Path, frames: tuple[tuple[str, str], ...], missing: str) -> None:
    pytest.importorskip("torch")
    from vision.train.mask import train_mask

    for name, folder in frames:
        _write_frame(tmp_path, name, TWO, folder)
    with pytest.raises(FileNotFoundError, match=f"{missing} .*--photos"):
        train_mask(tmp_path / "card_mask.onnx", tmp_path, quick=True)


def test_the_locator_measurement_names_a_missing_photo_set(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="webcam frames"):
        evaluate_locator(tmp_path)


@pytest.mark.skipif(not PHOTOS.exists(), reason="the shared CC BY photo set is not here")
def test_the_locator_is_measured_on_the_held_out_frames() -> None:
    report = evaluate_locator(PHOTOS, "test")
    assert len(report.top) == 22
    assert ((report.top <= report.near) & (report.near <= report.best)).all()
    assert "frames 22" in report.text()
    assert ((report.light > 0) & (report.light <= 1)).all()
    dim = int((report.light < DIM).sum())
    assert f"dim frames (card white below {DIM:.2f} of full scale): {dim}," in report.text()


@pytest.mark.skipif(not PHOTOS.exists(), reason="the shared CC BY photo set is not here")
def test_the_locator_is_measured_on_the_held_out_phone_photos() -> None:
    report = evaluate_locator(PHOTOS, "test", "phone")
    assert len(report.top) == 129
    assert ((report.top <= report.near) & (report.near <= report.best)).all()


@pytest.mark.parametrize(("light", "dim_fits", "other_fits"), [
    ((0.2, 0.3, 0.8, 0.9), 1, 1),
    ((0.9, 0.9, 0.9, 0.9), 0, 2),
    ((0.1, 0.1, 0.1, 0.1), 2, 0),
])
def test_the_report_splits_dim_frames_from_the_others(
        light: tuple[float, ...], dim_fits: int, other_fits: int) -> None:
    top = np.array([0.9, 0.2, 0.8, 0.1])
    report = LocateReport(top, top, top, np.array(light))
    dim = sum(v < DIM for v in light)
    assert (f"dim frames (card white below {DIM:.2f} of full scale): {dim}, best-scored fits "
            f"{dim_fits}; the others {4 - dim}, best-scored fits {other_fits}") in report.text()
