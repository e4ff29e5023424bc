"""Labelled photos read at another size (:mod:`vision.photo_size`, ``cardtable eval --resize``)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.index_spotter import DEFAULT_SPOTTER
from vision.photo_detect import DEFAULT_CLASSIFIER
from vision.photo_size import parse_size, resized

needs_models = pytest.mark.skipif(
    not (DEFAULT_SPOTTER.is_file() and DEFAULT_CLASSIFIER.is_file()),
    reason="no corner models in models/ (cardtable train --corners)")


@pytest.mark.parametrize(("text", "size"), [("4032x3024", (4032, 3024)), ("640X480", (640, 480)),
                                            ("16x20000", (16, 20000))])
def test_a_size_is_w_by_h(text: str, size: tuple[int, int]) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("text", "message"), [("big", "no size"), ("4032", "no size"),
                                               ("4032x3024x3", "no size"), ("ax3", "no size"),
                                               ("8x8", "16 to 20000"), ("0x100", "16 to 20000")])
def test_a_bad_size_says_how_to_give_one(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_size(text)


@pytest.mark.parametrize(("size", "grows"), [((1280, 960), True), ((320, 240), False)])
def test_resized_grows_smoothly_and_shrinks_by_area(size: tuple[int, int], grows: bool) -> None:
    image = np.zeros((480, 640, 3), np.uint8)
    image[:, ::2] = 255  # one-pixel stripes: area averaging makes them grey, not stripes
    out = resized(image, size)
    assert out.shape == (size[1], size[0], 3)
    if not grows:
        assert np.abs(out.astype(int) - 128).max() <= 1


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "scenes", "--resize", "1280x960"], "rendered at their own"),
    (["eval", "tiles", "--resize", "1280x960"], "rendered at their own"),
])
def test_eval_resizes_labelled_photos_only(argv: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from protocol_runner.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


@needs_models
def test_eval_reads_photos_at_another_size(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`cardtable eval LABELS.csv --resize WxH` reads each photo at that size, as `detect`
    reads a phone's photo; the report says the size."""
    import json

    from protocol_runner.cli import main
    from vision.synth.photos import single_card_photo

    rows = ["image,code"]
    for i, code in enumerate(["7R", "SY"]):
        photo, _ = single_card_photo(code, np.random.default_rng([65, i]))
        cv2.imwrite(str(tmp_path / f"{i}.png"), photo)
        rows.append(f"{i}.png,{code}")
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    argv = ["eval", str(tmp_path / "labels.csv"), "--deck", "uno", "--json"]
    assert main([*argv, "--resize", "4032x3024"]) == 0
    large = json.loads(capsys.readouterr().out)
    assert large["kind"].endswith("at 4032x3024") and large["images"] == 2
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert large["cards_right"] == plain["cards_right"] == 2
