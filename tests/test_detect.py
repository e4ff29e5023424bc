"""Localisation on rendered tables (exact labels), scene rendering, and `cardtable detect`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detect import crop_card, locate_cards
from vision.geometry import TableGeometry
from vision.synth.scenes import Scene, canonical_quad, render_scene

MODEL = Path(__file__).resolve().parent.parent / "models" / "card_classifier.onnx"
needs_model = pytest.mark.skipif(not MODEL.exists(), reason="no trained classifier in models/")


def _match(scene: Scene, quads: list[np.ndarray], tol: float = 8.0) -> tuple[int, int]:
    """(labelled cards found within ``tol`` px at every corner, unmatched detections)."""
    used: set[int] = set()
    for card in scene.cards:
        errs = [np.abs(q - card.quad).max() if i not in used else np.inf
                for i, q in enumerate(quads)]
        if errs and min(errs) < tol:
            used.add(int(np.argmin(errs)))
    return len(used), len(quads) - len(used)


@pytest.mark.parametrize(
    ("seed", "deck", "min_found"),
    [(11, "uno", 50), (12, "standard", 49), (13, "mixed", 49)],
)
def test_locates_every_card_of_a_50_card_table(seed: int, deck: str, min_found: int) -> None:
    scene = render_scene(seed, 50, deck=deck)
    loc = locate_cards(scene.image, TableGeometry.from_markers(scene.image), fanned=False)
    found, false = _match(scene, [c.quad for c in loc.cards])
    assert found >= min_found
    assert false <= 50 - found
    assert not loc.obstructions


def test_a_hand_is_reported_as_an_obstruction() -> None:
    scene = render_scene(2001, 50, hand=True)
    loc = locate_cards(scene.image, TableGeometry.from_markers(scene.image))
    assert loc.obstructions
    assert any(c.occluded for c in scene.cards)


def test_scenes_are_reproducible_and_labels_exact() -> None:
    a, b = render_scene(5, 20), render_scene(5, 20)
    assert np.array_equal(a.image, b.image)
    assert [c.code for c in a.cards] == [c.code for c in b.cards]
    assert len(a.cards) == 20
    assert sum(c.zone == "discard" for c in a.cards) == 1
    cols = a.columns("work")
    assert all(len(col) <= 4 for col in cols)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n_cards": 1}, "n_cards"), ({"n_cards": 61}, "n_cards"), ({"deck": "tarot"}, "deck")],
)
def test_bad_scene_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_scene(0, **kwargs)


@pytest.mark.parametrize(
    "quad",
    [
        [[10, 10], [40, 10], [40, 60], [10, 60]],  # already canonical
        [[40, 60], [10, 60], [10, 10], [40, 10]],  # upside down
        [[10, 10], [10, 60], [40, 60], [40, 10]],  # anticlockwise
        [[0, 0], [50, 0], [50, 30], [0, 30]],  # landscape: first edge becomes a short one
    ],
)
def test_canonical_quad(quad: list) -> None:
    q = canonical_quad(np.array(quad, np.float32))
    assert np.linalg.norm(q[1] - q[0]) <= np.linalg.norm(q[2] - q[1])
    assert (q[0, 1] + q[1, 1]) <= (q[2, 1] + q[3, 1])
    a, b = q[1] - q[0], q[2] - q[1]
    assert a[0] * b[1] - a[1] * b[0] > 0  # clockwise on screen (y down)


def test_crop_is_portrait_and_upright() -> None:
    img = np.zeros((100, 100, 3), np.uint8)
    img[20:40, 30:70] = 255  # top half of the card white
    crop = crop_card(img, np.float32([[30, 20], [70, 20], [70, 80], [30, 80]]), (40, 60))
    assert crop.shape == (60, 40, 3)
    assert crop[:15].mean() > 200 and crop[-15:].mean() < 30


@pytest.fixture(scope="module")
def scene_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("scenes")
    cv2.imwrite(str(d / "b_table.png"), render_scene(21, 50).image)
    cv2.imwrite(str(d / "a_table.jpg"), render_scene(22, 12).image)
    (d / "c_broken.png").write_bytes(b"not an image")
    return d


@needs_model
def test_detect_command_json_lines(scene_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(["detect", str(scene_dir), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [Path(x["image"]).name for x in lines] == ["a_table.jpg", "b_table.png",
                                                      "c_broken.png"]
    assert "error" in lines[2]
    first = lines[1]
    assert (first["width"], first["height"]) == (1280, 720)
    assert len(first["detections"]) == 50
    confs = [d["confidence"] for d in first["detections"]]
    assert confs == sorted(confs, reverse=True)
    for d in first["detections"]:
        assert set(d) == {"code", "confidence", "box", "quad"}
        x0, y0, x1, y1 = d["box"]
        assert 0 <= x0 < x1 <= 1280 and 0 <= y0 < y1 <= 720
        assert len(d["quad"]) == 4


@needs_model
def test_detect_fails_only_if_nothing_readable(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    (tmp_path / "x.png").write_bytes(b"junk")
    assert main(["detect", str(tmp_path / "x.png"), str(tmp_path / "missing.jpg")]) == 1
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [("error" in x) for x in out] == [True, True]


@needs_model
@pytest.mark.parametrize(
    ("argv", "rc", "says"),
    [
        (["--count", "1", "--repeat", "1", "--json"], 0, None),
        (["--count", "1", "--repeat", "1", "--json", "--resize", "2560x1440"], 0, None),
        (["--count", "0"], 2, "at least 1"),
    ],
)
def test_bench_vision_times_detect_as_a_user_runs_it(
        scene_dir: Path, argv: list[str], rc: int, says: str | None,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench-vision --detect`` runs ``cardtable detect`` as a fresh process per image, with
    Python's bytecode caches written as a user's first run writes them, even where the
    environment says not to (this machine's does)."""
    import vision.photo_detect
    from protocol_runner.cli import main

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert main(["bench-vision", "--detect", str(scene_dir / "a_table.jpg"), *argv]) == rc
    out = capsys.readouterr()
    if says:
        assert says in out.err
        return
    figures = json.loads(out.out)
    assert figures["images"] == 1 and figures["runs_per_image"] == 1
    assert figures["cards_found"] == 12  # the mat's cards, at 2560 x 1440 too
    assert figures.get("size") == (argv[-1] if "--resize" in argv else None)
    assert 0 < figures["min_s_per_image"] <= figures["median_s_per_image"] \
        <= figures["p90_s_per_image"] <= figures["max_s_per_image"]
    assert figures["untimed_first_runs"] == 1
    assert _cached_fresh(Path(vision.photo_detect.__file__))


def _cached_fresh(source: Path) -> bool:
    """Whether Python's bytecode cache of ``source`` is there and matches it (the pyc header's
    source mtime and size, as the import system checks them)."""
    import importlib.util

    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return False
    header, st = cached.read_bytes()[8:16], source.stat()
    return (int.from_bytes(header[:4], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[4:], "little") == st.st_size & 0xFFFFFFFF)


def test_bench_vision_resizes_only_what_it_detects(capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(["bench-vision", "--resize", "4032x3024"]) == 2
    assert "give --detect" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["bench-vision", "--detect", "x.png"], ["eval", "x.png"]])
def test_a_bad_resize_is_a_usage_error(argv: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    with pytest.raises(SystemExit) as exc:
        main([*argv, "--resize", "big"])
    assert exc.value.code == 2
    assert "'big' is no size: give WxH" in capsys.readouterr().err


@needs_model
def test_bench_vision_detect_reports_a_failing_image(
        scene_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(["bench-vision", "--detect", str(scene_dir / "c_broken.png")]) == 2
    assert "no image could be read" in capsys.readouterr().err


@needs_model
def test_detect_exits_cleanly_at_once(tmp_path: Path) -> None:
    """A process that reads no image ends before OpenCV's Lab tables are built (the thread of
    :func:`vision.card_locator.build_lab_tables`): it must still end with its own error, not an
    abort from a thread killed inside OpenCV."""
    done = subprocess.run([sys.executable, "-m", "protocol_runner.cli", "detect",
                           str(tmp_path / "missing.jpg")], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == "cardtable: error: no image could be read"
