"""Photos larger than the readers were made for, read reduced; labelled photos read at another
size (:mod:`vision.photo_size`, ``cardtable eval --resize``)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.index_spotter import DEFAULT_SPOTTER
from vision.photo_detect import DEFAULT_CLASSIFIER
from vision.photo_size import PHOTO_SIDE, parse_size, resized, working_copy

needs_models = pytest.mark.skipif(
    not (DEFAULT_SPOTTER.is_file() and DEFAULT_CLASSIFIER.is_file()),
    reason="no corner models in models/ (cardtable train --corners)")
CC_BY = Path(__file__).resolve().parents[2] / "shared/datasets/playing-cards-photos-cc-by"
PHONE_7H = (CC_BY / "images/phone_IMG"
            / "IMG_20220921_193936_jpg.rf.49d1324447d033e1aee7bfde7d4e4f43.jpg")


@pytest.mark.parametrize(("size", "copy", "factor"), [
    ((640, 640), (640, 640), 1.0),
    ((1280, 720), (1280, 720), 1.0),
    ((1281, 720), (640, 360), 0.5),
    ((2560, 1440), (1280, 720), 0.5),
    ((4032, 3024), (1008, 756), 0.25),
    ((3024, 4032), (756, 1008), 0.25),
    ((4032, 4032), (1008, 1008), 0.25),
    ((4000, 3000), (1000, 750), 0.25),
    ((20000, 16), (1250, 1), 1 / 16),
])
def test_working_copy_reduces_by_the_least_whole_factor(size: tuple[int, int],
                                                       copy: tuple[int, int],
                                                       factor: float) -> None:
    image = np.zeros((size[1], size[0], 3), np.uint8)
    image[::2] = 255  # one-pixel stripes: a reduced copy averages them to grey
    out, f = working_copy(image)
    assert (out.shape[1], out.shape[0]) == copy and f == pytest.approx(factor)
    assert max(out.shape[:2]) <= PHOTO_SIDE
    if f == 1.0:
        assert out is image  # no copy of a photo of the readers' size
    elif min(size) >= 2 * (1 / f):
        assert np.abs(out.astype(int) - 128).max() <= 1


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


@needs_models
@pytest.mark.parametrize("deck", ["uno", "any"])
def test_a_large_photo_reads_as_its_reduction_with_quads_in_its_own_pixels(deck: str) -> None:
    """`cardtable detect` of a phone-sized photo reads its reduced copy: the same card, its quad
    scaled back to the photo's pixels (pixel centres onto pixel centres)."""
    from vision.recognise import TableReader
    from vision.still_detect import still_detector
    from vision.synth.photos import single_card_photo

    photo, _ = single_card_photo("7R", np.random.default_rng([66, 1]))
    assert working_copy(photo)[1] == 1.0, "the rendered photo is of the readers' size"
    detect = still_detector(TableReader.load(), deck)
    large = resized(photo, (photo.shape[1] * 4, photo.shape[0] * 4))
    small, f = working_copy(large)
    assert f == 0.5  # 2560 px: halved
    (plain,), (read,), (reduced,) = detect(photo), detect(large), detect(small)
    assert read.code == reduced.code == plain.code == "7R"
    assert read.quad == pytest.approx((reduced.quad + 0.5) * 2 - 0.5, abs=1e-3)


@needs_models
@pytest.mark.skipif(not PHONE_7H.is_file(), reason="no ../shared/datasets beside the checkout")
@pytest.mark.parametrize("size", [(4032, 3024), (4032, 4032)])
def test_a_phone_photo_at_full_size_reads_as_at_the_sets_size(size: tuple[int, int]) -> None:
    """A CC BY phone photo of a seven of hearts, scaled to a phone's full size: read at that
    size, the card outlines' filters (tuned at 640 px) found a 7D at 0.84 at 4032 x 3024."""
    from vision.recognise import TableReader
    from vision.still_detect import still_detector

    photo = cv2.imread(str(PHONE_7H))
    detect = still_detector(TableReader.load(), "any")
    codes = {d.code for d in detect(resized(photo, size))}
    assert codes == {d.code for d in detect(photo)} == {"7H"}
