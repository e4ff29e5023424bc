"""Rendered corner-index crops of standard cards (training data of the corner reader)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.photo_detect import CORNER_SIZE, NONE
from vision.synth.index_crops import (
    CODES,
    FACE,
    IndexCropError,
    _scan,
    card_face,
    jitter_box,
    render_crops,
    scene_crops,
)


def test_there_is_a_face_for_each_of_the_52_cards() -> None:
    assert len(CODES) == len(set(CODES)) == 52


@pytest.mark.parametrize("code", CODES)
def test_the_index_of_every_scan_is_found_in_its_corner(code: str) -> None:
    """The measured index box of each MIT scan: in the top-left corner, about as big as a
    printed index (a box around a pip or a whole corner would teach the wrong crop)."""
    face, (x0, y0, x1, y1) = _scan(code)
    w, h = FACE
    assert face.shape == (h, w, 3)
    assert 0 < x0 < x1 <= 0.2 * w and 0 < y0 < y1 <= 0.34 * h
    assert 0.05 * w <= x1 - x0 and 0.12 * h <= y1 - y0 <= 0.3 * h


@pytest.mark.parametrize(("code", "seed"), [("AS", 0), ("10H", 1), ("QD", 2), ("7C", 3),
                                            ("KS", 4), ("2D", 5)])
def test_card_faces_have_their_index_at_top_left(code: str, seed: int) -> None:
    face, (x0, y0, x1, y1) = card_face(code, np.random.default_rng(seed))
    w, h = FACE
    assert face.shape == (h, w, 3) and face.dtype == np.uint8
    assert 0 <= x0 < x1 <= 0.3 * w and 0 <= y0 < y1 <= 0.4 * h
    inside = face[int(y0):int(y1) + 1, int(x0):int(x1) + 1].astype(float)
    assert inside.std() > 20  # print on paper, not a blank patch


@pytest.mark.parametrize("code", ["JK", "BACK", "1S", "AX", "", "as"])
def test_codes_without_a_rendered_index_are_refused(code: str) -> None:
    with pytest.raises(IndexCropError, match="52 standard faces"):
        card_face(code, np.random.default_rng(0))


@pytest.mark.parametrize("seed", range(6))
def test_a_scene_gives_crops_of_its_code_or_none(seed: int) -> None:
    got = list(scene_crops("9D", np.random.default_rng(seed)))
    assert got, "every scene shows at least one index"
    for label, crop in got:
        assert label in ("9D", NONE)
        assert crop.shape == (CORNER_SIZE, CORNER_SIZE, 3) and crop.dtype == np.uint8


def test_rendered_crops_are_reproducible_and_cover_the_deck() -> None:
    crops, codes = render_crops(300, seed=3)
    again, codes_again = render_crops(300, seed=3)
    assert len(crops) >= 300 and codes == codes_again
    assert all(np.array_equal(a, b) for a, b in zip(crops, again, strict=True))
    assert set(codes) - {NONE} == set(CODES)
    assert 0.05 < codes.count(NONE) / len(codes) < 0.5


@pytest.mark.parametrize("box", [(10.0, 20.0, 40.0, 70.0), (0.0, 0.0, 5.0, 5.0)])
def test_jittered_boxes_stay_on_their_index(box: tuple[float, float, float, float]) -> None:
    rng = np.random.default_rng(0)
    x0, y0, x1, y1 = box
    for _ in range(50):
        a, b, c, d = jitter_box(box, rng)
        assert a < c and b < d
        assert a <= (x0 + x1) / 2 <= c and b <= (y0 + y1) / 2 <= d
