"""Training crops: a share of UNO faces keeps the plain style; the rest draws wide printings."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth.crops import PLAIN_SHARE, training_crop
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
