"""The committed ONNX classifier reads rendered cards, and refuses bad input with clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.classifier import (
    DEFAULT_MODEL,
    LATER_SEEDS,
    LATER_TRAININGS,
    CardClassifier,
    ClassifierError,
    Ensemble,
    white_balance,
    with_later_trainings,
)
from vision.synth.crops import training_crop
from vision.synth.faces import (
    ALL_FACE_CODES,
    LATER_TYPEFACES,
    OTHER_TYPEFACES,
    UNO_FACE_CODES,
    canonical_face,
)
from vision.train.data import SPLIT_SEED, CardRecipe, build_dataset


@pytest.fixture(scope="module")
def clf() -> CardClassifier:
    return CardClassifier.load(DEFAULT_MODEL)


def test_classes_are_every_face_and_back(clf: CardClassifier) -> None:
    assert set(ALL_FACE_CODES) <= set(clf.classes)
    assert clf.input_size >= 32 and clf.temperature > 0


def test_canonical_uno_faces_read_right(clf: CardClassifier) -> None:
    codes = list(UNO_FACE_CODES) + ["BACK"]
    got = [c for c, _ in clf.classify([canonical_face(c, (160, 240)) for c in codes])]
    right = sum(g == c for g, c in zip(got, codes, strict=True))
    assert right >= len(codes) - 2, [(c, g) for c, g in zip(codes, got, strict=True) if c != g]


def test_unseen_augmented_renders_mostly_right(clf: CardClassifier) -> None:
    # seeds outside the training seed space ([split, class, i] with split 1-3)
    codes = list(ALL_FACE_CODES)
    crops = [training_crop(c, np.random.default_rng([77, i]), clf.input_size)
             for i, c in enumerate(codes)]
    got = [c for c, _ in clf.classify(crops)]
    acc = np.mean([g == c for g, c in zip(got, codes, strict=True)])
    assert acc >= 0.8, acc


def test_probabilities_are_calibrated_rows(clf: CardClassifier) -> None:
    crops = [canonical_face("7R", (100, 150)), canonical_face("QH", (100, 150), deck="standard")]
    p = clf.predict(crops)
    assert p.shape == (2, len(clf.classes))
    assert np.allclose(p.sum(1), 1.0, atol=1e-5)
    assert clf.classes[int(p[0].argmax())] == "7R"


def test_landscape_crop_is_turned(clf: CardClassifier) -> None:
    face = cv2.rotate(canonical_face("+2G", (120, 180)), cv2.ROTATE_90_CLOCKWISE)
    assert clf.classify([face])[0][0] == "+2G"


def test_embeddings_are_unit_vectors(clf: CardClassifier) -> None:
    e = clf.embed([canonical_face("3B", (80, 120)), canonical_face("W", (80, 120))])
    assert e.shape[0] == 2 and np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(("both_ways", "views"), [(False, 2), (True, 4)])
def test_read_gives_predict_and_the_features_of_every_view(clf: CardClassifier, both_ways: bool,
                                                          views: int) -> None:
    """One call, the probabilities of :meth:`predict` and the raw features of each view read
    (the crops, then the crops turned), as :meth:`embed` gives them normalised."""
    crops = [canonical_face("3B", (80, 120)), canonical_face("W", (80, 120))]
    probs, feats = clf.read(crops, both_ways)
    assert np.array_equal(probs, clf.predict(crops, both_ways))
    assert feats.shape[0] == views
    turned = [cv2.rotate(c, cv2.ROTATE_180) for c in crops] if both_ways else []
    unit = feats / np.linalg.norm(feats, axis=1, keepdims=True)
    assert np.allclose(unit, clf.embed(crops + turned), atol=1e-5)


def test_empty_batch(clf: CardClassifier) -> None:
    assert clf.predict([]).shape == (0, len(clf.classes))


def test_white_balance_removes_a_colour_cast() -> None:
    face = canonical_face("5G", (64, 64)).astype(np.float32)
    tinted = np.clip(face * [1.3, 0.9, 0.6], 0, 255).astype(np.uint8)  # BGR: bluish light
    before = tinted[2:5, 10:50].reshape(-1, 3).mean(0)
    after = white_balance(tinted)[2:5, 10:50].reshape(-1, 3).mean(0)
    assert np.ptp(after) < np.ptp(before) / 2, (before, after)
    assert after.mean() > 200  # the border reads white again


@pytest.mark.parametrize(
    ("crop", "message"),
    [
        (np.zeros((96, 64), np.uint8), "expected a BGR image"),
        (np.zeros((8, 8, 3), np.uint8), "too small"),
        (np.zeros((96, 64, 3), np.float32), "uint8"),
        ("card.png", "expected a BGR image"),
        (None, "expected a BGR image"),
    ],
)
def test_bad_crops_are_refused(clf: CardClassifier, crop: object, message: str) -> None:
    with pytest.raises(ClassifierError, match=message):
        clf.predict([crop])  # type: ignore[list-item]


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ClassifierError, match="cardtable train"):
        CardClassifier.load(tmp_path / "nope.onnx")


@pytest.mark.parametrize("meta", ['{"classes": ["7R"]}', "not json", '{"input_size": 64}'])
def test_bad_metadata_is_a_clear_error(tmp_path: Path, meta: str) -> None:
    model = tmp_path / "m.onnx"
    shutil.copy(DEFAULT_MODEL, model)
    model.with_suffix(".json").write_text(meta)
    with pytest.raises(ClassifierError, match="metadata"):
        CardClassifier.load(model)


def test_class_count_mismatch_is_caught(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    shutil.copy(DEFAULT_MODEL, model)
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta["classes"] = meta["classes"][:-1]
    model.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ClassifierError, match="outputs"):
        CardClassifier.load(model)


def test_corrupt_model_is_a_clear_error(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"not an onnx model")
    shutil.copy(DEFAULT_MODEL.with_suffix(".json"), model.with_suffix(".json"))
    with pytest.raises(ClassifierError, match="cannot load"):
        CardClassifier.load(model)


def test_train_command_rejects_bad_size(capsys: pytest.CaptureFixture) -> None:
    from protocol_runner.cli import main

    assert main(["train", "--imgsz", "8"]) == 2
    assert "imgsz" in capsys.readouterr().err


def test_an_ensemble_of_one_model_reads_as_that_model(clf: CardClassifier) -> None:
    crops = [training_crop(c, np.random.default_rng([5, i]), 96)
             for i, c in enumerate(UNO_FACE_CODES[:6])]
    one = Ensemble((clf,))
    assert one.classes == clf.classes
    assert np.allclose(one.predict(crops, both_ways=True), clf.predict(crops, both_ways=True))


def test_an_ensemble_averages_its_members(clf: CardClassifier) -> None:
    """A member read at another temperature gives other probabilities; the ensemble's are their
    mean."""
    from dataclasses import replace

    crops = [canonical_face(c) for c in UNO_FACE_CODES[:4]]
    hot = replace(clf, temperature=clf.temperature * 3)
    mean = Ensemble((clf, hot)).predict(crops)
    assert np.allclose(mean, (clf.predict(crops) + hot.predict(crops)) / 2)
    assert np.allclose(mean.sum(1), 1)


def test_an_ensemble_reads_the_features_of_the_member_asked_for(clf: CardClassifier) -> None:
    """:meth:`Ensemble.read` gives its own :meth:`predict` and the features of the member
    named (the first if none), so that an enrolled deck's network is read once; a network not
    in it, or a single network asked for another's, is refused."""
    from dataclasses import replace

    crops = [canonical_face(c) for c in UNO_FACE_CODES[:3]]
    hot = replace(clf, temperature=clf.temperature * 3)
    pair = Ensemble((clf, hot))
    probs, feats = pair.read(crops, both_ways=True, own=hot)
    assert np.array_equal(probs, pair.predict(crops, both_ways=True))
    assert np.array_equal(feats, hot.read(crops, both_ways=True)[1])
    assert np.array_equal(pair.read(crops)[1], clf.read(crops)[1])
    other = replace(clf, temperature=1.0)
    with pytest.raises(ClassifierError, match="not a member"):
        pair.read(crops, own=other)
    with pytest.raises(ClassifierError, match="its own features"):
        clf.read(crops, own=hot)


@pytest.mark.parametrize(("members", "message"), [
    ((), "at least one"),
    ("other classes", "share their classes"),
])
def test_a_bad_ensemble_is_refused(clf: CardClassifier, members: object, message: str) -> None:
    from dataclasses import replace

    if members == "other classes":
        members = (clf, replace(clf, classes=tuple(reversed(clf.classes))))
    with pytest.raises(ClassifierError, match=message):
        Ensemble(members)  # type: ignore[arg-type]


def test_a_model_of_ones_own_is_read_alone(clf: CardClassifier, tmp_path: Path) -> None:
    """The later trainings belong to the shipped model: a model given with --model, or none
    named, is read alone."""
    own = tmp_path / "mine.onnx"
    assert with_later_trainings(clf, own) is clf
    assert with_later_trainings(clf, None) is clf


def test_the_shipped_model_is_read_with_its_later_trainings(clf: CardClassifier) -> None:
    # every later seed the reader names is shipped: a missing file would shrink it silently
    assert [p.name for p in LATER_TRAININGS if p.is_file()] == [p.name for p in LATER_TRAININGS]
    group = with_later_trainings(clf, DEFAULT_MODEL)
    assert isinstance(group, Ensemble) and group.members[0] is clf
    later = group.members[1:]
    assert [m.meta["training"]["seed"] for m in later] == list(LATER_SEEDS)
    assert all(m.classes == clf.classes for m in later)


def test_a_later_seed_trains_a_later_training(tmp_path: Path) -> None:
    """`cardtable train --part card --seed 1 --quick`: the network of another training seed
    goes beside the first one, named for its seed, with the seed in its metadata."""
    pytest.importorskip("ultralytics")
    from protocol_runner.cli import main

    assert main(["train", "--part", "card", "--seed", "1", "--quick", "--runs", str(tmp_path),
                 "--out", str(tmp_path / "out")]) == 0
    assert not (tmp_path / "out" / "card_classifier.onnx").exists()
    second = CardClassifier.load(tmp_path / "out" / "card_classifier_seed1.onnx")
    assert second.meta["training"]["seed"] == 1
    assert second.classes == CardClassifier.load(DEFAULT_MODEL).classes
    # its renders are the later trainings': wide printings draw recent printings' details
    changed = 0
    for code in ("RB", "RG", "RR", "RY", "1B", "1G"):
        for i in range(6):
            img = cv2.imread(str(tmp_path / "classifier_data" / "train" / code / f"{i:05d}.png"))
            seed = [SPLIT_SEED["train"], ALL_FACE_CODES.index(code), i]
            assert np.array_equal(img, training_crop(code, np.random.default_rng(seed), 96,
                                                     recent=True))
            changed += not np.array_equal(img, training_crop(code, np.random.default_rng(seed),
                                                             96))
    assert changed


OTHERS, ALL_FOUR = OTHER_TYPEFACES, OTHER_TYPEFACES + LATER_TYPEFACES


@pytest.mark.parametrize(("seed", "recipe"), [
    (0, CardRecipe()),
    # seeds 1 and 2 saw seed 0's very crops, with recent printings' details
    (1, CardRecipe(recent=True)),
    (2, CardRecipe(recent=True)),
    # later trainings render crops of their own, in other typefaces
    (3, CardRecipe(recent=True, typefaces=OTHERS, stream=(3,))),
    # seed 4 was trained before Lato was shipped, seeds 4-6 before cut_view: their crops must
    # stay the ones they saw
    (4, CardRecipe(recent=True, typefaces=OTHERS, stream=(4,))),
    (5, CardRecipe(recent=True, typefaces=ALL_FOUR, stream=(5,))),
    (6, CardRecipe(recent=True, typefaces=ALL_FOUR, stream=(6,))),
    (7, CardRecipe(recent=True, typefaces=ALL_FOUR, stream=(7,), any_cut=True)),
    (8, CardRecipe(recent=True, typefaces=ALL_FOUR, stream=(8,), any_cut=True)),
    (11, CardRecipe(recent=True, typefaces=ALL_FOUR, stream=(11,), any_cut=True)),
])
def test_a_trainings_recipe_is_decided_by_its_seed_and_added_details_only_after_it(
        seed: int, recipe: CardRecipe) -> None:
    assert CardRecipe.for_seed(seed) == recipe


def test_a_training_that_cuts_at_any_side_renders_those_crops(tmp_path: Path) -> None:
    recipe = CardRecipe(recent=True, stream=(7,), any_cut=True)
    assert build_dataset(tmp_path, {"train": 3}, 96, codes=("4B",), workers=1,
                         recipe=recipe) == 3
    for i in range(3):
        seed = [SPLIT_SEED["train"], 0, i, 7]
        assert np.array_equal(cv2.imread(str(tmp_path / "train" / "4B" / f"{i:05d}.png")),
                              training_crop("4B", np.random.default_rng(seed), 96, recent=True,
                                            any_cut=True))


def test_a_render_stream_draws_other_crops_and_the_empty_one_the_first(tmp_path: Path) -> None:
    """The first stream's crops are the ones seeds 0-2 were trained on; another stream's are
    other draws, each its own crop seed with the stream appended."""
    codes = ("RR", "6Y")
    for stream in ((), (3,)):
        assert build_dataset(tmp_path / str(stream), {"train": 2}, 96, codes=codes, workers=1,
                             recipe=CardRecipe(recent=True, stream=stream)) == 4
    for index, code in enumerate(codes):  # a crop's seed: split, the code's place in codes, i
        for i in range(2):
            seed = [SPLIT_SEED["train"], index, i]
            first, own = (cv2.imread(str(tmp_path / str(s) / "train" / code / f"{i:05d}.png"))
                          for s in ((), (3,)))
            assert np.array_equal(first, training_crop(code, np.random.default_rng(seed), 96,
                                                       recent=True))
            assert np.array_equal(own, training_crop(code, np.random.default_rng([*seed, 3]),
                                                     96, recent=True))
            assert not np.array_equal(first, own)
