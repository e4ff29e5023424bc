"""Training crops: a share of UNO faces keeps the plain style; the rest draws wide printings."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth.crops import PLAIN_SHARE, training_crop


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


@pytest.mark.parametrize(("code", "curls"), [("RB", True), ("RY", True), ("7Y", False),
                                             ("+2R", False), ("W", False), ("5H", False)])
def test_only_wide_reverse_crops_curl(code: str, curls: bool) -> None:
    # the second opinion's crops (curl) differ from the first's only where a wide printing
    # draws the curled reverse symbol; plain crops and every other code are the same pictures
    changed = 0
    for seed in range(12):
        a = training_crop(code, np.random.default_rng(seed), 48)
        b = training_crop(code, np.random.default_rng(seed), 48, curl=True)
        changed += not np.array_equal(a, b)
        plain = training_crop(code, np.random.default_rng(seed), 48, wide=False, curl=True)
        assert np.array_equal(plain, training_crop(code, np.random.default_rng(seed), 48,
                                                   wide=False))
    assert (changed > 0) is curls
