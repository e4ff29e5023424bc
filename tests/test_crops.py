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
