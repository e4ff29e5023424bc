"""`cardtable eval`: label parsing, scoring rules (corner-box centre inside the card), reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.evaluate import (
    EVAL_SEED_BASE,
    MISSED,
    EvalError,
    Report,
    _contains,
    _label_path,
    evaluate_scenes,
    evaluate_yolo,
    format_report,
    quad_error,
    read_names,
    read_yolo_labels,
    scene_errors,
    trained_codes,
)
from vision.recognise import Detection

MODEL = Path(__file__).resolve().parent.parent / "models" / "card_classifier.onnx"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"


@pytest.mark.parametrize(
    ("text", "names"),
    [("names:\n  0: AS\n  1: '2S'\n", ["AS", "2S"]), ("names: [7R, BACK]\n", ["7R", "BACK"]),
     ("path: .\nnames:\n  - \"+2B\"\n  - W # wild\ntrain: x\n", ["+2B", "W"])],
)
def test_read_names(tmp_path: Path, text: str, names: list[str]) -> None:
    (tmp_path / "data.yaml").write_text(text)
    assert read_names(tmp_path / "data.yaml") == names


@pytest.mark.parametrize("text", ["nothing: here\n", "names: 5\n", "names:\n  1: AS\n",
                                  "names:\n  x: AS\n", "names: [a, b\n"])
def test_read_names_bad(tmp_path: Path, text: str) -> None:
    (tmp_path / "data.yaml").write_text(text)
    with pytest.raises(EvalError):
        read_names(tmp_path / "data.yaml")


def test_yolo_labels_to_pixel_centres(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("0 0.5 0.25 0.1 0.1\n\n1 0.1 0.9 0.05 0.05\n")
    assert read_yolo_labels(p, ["AS", "BACK"], 200, 100) == [("AS", 100.0, 25.0),
                                                            ("BACK", 20.0, 90.0)]
    assert read_yolo_labels(tmp_path / "none.txt", ["AS"], 10, 10) == []
    p.write_text("7 0.5 0.5 0.1 0.1\n")
    with pytest.raises(EvalError, match="line 1"):
        read_yolo_labels(p, ["AS"], 10, 10)


def test_label_path_mirrors_images_folder(tmp_path: Path) -> None:
    img = tmp_path / "images" / "phone" / "x.jpg"
    assert _label_path(tmp_path, img) == tmp_path / "labels" / "phone" / "x.txt"


def test_a_corner_box_centre_inside_the_card_counts() -> None:
    d = Detection("AS", 0.9, np.float32([[10, 10], [60, 10], [60, 90], [10, 90]]))
    assert _contains(d, 15, 20) and not _contains(d, 70, 20)


LEVEL = np.array([[0, 0], [87, 0], [87, 56], [0, 56]], np.float32)  # a card on its long side


@pytest.mark.parametrize(("found", "error"), [
    (LEVEL, 0.0),
    (np.roll(LEVEL, 2, axis=0), 0.0),  # the same outline, corners named from the other end
    (LEVEL + [1.5, 0], 1.5),
    (np.roll(LEVEL, 2, axis=0) + [0, 2], 2.0),
    (np.roll(LEVEL, 1, axis=0), 71.5),  # a quarter turn: another card's outline
    (LEVEL + [60, 0], 60.0),  # beside it
])
def test_a_quad_is_located_either_way_up(found: np.ndarray, error: float) -> None:
    assert quad_error(found, LEVEL) == pytest.approx(error, abs=1e-3)


def test_report_summary_and_text() -> None:
    rep = Report("test", pairs=[("7R", "7R"), ("7R", "1R"), ("SY", "SY"), ("W", MISSED)],
                 detections=4, false_cards=1, images=2, layouts=2, layouts_right=1)
    s = rep.summary()
    assert s["card_accuracy"] == 0.5 and s["missed"] == 1
    assert s["per_class"]["7R"] == {"right": 1, "total": 2, "accuracy": 0.5}
    assert s["confusions"][0] == {"truth": "7R", "read": "1R", "count": 1} or \
        {"truth": "7R", "read": "1R", "count": 1} in s["confusions"]
    text = format_report(s)
    assert "per-card accuracy: 50.0000%" in text and "7R->1R x1" in text
    assert "layouts read with no error: 1/2" in text
    assert "median_cpu_ms_per_image" not in s and "CPU per image" not in text
    json.dumps(s)


def _three_photos(root: Path) -> np.ndarray:
    """A YOLO set of three 40-pixel photos at ``root``: a labels a 7H, b a 2S, c nothing; the
    quad of a card filling a photo."""
    import cv2

    (root / "images").mkdir()
    (root / "labels").mkdir()
    (root / "data.yaml").write_text("names: [7H, 2S]\n")
    for name, label in (("a", "0 0.5 0.5 0.1 0.1\n"), ("b", "1 0.5 0.5 0.1 0.1\n"), ("c", "")):
        cv2.imwrite(str(root / "images" / f"{name}.png"), np.full((40, 40, 3), 90, np.uint8))
        (root / "labels" / f"{name}.txt").write_text(label)
    return np.float32([[0, 0], [39, 0], [39, 39], [0, 39]])


@pytest.mark.parametrize(("kinds", "expected"), [
    # photo -> its scene kind; per kind [cards, found, detections, false] (None: not reported)
    ({"a": "one", "b": "one", "c": "two"}, {"one": [2, 1, 2, 1], "two": [0, 0, 1, 1]}),
    ({"a": "one", "b": "two", "c": "two"}, {"one": [1, 1, 1, 0], "two": [1, 0, 2, 2]}),
    ({"a": "one", "b": "one", "c": "one"}, None),  # one kind: the totals say it all
    (None, None),  # not asked for
])
def test_a_yolo_set_is_counted_by_scene_kind(tmp_path: Path, kinds: dict[str, str] | None,
                                             expected: dict[str, list[int]] | None) -> None:
    """Three photos, a reader that sees one 7H filling each: a's labelled 7H is found, b's 2S
    is missed and its 7H false, c has no label and its 7H is false."""
    whole = _three_photos(tmp_path)
    rep = evaluate_yolo(tmp_path, None, detect=lambda image: [Detection("7H", 0.9, whole)],
                        kind_of=None if kinds is None else (lambda path: kinds[path.stem]))
    s = rep.summary()
    assert (s["cards"], s["cards_right"], s["detections"], s["false_cards"]) == (2, 1, 3, 2)
    if expected is None:
        assert "by_scene_kind" not in s and "by scene kind" not in format_report(s)
        return
    assert {k: [v["cards"], v["cards_right"], v["detections"], v["false_cards"]]
            for k, v in s["by_scene_kind"].items()} == expected
    n, r, d, f = expected["two"]
    assert f"two {r}/{n} found" in format_report(s) and f"{f}/{d} false" in format_report(s)
    json.dumps(s)


@pytest.mark.parametrize(("cpu_ms", "median"), [([5.0], 5.0), ([1.0, 9.0, 4.0], 4.0),
                                                 ([2.0, 3.0], 2.5)])
def test_report_prints_the_median_cpu_per_image(cpu_ms: list[float], median: float) -> None:
    s = Report("test", pairs=[("7R", "7R")], images=len(cpu_ms), cpu_ms=cpu_ms).summary()
    assert s["median_cpu_ms_per_image"] == median
    assert f"median CPU per image: {median:.1f} ms" in format_report(s)


def test_scene_seeds_below_the_measurement_range_are_refused() -> None:
    with pytest.raises(EvalError, match="measurement seeds"):
        evaluate_scenes(None, 1, seed=EVAL_SEED_BASE - 1)  # type: ignore[arg-type]


@pytest.mark.skipif(not MODEL.exists(), reason="no trained classifier in models/")
def test_eval_scenes_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(["eval", "scenes", "--count", "2", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["cards"] == 100 and s["layouts"] == 2
    assert 0.0 <= s["card_accuracy"] <= 1.0 and "prior_card_accuracy" in s
    assert s["calibration"]["count"] == s["detections"]  # every detection scored


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "no/such/place"], "not a YOLO folder"),
    (["eval", "scenes", "--count", "0"], "--count"),
    (["eval", "labels.csv", "--photos", "yes", "--deck", "uno"], "cannot go with --deck uno"),
    (["eval", "labels.csv", "--photos", "no", "--deck", "uno"], "cannot go with --deck uno"),
])
@pytest.mark.skipif(not MODEL.exists(), reason="no trained classifier in models/")
def test_eval_bad_arguments(argv: list[str], message: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(not MODEL.exists(), reason="no trained classifier in models/")
@pytest.mark.parametrize(("subdir", "photos"), [("", "auto"), ("images", "auto"), ("", "no"),
                                               ("", "uno")])
def test_eval_labels_csv_on_card_photos(tmp_path: Path, subdir: str, photos: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A labels.csv beside its images or beside an images/ folder; a missing image is listed.
    ``--photos auto`` reads each photo as `cardtable detect` does, ``no`` by the whole-card
    classifier alone, ``--deck uno`` as `cardtable detect --deck uno`."""
    import cv2

    from protocol_runner.cli import main
    from vision.synth.faces import canonical_face

    folder = tmp_path / subdir
    folder.mkdir(exist_ok=True)
    rows = ["image,code"]
    for i, code in enumerate(["7R", "SY", "AS"]):
        card = canonical_face(code, (200, 300), deck="standard" if code == "AS" else "uno")
        photo = np.full((480, 640, 3), (40, 60, 30), np.uint8)
        photo[90:390, 220:420] = card
        cv2.imwrite(str(folder / f"{i}.jpg"), photo)
        rows.append(f"{i}.jpg,{code}")
    rows.append("gone.jpg,1R")
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    how = ["--deck", "uno"] if photos == "uno" else ["--photos", photos]
    assert main(["eval", str(tmp_path / "labels.csv"), *how, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["images"] == 3 and s["cards"] == 3 and len(s["unreadable"]) == 1
    assert s["card_accuracy"] is not None and s["median_cpu_ms_per_image"] > 0
    assert s["calibration"]["count"] == s["cards"] - s["missed"]  # each photo's one card


def _scene_and_view(seen_discard: str = "9R", swap: bool = False, misread: bool = False,
                    drop: bool = False, extra: bool = False) -> tuple[Any, list[Detection],
                                                                     list[Detection | None], Any]:
    """A three-card layout (two columns and a discard) and a reading of it, spoiled on demand."""
    from protocol_runner.observations import Cell, View
    from vision.synth.scenes import Scene, SceneCard

    quads = [np.float32([[x, 0], [x + 50, 0], [x + 50, 80], [x, 80]]) for x in (0, 100, 200)]
    cards = (SceneCard("1R", quads[0], "work", 0, 0), SceneCard("2G", quads[1], "work", 1, 0),
             SceneCard("9R", quads[2], "discard", None, None))
    scene = Scene(np.zeros((10, 10, 3), np.uint8), cards, np.eye(3), 0, "uno")
    dets = [Detection("7R" if misread and c.code == "1R" else c.code, 0.9, c.quad)
            for c in cards]
    matched: list[Detection | None] = list(dets)
    if drop:
        matched[1] = None
        dets.pop(1)
    if extra:
        dets.append(Detection("W", 0.9, quads[0] + 500))
    work = [(Cell("2G"),), (Cell("1R"),)] if swap else [(Cell("1R"),), (Cell("2G"),)]
    return scene, dets, matched, View(work=tuple(work), discard=Cell(seen_discard))


@pytest.mark.parametrize(("spoil", "kinds"), [
    ({}, []),
    ({"seen_discard": "4B"}, ["arrangement"]),
    ({"swap": True}, ["arrangement"]),
    ({"misread": True}, ["wrong code"]),
    ({"drop": True}, ["missed"]),
    ({"extra": True}, ["false"]),
    ({"misread": True, "swap": True}, ["wrong code"]),  # the cause, not its echo in the layout
])
def test_scene_errors_name_each_fault(spoil: dict[str, Any], kinds: list[str]) -> None:
    """A layout counts as read with no error exactly when no error is listed."""
    scene, dets, matched, view = _scene_and_view(**spoil)
    assert [e["kind"] for e in scene_errors(scene, dets, matched, view)] == kinds


def test_scene_errors_without_a_view() -> None:
    scene, dets, matched, _ = _scene_and_view()
    assert [e["kind"] for e in scene_errors(scene, dets, matched, None)] == ["no view"]


@pytest.mark.parametrize(("trained", "expected"), [
    # photos the readers train on -> the groups of the labels of all three photos [cards, found]
    ({"a"}, {"one, code trained on": [1, 1], "one, code not trained on": [1, 0]}),
    ({"b"}, {"one, code not trained on": [1, 1], "one, code trained on": [1, 0]}),
    ({"a", "b"}, {"one, code trained on": [2, 1]}),
    (set(), {"one, code not trained on": [2, 1]}),
    ({"c"}, {"one, code not trained on": [2, 1]}),  # c holds no label
])
def test_a_yolo_set_is_counted_by_whether_its_codes_were_trained_on(
        tmp_path: Path, trained: set[str], expected: dict[str, list[int]]) -> None:
    """The photos of the last test, one kind of scene: a's 7H found, b's 2S missed."""
    whole = _three_photos(tmp_path)
    group = trained_codes(tmp_path, lambda path: "one", lambda path: path.stem in trained)
    rep = evaluate_yolo(tmp_path, None, detect=lambda image: [Detection("7H", 0.9, whole)],
                        code_group=group)
    s = rep.summary()
    assert {k: [v["cards"], v["cards_right"]] for k, v in s["by_code_group"].items()} == expected
    assert all(f"{k} {r}/{n}" in format_report(s) for k, (n, r) in expected.items())
    json.dumps(s)


def test_no_code_group_is_reported_unless_asked_for(tmp_path: Path) -> None:
    s = Report("test", pairs=[("7H", "7H")], detections=1, images=1).summary()
    assert "by_code_group" not in s and "by code group" not in format_report(s)
