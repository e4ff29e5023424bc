"""Domino tiles on the mat: rendered tables with exact labels, tiles found without known quads
and read, the figures of `cardtable eval tiles`, and `cardtable detect --tiles` JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.cli import main
from vision.detect import card_mask
from vision.evaluate import EvalError
from vision.geometry import TableGeometry
from vision.recognise import Detection
from vision.synth.tile_scenes import TILE_EVAL_SEED_BASE, render_tile_scene
from vision.tile_detect import (
    SMOOTH_MAX,
    _median_of_histogram,
    colour_gradient,
    detect_tiles,
    tile_region,
)
from vision.tile_evaluate import (
    evaluate_tile_scenes,
    format_tile_report,
    match,
    quad_distance,
    score_tile_scenes,
)
from vision.tiles import read_half

SQUARE = np.array([[0, 0], [10, 0], [10, 20], [0, 20]], np.float32)


def test_scenes_are_reproducible_with_one_set_and_a_valid_line() -> None:
    a, b = render_tile_scene(7), render_tile_scene(7)
    assert np.array_equal(a.image, b.image) and a.image.shape == (720, 1280, 3)
    faces = [t.code for t in a.tiles if t.code != "BACK"]
    assert len(faces) == len(set(faces)) and len(a.tiles) <= 28
    assert {t.group for t in a.tiles} <= {"line", "hand", "boneyard"}
    line = a.line()
    assert len(line) >= 5
    # neighbours in the line of play share a number (the renderer lays a legal Muggins line)
    for left, right in zip(line, line[1:], strict=False):
        assert set(left[1:]) & set(right[1:]), (left, right)
    assert not np.array_equal(render_tile_scene(8).image, a.image)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"line_length": 0}, "line_length"), ({"line_length": 19}, "line_length"),
    ({"size": (100, 100)}, "too small"),
])
def test_bad_scene_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_tile_scene(1, **kwargs)


@pytest.mark.parametrize("seed", [3, 11, 1004])  # 1004: dark backs side by side, dark felt
def test_tiles_are_found_and_read_without_known_quads(seed: int) -> None:
    scene = render_tile_scene(seed)
    dets = list(detect_tiles(scene.image))
    width = float(np.median([np.linalg.norm(t.quad[1] - t.quad[0]) for t in scene.tiles]))
    hits = match([t.quad for t in scene.tiles], dets, 0.3 * width)
    right = sum(j is not None and dets[j].code == t.code for t, j in zip(scene.tiles, hits,
                                                                         strict=True))
    assert right >= len(scene.tiles) - 1, (right, len(scene.tiles))
    assert len(dets) <= len(scene.tiles) + 1
    assert all(0.0 <= d.confidence <= 1.0 for d in dets)
    assert [d.confidence for d in dets] == sorted((d.confidence for d in dets), reverse=True)


@pytest.mark.parametrize(("cells", "number", "misfit"), [
    (set(), 0, 0), ({(1, 1)}, 1, 0), ({(0, 2), (2, 0)}, 2, 0), ({(0, 0), (1, 1), (2, 2)}, 3, 0),
    ({(0, 0), (0, 2), (2, 0), (2, 2)}, 4, 0), ({(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)}, 5, 0),
    ({(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)}, 6, 0),  # a 6 printed in rows
    ({(0, 0), (0, 2), (1, 1), (2, 0)}, 5, 1),  # a 5 that lost a pip to glare
    ({(2, 1)}, 0, 1),  # a stray spot where no number prints one
])
def test_half_is_the_number_whose_layout_fits(cells: set, number: int, misfit: int) -> None:
    half = read_half(frozenset(cells))
    assert (half.number, half.misfit) == (number, misfit)


@pytest.mark.parametrize(("shift", "start", "expected"), [
    (0.0, 0, 0.0), (0.0, 2, 0.0), (3.0, 1, 3.0),
])
def test_quad_distance_ignores_the_starting_corner(shift: float, start: int,
                                                   expected: float) -> None:
    moved = np.roll(SQUARE + [shift, 0], start, axis=0)
    assert quad_distance(moved, SQUARE) == pytest.approx(expected)


def test_match_pairs_each_detection_once() -> None:
    dets = [Detection("D12", 0.9, SQUARE + [1, 0]), Detection("D13", 0.8, SQUARE + [50, 0])]
    truth = [SQUARE, SQUARE + [0.5, 0], SQUARE + [200, 0]]
    assert match(truth, dets, 5.0) == [None, 0, None]


@pytest.mark.parametrize(("count", "seed"), [(0, TILE_EVAL_SEED_BASE), (1, 5)])
def test_eval_refuses_bad_counts_and_tuning_seeds(count: int, seed: int) -> None:
    with pytest.raises(EvalError):
        evaluate_tile_scenes(count, seed)


def test_report_has_the_card_figures_and_calibration() -> None:
    summary = score_tile_scenes(range(3, 4)).summary()
    assert summary["cards"] == len(render_tile_scene(3).tiles)
    assert {"card_accuracy", "false_cards", "per_class", "confusions", "layout_rate",
            "calibration"} <= set(summary)
    assert summary["calibration"]["count"] == summary["detections"]  # every detection scored
    assert summary["median_ms_per_frame"] > 0
    assert "ms per frame" in format_tile_report(summary)


@pytest.mark.parametrize("values", [[], [7], [3, 9], [1, 2, 2, 250], [0, 0, 5, 5, 5, 255]])
def test_median_of_histogram_is_the_median_of_the_values(values: list[int]) -> None:
    hist = np.bincount(np.array(values, int), minlength=256).astype(np.float32)
    assert _median_of_histogram(hist) == (float(np.median(values)) if values else 0.0)


@pytest.mark.parametrize("seed", [3, 1021])
def test_glare_flood_in_blocks_is_the_flood_over_the_whole_view(seed: int) -> None:
    """The blockwise gradient is a speed-up only: the same pixels come out as from the
    gradient over the whole top-down view."""
    image = render_tile_scene(seed).image
    geometry = TableGeometry.from_markers(image)
    top = cv2.warpPerspective(image, geometry.topdown_transform(3.0),
                              (round(geometry.mat.width * 3), round(geometry.mat.height * 3)))
    mask = card_mask(top)
    felt = cv2.bitwise_not(mask)
    hsv = cv2.cvtColor(top, cv2.COLOR_BGR2HSV)
    typical = float(np.median(hsv[..., 2][felt > 0]))
    violetish = cv2.inRange(hsv, (115, 40, int(typical)), (175, 255, 255))
    grad = colour_gradient(cv2.GaussianBlur(top, (0, 0), 1.0))
    candidate = (violetish & (grad < SMOOTH_MAX).astype(np.uint8) * 255) | felt
    _, labels = cv2.connectedComponents(candidate, connectivity=4)
    flooded = np.isin(labels, np.unique(labels[felt > 0]))
    assert np.array_equal(tile_region(top), np.where(flooded, 0, mask))


def test_detect_tiles_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cv2.imwrite(str(tmp_path / "a.png"), render_tile_scene(3).image)
    cv2.imwrite(str(tmp_path / "b.png"), np.full((200, 300, 3), 90, np.uint8))  # no mat
    (tmp_path / "c.png").write_bytes(b"not an image")
    assert main(["detect", str(tmp_path), "--tiles", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [Path(x["image"]).name for x in lines] == ["a.png", "b.png", "c.png"]
    a, b, c = lines
    assert (a["width"], a["height"]) == (1280, 720) and len(a["detections"]) >= 27
    codes = {d["code"] for d in a["detections"]}
    assert codes <= {f"D{i}{j}" for i in range(7) for j in range(i, 7)} | {"BACK"}
    first = a["detections"][0]
    assert len(first["box"]) == 4 and len(first["quad"]) == 4
    assert "markers" in b["error"] and "error" in c
    assert main(["detect", str(tmp_path / "c.png"), "--tiles"]) == 1
