"""The leave-codes-out screen of the corner reader's recipe (:mod:`vision.train.leave_out`): which
webcam runs it leaves out, that it trains without them, and its bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.evaluate import read_names
from vision.photo_split import group_of, in_validation, left_out_webcam, split_of, trained_on
from vision.train.leave_out import DIM, is_dim, main

PHOTOS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / \
    "playing-cards-photos-cc-by"
needs_photos = pytest.mark.skipif(not (PHOTOS / "data.yaml").is_file(),
                                  reason="shared CC BY photos not found")
ROOT = Path(__file__).resolve().parents[1]


def _webcam(tag: str, frame: str = "fd3b3136") -> str:
    return f"{tag}-{frame}-3991-11ed-a342-ec2e98cc7ff6_jpg.rf.x.jpg"


def _run(split: str, validation: bool, left: bool | None = None) -> str:
    """A webcam photo name of a run in ``split`` (in a validation group or not; left out or
    not, where that is asked)."""
    return next(name for k in range(10_000) if split_of(name := _webcam(f"run{k}")) == split
                and in_validation(name) is validation
                and (left is None or left_out_webcam(name) is left))


@pytest.mark.parametrize(("name", "left"), [
    (_run("test", False), False),  # a held-out run is never trained on, so never left out
    (_run("train", True), False),  # nor a validation group's run
    (_run("train", False, True), True),
    (_run("train", False, False), False),
    ("IMG_20220921_193915_jpg.rf.x.jpg", False),  # phone photos are never left out
    ("IMG_7702_JPG.rf.x.jpg", False),
])
def test_only_webcam_runs_the_readers_train_on_are_left_out(name: str, left: bool) -> None:
    assert left_out_webcam(name) is left


def test_a_run_is_left_out_whole_and_about_half_the_trained_runs_are() -> None:
    runs = [_webcam(f"run{k}") for k in range(400)]
    trained = [r for r in runs if trained_on(r)]
    share = sum(left_out_webcam(r) for r in trained) / len(trained)
    assert 0.35 < share < 0.65
    for r in trained[:20]:
        other_frame = _webcam(group_of(r).split("-", 1)[1], frame="0a1b2c3d")
        assert left_out_webcam(other_frame) is left_out_webcam(r)


@pytest.mark.parametrize(("level", "dim"), [(20, True), (DIM - 1, True), (DIM, False),
                                            (240, False)])
def test_a_crop_is_dim_by_its_brightest_channel(level: int, dim: bool) -> None:
    crop = np.zeros((48, 48, 3), np.uint8)
    crop[:, :, 1] = level  # a green cast: the brightest channel decides
    assert is_dim(crop) is dim


def _left_out_labels() -> int:
    """The labelled indices (not backs) of the left-out runs, counted from the label files."""
    names = read_names(PHOTOS / "data.yaml")
    count = 0
    for label in (PHOTOS / "labels").rglob("*.txt"):
        if left_out_webcam(label.with_suffix(".jpg").name):
            count += sum(names[int(line.split()[0])] != "BACK"
                         for line in label.read_text().splitlines() if line.strip())
    return count


@needs_photos
def test_the_left_out_runs_give_no_training_crop() -> None:
    from vision.train.corners import build_crops

    def crops(skip: object) -> int:
        sets = build_crops(PHOTOS, per_label=1, per_quad=0, rendered=0, negatives=0,
                           log=lambda _: None, skip=skip)  # type: ignore[arg-type]
        return len(sets["train"].codes)

    left = _left_out_labels()
    assert left > 100
    assert crops(None) - crops(left_out_webcam) == left


@needs_photos
def test_the_screen_trains_reads_the_left_out_crops_and_writes_its_figures(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--quick --epochs 1``: a smoke test of the whole command, not a measurement."""
    pytest.importorskip("torch")
    assert main(["--out", str(tmp_path), "--quick", "--epochs", "1"]) == 0
    meta = json.loads((tmp_path / "corner_classifier.json").read_text())
    figures = meta["left_out"]
    assert figures["all"][1] == _left_out_labels()
    assert figures["dim"][1] + figures["bright"][1] == figures["all"][1]
    assert figures["dim"][0] + figures["bright"][0] == figures["all"][0]
    assert meta["left_out_recipe"]["epochs"] == 1 and "val_top1" in meta
    assert (tmp_path / "corner_reader.onnx").is_file()
    assert "left-out webcam index crops read right: all " in capsys.readouterr().out


def test_a_folder_without_the_photos_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path / "out"), "--photos", str(tmp_path)]) == 2
    assert "no data.yaml" in capsys.readouterr().err


def test_a_set_with_no_webcam_run_left_out_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "data.yaml").write_text("names: ['2C', 'BACK']\n")
    for folder in ("images", "labels"):
        (tmp_path / folder).mkdir()
    # a phone photo the readers train on: never left out
    name = next(n for m in range(60) if trained_on((n := f"IMG_20220921_19{m:02d}15_jpg.rf.x")
                                                   + ".jpg"))
    cv2.imwrite(str(tmp_path / "images" / f"{name}.jpg"), np.zeros((64, 64, 3), np.uint8))
    (tmp_path / "labels" / f"{name}.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    assert main(["--out", str(tmp_path / "out"), "--photos", str(tmp_path)]) == 2
    assert "no labelled webcam index is left out" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--out", str(ROOT / "models")], "would replace the shipped reader"),
    (["--out", "x", "--epochs", "0"], "--epochs must be at least 1"),
    (["--out", "x", "--precision", "float16"], "invalid choice: 'float16'"),
])
def test_bad_arguments_are_refused(argv: list[str], message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
