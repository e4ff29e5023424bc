"""The learned card mask: loading, bad input, its blobs, the shipped model on renders, and its
proposals among the single-card locator's."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.card_locator import candidates, iou_in_photo
from vision.card_mask import (
    BLOBS,
    DEFAULT_MODEL,
    SKEW_MAX,
    CardMask,
    CardMaskError,
    blob_quad,
    corner_skew,
    default_card_mask,
    mask_agreement,
    mask_blobs,
)
from vision.synth.photos import (
    closeup_card_photo,
    held_card_photo,
    single_card_photo,
    webcam_card_photo,
)


@pytest.mark.parametrize(("image", "message"), [
    (np.zeros((120, 160), np.uint8), "BGR image"),
    (np.zeros((120, 160, 4), np.uint8), "BGR image"),
    (np.zeros((0, 160, 3), np.uint8), "empty"),
    ("photo.jpg", "BGR image"),
])
def test_bad_images_get_a_clear_error(image: object, message: str) -> None:
    with pytest.raises(CardMaskError, match=message):
        default_card_mask().predict(image)  # type: ignore[arg-type]


def test_a_missing_model_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(CardMaskError, match="cardtable train --part mask"):
        CardMask.load(tmp_path / "card_mask.onnx")


@pytest.mark.parametrize("sidecar", [None, "{", '{"input_size": 160}', '{"size": [160, 120]}'])
def test_a_missing_or_malformed_sidecar_is_named(sidecar: str | None, tmp_path: Path) -> None:
    model = tmp_path / "card_mask.onnx"
    shutil.copy(DEFAULT_MODEL, model)
    if sidecar is not None:
        model.with_suffix(".json").write_text(sidecar)
    with pytest.raises(CardMaskError, match="input_size"):
        CardMask.load(model)


def test_a_file_that_is_no_onnx_model_is_named(tmp_path: Path) -> None:
    model = tmp_path / "card_mask.onnx"
    model.write_bytes(b"not a model")
    model.with_suffix(".json").write_text(json.dumps({"input_size": [160, 120]}))
    with pytest.raises(CardMaskError, match="cannot load ONNX model"):
        CardMask.load(model)


def _mask(*rects: tuple[int, int, int, int]) -> np.ndarray:
    m = np.zeros((120, 160), np.float32)
    for x0, y0, x1, y1 in rects:
        m[y0:y1, x0:x1] = 0.9
    return m


@pytest.mark.parametrize(("mask", "boxes"), [
    (_mask(), []),                                             # no card
    (_mask((10, 10, 12, 12)), []),                             # a speck is no card
    (_mask((40, 20, 80, 100)), [(40, 20, 80, 100)]),           # one card
    (_mask((0, 0, 20, 30), (60, 10, 120, 110)), [(60, 10, 120, 110), (0, 0, 20, 30)]),
    (_mask((0, 0, 20, 30), (30, 0, 60, 40), (70, 10, 120, 110)),  # the largest BLOBS of them
     [(70, 10, 120, 110), (30, 0, 60, 40)]),
])
def test_blobs_are_the_largest_scaled_to_the_photo(
        mask: np.ndarray, boxes: list[tuple[int, int, int, int]]) -> None:
    blobs = mask_blobs(mask, (480, 640))
    assert len(blobs) == len(boxes) <= BLOBS
    for blob, (x0, y0, x1, y1) in zip(blobs, boxes, strict=True):
        bx, by, bw, bh = cv2.boundingRect(blob.astype(np.int32))
        assert (bx, by) == pytest.approx((x0 * 4, y0 * 4), abs=1)
        assert (bx + bw, by + bh) == pytest.approx((x1 * 4, y1 * 4), abs=5)


def _square(x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    return np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


@pytest.mark.parametrize(("quad", "agreement"), [
    (_square(40, 30, 80, 90), 1.0),  # the quad is the card
    (_square(40, 30, 80, 60), 0.5),  # half of it
    (_square(0, 30, 120, 90), 1 / 3),  # three times as wide
    (_square(100, 0, 150, 20), 0.0),  # elsewhere
])
def test_a_quad_agrees_with_the_mask_by_its_overlap(quad: np.ndarray, agreement: float) -> None:
    mask = np.zeros((120, 160), np.float32)
    mask[30:90, 40:80] = 1.0
    # the photo is twice the mask's size: quads are given in its pixels; a filled polygon
    # includes its far edge's row and column, so the overlap is a few per cent off
    assert mask_agreement(mask, quad * 2, (240, 320)) == pytest.approx(agreement, abs=0.05)


def test_an_empty_mask_agrees_with_nothing() -> None:
    assert mask_agreement(np.zeros((120, 160), np.float32), _square(0, 0, 100, 100),
                          (120, 160)) == 0.0


@pytest.mark.parametrize(("quad", "skew"), [
    ([[0, 0], [40, 0], [40, 60], [0, 60]], 0.0),          # upright rectangle
    ([[10, 0], [50, 10], [40, 70], [0, 60]], 4.6),         # turned and foreshortened a little
    ([[0, 0], [40, 0], [60, 60], [20, 60]], 18.4),         # sheared: a slanted outline
    ([[0, 0], [40, 0], [40, 60], [0, 20]], 45.0),          # a wedge the fingers cut
])
def test_corner_skew_is_the_worst_corner_off_a_right_angle(quad: list[list[int]],
                                                          skew: float) -> None:
    assert corner_skew(np.float32(quad)) == pytest.approx(skew, abs=0.1)


@pytest.mark.parametrize(("outline", "kept"), [
    ([[20, 20], [80, 20], [80, 110], [20, 110]], True),    # a card's blob
    ([[20, 20], [80, 25], [78, 110], [18, 104]], True),    # a card a little turned in depth
    ([[20, 20], [80, 20], [110, 110], [50, 110]], False),  # slanted 18 degrees
    ([[20, 20], [80, 20], [80, 110], [20, 50]], False),    # a card's top and a wedge of hand
])
def test_a_blob_is_proposed_only_when_its_outline_could_be_a_card(
        outline: list[list[int]], kept: bool) -> None:
    blob = np.float32(outline)
    quad = blob_quad(blob)
    assert (quad is not None) == kept
    if quad is not None:
        assert corner_skew(quad) <= SKEW_MAX


def test_a_faint_mask_holds_no_card() -> None:
    assert mask_blobs(_mask((40, 20, 80, 100)) * 0.5, (120, 160)) == []


RENDERS = [
    ("table", single_card_photo, "5R"),
    ("held", held_card_photo, "+2G"),
    ("closeup", closeup_card_photo, "QH"),
    ("webcam", webcam_card_photo, "7B"),
    ("near", partial(webcam_card_photo, near=True), "SY"),
]


@pytest.mark.parametrize(("kind", "make", "code"), RENDERS, ids=[r[0] for r in RENDERS])
def test_the_shipped_mask_finds_the_card_in_renders(kind: str, make: object, code: str) -> None:
    """Renders of a seed the network never saw (it trained on 4242, validated on 4343): its
    largest blob's rectangle overlaps the card's visible quad, in nearly every one of eight.
    WHY eight: one render can defeat it (a card held against a white sleeve, which the mask
    joins to the card), and a test of one render would measure that render."""
    ious = []
    for i in range(8):
        photo, quad = make(code, np.random.default_rng([20261128, len(kind), i]))  # type: ignore[operator]
        blobs = default_card_mask().blobs(photo)
        box = cv2.boxPoints(cv2.minAreaRect(blobs[0])) if blobs else np.zeros((4, 2), np.float32)
        ious.append(iou_in_photo(box, quad, photo.shape))
    assert np.median(ious) > 0.8
    assert sum(v > 0.7 for v in ious) >= 7


def test_blank_photos_hold_no_card() -> None:
    for level in (0, 128, 255):
        assert default_card_mask().blobs(np.full((480, 640, 3), level, np.uint8)) == []


def test_the_locator_proposes_the_mask_blobs_only_when_asked() -> None:
    photo, _ = held_card_photo("3Y", np.random.default_rng(5))
    assert any(m == "learned" for m, _, _ in candidates(photo))
    assert not any(m == "learned" for m, _, _ in candidates(photo, learned=False))


@pytest.mark.parametrize(("seed", "name", "command"), [
    ([], "card_mask", "cardtable train --part mask --quick"),
    (["--seed", "1"], "card_mask_seed1", "cardtable train --part mask --quick --seed 1"),
])
def test_cardtable_train_part_mask_quick_writes_a_loadable_mask(
        tmp_path: Path, seed: list[str], name: str, command: str) -> None:
    """A few steps of ``cardtable train --part mask --quick``: a model the runtime loads; a
    training at another seed goes to a file of its own, never over the shipped mask."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from protocol_runner.cli import main
    from vision.train.corners import DEFAULT_PHOTOS

    if not DEFAULT_PHOTOS.exists():
        pytest.skip("the shared CC BY photo set (the mask's real rooms) is not here")

    assert main(["train", "--part", "mask", "--quick", "--runs", str(tmp_path),
                 "--workers", "1", *seed]) == 0
    assert sorted(p.name for p in (tmp_path / "quick").glob("card_mask*")) == \
        [f"{name}.json", f"{name}.onnx"]
    model = CardMask.load(tmp_path / "quick" / f"{name}.onnx")
    assert model.predict(np.zeros((48, 64, 3), np.uint8)).shape == (120, 160)
    meta = json.loads((tmp_path / "quick" / f"{name}.json").read_text())
    assert meta["command"] == command
    # drawn partly in real webcam frames and on real surfaces of the CC BY training split
    assert meta["room_frames"] > 0 and meta["surface_frames"] > 0
