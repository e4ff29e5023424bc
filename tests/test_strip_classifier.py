"""The strip classifier: the shipped ONNX model reading covered cards from their visible corner.

Measured on patches composed from printings the training never saw (render seed 7) and on a
whole rendered card selection layout, read through :class:`vision.recognise.TableReader`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from protocol_runner.observations import from_json
from vision.recognise import TableReader
from vision.strip_classifier import (
    DEFAULT_STRIP_MODEL,
    STRIP_CLASSES,
    STRIP_SIZE,
    StripClassifier,
    StripClassifierError,
    corner_patch_quad,
    cut_patch,
)
from vision.synth.video import Camera, render_world
from vision.train.strip import face_pool, make_patches


@pytest.fixture(scope="module")
def strip() -> StripClassifier:
    return StripClassifier.load(DEFAULT_STRIP_MODEL)


def test_model_classes_are_the_uno_faces_and_the_back(strip):
    assert set(strip.classes) == set(STRIP_CLASSES)
    assert len(STRIP_CLASSES) == 55


@pytest.mark.parametrize(("quad", "expected"), [
    # an upright card 57 × 88 px: the patch is its top-left 13 × 22 px
    ([[0, 0], [57, 0], [57, 88], [0, 88]], [[0, 0], [13, 0], [13, 22], [0, 22]]),
    # shifted and twice the size
    ([[10, 20], [124, 20], [124, 196], [10, 196]], [[10, 20], [36, 20], [36, 64], [10, 64]]),
])
def test_corner_patch_quad(quad, expected):
    assert np.allclose(corner_patch_quad(np.array(quad, np.float32)), expected, atol=1e-4)


def test_held_out_printings_are_read_from_their_corner(strip):
    patches = make_patches(face_pool(7, 1), 4, 8)
    right = total = 0
    for code, images in patches.items():
        probs = strip.predict_patches(images)
        assert probs.shape == (len(images), len(strip.classes))
        assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-3)
        right += sum(strip.classes[int(np.argmax(p))] == code for p in probs)
        total += len(images)
    assert right / total >= 0.85, f"{right}/{total}"


def test_no_patches_no_work(strip):
    assert strip.predict_patches([]).shape == (0, len(strip.classes))


def test_missing_model_is_a_clear_error(tmp_path: Path):
    with pytest.raises(StripClassifierError, match="cardtable train"):
        StripClassifier.load(tmp_path / "nothing.onnx")


def test_cut_patch_is_the_network_input():
    image = np.full((200, 200, 3), 200, np.uint8)
    patch = cut_patch(image, np.float32([[10, 10], [67, 10], [67, 98], [10, 98]]))
    assert patch.shape == (STRIP_SIZE, STRIP_SIZE, 3)


def test_a_rendered_selection_layout_is_read_cell_by_cell():
    """105 columns of 4 cards in two bands, 15 mm apart: the camera's readings of every cell."""
    rng = np.random.default_rng(4)
    faces = [c for c in STRIP_CLASSES if c != "BACK"]
    work = [[str(rng.choice(faces)), "BACK", "2G", "1R"] for _ in range(105)]
    view = from_json({"v": 1, "kind": "view", "work": work, "discard": "8B"})
    image = Camera().shoot(render_world(view, seed=5))
    reader = TableReader.load(reuse=False, columns=105, rows_per_column=4)
    assert reader.strip is not None
    read = reader.read(image).observation
    assert len(read.work) == 105
    right = sum(cell.code == work[c][r] for c, col in enumerate(read.work)
                for r, cell in enumerate(col))
    assert right >= 0.9 * 420, f"{right}/420 cells read right"
