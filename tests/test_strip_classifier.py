"""The strip classifier: the shipped ONNX model reading covered cards from their visible corner.

Measured on patches composed from printings the training never saw (render seed 7) and on a
whole rendered card selection layout, read through :class:`vision.recognise.TableReader`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from protocol_runner.observations import from_json
from vision.digest import weights_digest
from vision.recognise import TableReader
from vision.strip_classifier import (
    DEFAULT_STRIP_MODEL,
    NO_INDEX,
    STRIP_CLASSES,
    STRIP_SIZE,
    WIDE_STRIP_MODELS,
    WIDE_STRIP_SIZE,
    StripClassifier,
    StripClassifierError,
    StripEnsemble,
    corner_patch_quad,
    cut_patch,
    single_card_strip,
)
from vision.synth.video import Camera, render_world
from vision.train.strip import (
    RENDER_PX_PER_MM,
    face_pool,
    make_patches,
    no_index_patches,
    no_index_target,
    training_seeds,
)

ONE_CARD_CLASSES = tuple(sorted((*STRIP_CLASSES, NO_INDEX)))


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


@pytest.mark.parametrize("size", [STRIP_SIZE, WIDE_STRIP_SIZE, 7])
def test_cut_patch_is_the_network_input(size: int):
    image = np.full((200, 200, 3), 200, np.uint8)
    patch = cut_patch(image, np.float32([[10, 10], [67, 10], [67, 98], [10, 98]]), size)
    assert patch.shape == (size, size, 3)


def test_each_network_reads_patches_of_its_own_input_size(strip):
    """The table's network reads 32-px patches, the one-card pair 64-px ones (their JSON)."""
    assert strip.size == STRIP_SIZE
    assert single_card_strip(strip).size == WIDE_STRIP_SIZE
    quad = np.float32([[10, 10], [67, 10], [67, 98], [10, 98]])
    image = np.full((200, 200, 3), 200, np.uint8)
    assert strip.predict(image, [quad, quad]).shape == (2, len(strip.classes))


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


def test_whole_card_corners_leave_the_fanned_patches_as_they_were():
    pool = face_pool(7, 1, ("7R", "W"))
    fanned = make_patches(pool, 3, 8)
    both = make_patches(pool, 3, 8, single=2)
    for code, images in fanned.items():
        assert len(both[code]) == 5
        assert all(np.array_equal(a, b) for a, b in zip(images, both[code][:3], strict=True))
        assert all(p.shape == (STRIP_SIZE, STRIP_SIZE, 3) for p in both[code])


@pytest.mark.parametrize(("styles", "wide"), [(1, 0), (1, 2), (2, 1)])
def test_wide_printings_join_the_pool_after_the_plain_ones(styles, wide):
    """The wide printings come from a generator of their own: the plain faces are the bytes they
    were without them, and the wide ones differ from every plain one."""
    classes = ("1B", "RG")
    plain = face_pool(7, styles, classes)
    pool = face_pool(7, styles, classes, wide=wide)
    for code in classes:
        assert len(pool[code]) == styles + wide
        assert all(np.array_equal(a, b) for a, b in zip(plain[code], pool[code], strict=False))
        assert not any(np.array_equal(w, p) for w in pool[code][styles:] for p in plain[code])


@pytest.mark.parametrize(("seed", "seeds"), [(0, (0, 1)), (1, (101, 102)), (2, (103, 104))])
def test_each_training_renders_from_seeds_of_its_own(seed: int, seeds: tuple[int, int]):
    """0 and 1 made the shipped networks and --seed 1 the second wide one; no two trainings
    share a generator, and none after 0 takes the held-out (1, 2) or calibration (3, 4) seeds."""
    assert training_seeds(seed) == seeds
    used = [s for n in range(6) for s in training_seeds(n)]
    assert len(set(used)) == len(used) and not {2, 3, 4} & set(used[2:])


def test_whole_card_corners_of_held_out_printings_are_read(strip):
    """The index corner of a single card (no neighbours; sharper, washed out, under a finger),
    as the single-card reader (vision.corner_index) cuts it."""
    patches = make_patches(face_pool(7, 1), 0, 9, single=4)
    images = [p for v in patches.values() for p in v]
    truth = [c for c, v in patches.items() for _ in v]
    probs = strip.predict_patches(images)
    right = sum(strip.classes[int(np.argmax(p))] == c for p, c in zip(probs, truth, strict=True))
    assert right / len(images) >= 0.75, f"{right}/{len(images)}"


@pytest.mark.parametrize(("px_per_mm", "min_std", "max_std"), [
    (1.0, 50.0, 255.0),  # a table camera's patch (13 × 22 px) is enlarged: the stripes stay
    (12.0, 0.0, 30.0),   # a close-up's (156 × 264 px) is averaged down: the stripes turn grey
])
def test_cut_patch_averages_a_close_up_down(px_per_mm, min_std, max_std):
    """One-pixel stripes: point-sampling a large patch down to the input would alias them into
    black and white blotches the network never saw in training."""
    w, h = round(57 * px_per_mm), round(88 * px_per_mm)
    image = np.zeros((h + 20, w + 20, 3), np.uint8)
    image[:, ::2] = 255
    patch = cut_patch(image, np.float32([[10, 10], [10 + w, 10], [10 + w, 10 + h], [10, 10 + h]]))
    assert patch.shape == (STRIP_SIZE, STRIP_SIZE, 3)
    assert min_std <= float(patch.std()) <= max_std


def test_one_card_is_read_by_the_wide_networks_in_the_shipped_ones_place(strip, tmp_path: Path):
    """Only the shipped network is replaced: a strip model of the user's own is read alone."""
    wide = single_card_strip(strip)
    assert isinstance(wide, StripEnsemble)
    assert [m.path for m in wide.members] == list(WIDE_STRIP_MODELS)
    for suffix in (".onnx", ".json"):
        (tmp_path / f"own{suffix}").write_bytes(DEFAULT_STRIP_MODEL.with_suffix(suffix)
                                                .read_bytes())
    own = StripClassifier.load(tmp_path / "own.onnx")
    assert single_card_strip(own) is own


def _patches(size: int, codes: tuple[str, ...] = ("RG", "2G")) -> list[np.ndarray]:
    pool = face_pool(7, 1, codes, px_per_mm=RENDER_PX_PER_MM * size / STRIP_SIZE)
    return [p for v in make_patches(pool, 2, 8, size=size).values() for p in v]


def test_the_ensemble_is_the_members_geometric_mean(strip):
    one, two = (StripClassifier.load(p) for p in WIDE_STRIP_MODELS)
    patches = _patches(one.size)
    a, b = one.predict_patches(patches), two.predict_patches(patches)
    both = StripEnsemble((one, two)).predict_patches(patches)
    expected = np.sqrt(a * b) / np.sqrt(a * b).sum(axis=1, keepdims=True)
    assert np.allclose(both, expected, atol=1e-5)
    patches = _patches(strip.size)
    assert np.allclose(StripEnsemble((strip, strip)).predict_patches(patches),
                       strip.predict_patches(patches), atol=1e-5)
    assert StripEnsemble((one, two)).predict_patches([]).shape == (0, len(ONE_CARD_CLASSES))


def test_the_one_card_networks_also_know_a_corner_without_an_index(strip):
    assert NO_INDEX not in strip.classes
    assert all(StripClassifier.load(p).classes == ONE_CARD_CLASSES for p in WIDE_STRIP_MODELS)


def test_corners_without_an_index_are_read_as_none(strip):
    """Printings no training saw (render seed 7): the one-card pair reads patches of a face's
    interior or of a face turned a quarter as none, and the faces' own corners hardly ever."""
    pair = single_card_strip(strip)
    pool = face_pool(7, 1, px_per_mm=RENDER_PX_PER_MM * pair.size / STRIP_SIZE)
    none = pair.classes.index(NO_INDEX)
    empty = np.argmax(pair.predict_patches(no_index_patches(pool, 40, 8, pair.size)), axis=1)
    faces = [p for v in make_patches(pool, 1, 8, 1, pair.size).values() for p in v]
    read = np.argmax(pair.predict_patches(faces), axis=1)
    assert (empty == none).sum() >= 32
    assert (read == none).sum() <= 3


@pytest.mark.parametrize("seed", range(8))
def test_a_face_without_an_index_in_its_corner(seed: int):
    """Turned a quarter, or cut to its interior right of the top-left index (0.3 of the width
    on) or below it (0.32 of the height on), never reaching the bottom-right one."""
    face = np.zeros((176, 114, 3), np.uint8)
    out = no_index_target(face, np.random.default_rng(seed))
    h, w = out.shape[:2]
    if (h, w) != (114, 176):
        cut_x, cut_y = 114 - w, 176 - h
        assert cut_x >= 0.3 * 114 - 1 or cut_y >= 0.32 * 176 - 1
        assert cut_x <= 0.4 * 114 and cut_y <= 0.45 * 176


def test_patches_without_an_index_come_from_a_generator_of_their_own():
    pool = face_pool(7, 1, ("RG", "2G"))
    first, again = no_index_patches(pool, 3, 5), no_index_patches(pool, 3, 5)
    assert len(first) == 3 and all(p.shape == (STRIP_SIZE, STRIP_SIZE, 3) for p in first)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))


def test_the_weights_digest_is_of_the_files_contents(strip, tmp_path: Path):
    """What a deck profile records of its corner networks: equal for the same weights wherever
    they lie, other for other weights or another order."""
    one, two = WIDE_STRIP_MODELS
    copy = tmp_path / "copy.onnx"
    copy.write_bytes(one.read_bytes())
    assert weights_digest([one]) == weights_digest([copy])
    assert weights_digest([one, two]) != weights_digest([two, one])
    assert weights_digest([one]) != weights_digest([two]) != strip.digest
    assert single_card_strip(strip).digest == weights_digest([one, two])


def test_an_ensemble_of_other_classes_is_refused(strip):
    other = StripClassifier(strip.session, strip.classes[:-1], strip.input_name)
    with pytest.raises(StripClassifierError, match="same classes"):
        StripEnsemble((strip, other))
    with pytest.raises(StripClassifierError, match="same classes"):
        StripEnsemble(())
    larger = StripClassifier(strip.session, strip.classes, strip.input_name, size=64)
    with pytest.raises(StripClassifierError, match="same input size"):
        StripEnsemble((strip, larger))


@pytest.mark.parametrize(("seed", "name"), [([], "strip_classifier_wide.onnx"),
                                          (["--seed", "1"], "strip_classifier_wide_seed1.onnx")])
def test_the_wide_strip_command_trains_the_wide_network(tmp_path: Path, seed: list[str],
                                                        name: str):
    """`cardtable train --part strip --wide --quick [--seed 1]`: the wide network is written
    beside where the shipped one would go, under its own name, and reads the strip classes."""
    pytest.importorskip("ultralytics")
    from protocol_runner.cli import main

    out = tmp_path / "out"
    assert main(["train", "--part", "strip", "--wide", *seed, "--quick", "--runs",
                 str(tmp_path), "--out", str(out)]) == 0
    assert [p.name for p in out.glob("*.onnx")] == [name]
    assert StripClassifier.load(out / name).classes == ONE_CARD_CLASSES
