"""Training crops: a share of UNO faces keeps the plain style; the rest draws wide printings."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth.crops import PLAIN_SHARE, cut_view, training_crop
from vision.synth.faces import OTHER_TYPEFACES


@pytest.mark.parametrize("seed", range(12))
def test_drawn_style_is_plain_or_wide_by_the_first_draw(seed: int) -> None:
    crop = training_crop("6G", np.random.default_rng(seed), 48)
    plain = np.random.default_rng(seed).random() < PLAIN_SHARE
    forced = training_crop("6G", np.random.default_rng(seed), 48, wide=not plain)
    other = training_crop("6G", np.random.default_rng(seed), 48, wide=plain)
    assert crop.shape == (48, 48, 3) and crop.dtype == np.uint8
    assert np.array_equal(crop, forced)
    assert not np.array_equal(crop, other)


@pytest.mark.parametrize("size", [64, 96])
def test_crop_has_the_input_size(size: int) -> None:
    crop = training_crop("+4", np.random.default_rng(3), size)
    assert crop.shape == (size, size, 3)


@pytest.mark.parametrize(("code", "changes"), [("RB", True), ("RY", True), ("1G", True),
                                               ("7Y", True), ("+2R", True), ("W", True),
                                               ("5H", False), ("QS", False)])
def test_recent_crops_differ_only_in_wide_uno_printings(code: str, changes: bool) -> None:
    # the later trainings' crops (recent) differ from the first's only where a wide UNO
    # printing is drawn; plain crops and standard faces are the same pictures
    changed = 0
    for seed in range(12):
        a = training_crop(code, np.random.default_rng(seed), 48)
        b = training_crop(code, np.random.default_rng(seed), 48, recent=True)
        changed += not np.array_equal(a, b)
        plain = training_crop(code, np.random.default_rng(seed), 48, wide=False, recent=True)
        assert np.array_equal(plain, training_crop(code, np.random.default_rng(seed), 48,
                                                   wide=False))
    assert (changed > 0) is changes


@pytest.mark.parametrize(("code", "changes"), [("6Y", True), ("1B", True), ("RB", True),
                                               ("5H", False), ("QS", False)])
def test_other_typefaces_change_only_wide_uno_printings(code: str, changes: bool) -> None:
    # a later training with renders of its own (typefaces) draws one more number for every wide
    # UNO printing, so those crops are other draws; plain crops and standard faces stay
    changed = 0
    for seed in range(12):
        a = training_crop(code, np.random.default_rng(seed), 48, recent=True)
        b = training_crop(code, np.random.default_rng(seed), 48, recent=True,
                          typefaces=OTHER_TYPEFACES)
        changed += not np.array_equal(a, b)
        plain = [training_crop(code, np.random.default_rng(seed), 48, wide=False, recent=True,
                               typefaces=t) for t in ((), OTHER_TYPEFACES)]
        assert np.array_equal(*plain)
    assert (changed > 0) is changes


CARD = np.float32([[10, 20], [110, 20], [110, 175], [10, 175]])  # 100 x 155, clockwise


@pytest.mark.parametrize("seed", range(16))
def test_a_cut_view_is_a_part_of_the_card_taller_than_wide(seed: int) -> None:
    part = cut_view(CARD, np.random.default_rng(seed))
    # inside the card but for its cut edges' slant (4% of the card)
    assert part.shape == (4, 2)
    assert (part[:, 0] >= 10 - 4.01).all() and (part[:, 0] <= 110 + 4.01).all()
    assert (part[:, 1] >= 20 - 6.21).all() and (part[:, 1] <= 175 + 6.21).all()
    width = (np.linalg.norm(part[1] - part[0]) + np.linalg.norm(part[2] - part[3])) / 2
    height = (np.linalg.norm(part[3] - part[0]) + np.linalg.norm(part[2] - part[1])) / 2
    assert height >= 0.9 * width
    assert cv2.contourArea(part) <= 0.95 * cv2.contourArea(CARD)  # something is cut away


@pytest.mark.parametrize(("code", "size"), [("7B", 96), ("RY", 96), ("+2G", 64), ("5H", 96)])
def test_cuts_at_any_side_change_only_some_close_ups(code: str, size: int) -> None:
    # any_cut redraws half the close-ups (a fifth of crops): most crops stay the same pictures
    same = sum(np.array_equal(training_crop(code, np.random.default_rng([seed, 7]), size,
                                            recent=True),
                              training_crop(code, np.random.default_rng([seed, 7]), size,
                                            recent=True, any_cut=True))
               for seed in range(40))
    assert 24 <= same < 40
