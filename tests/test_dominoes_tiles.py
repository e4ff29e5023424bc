"""The domino tile renderer draws what the code says, in every style, and refuses bad codes."""

import numpy as np
import pytest

from vision.synth.tiles import (
    TILE_CODES,
    TileError,
    canonical_tile,
    count_pips,
    render_tile,
    tile_mask,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_tile_shows_its_pips(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for code in TILE_CODES:
        image = render_tile(code, rng)
        assert image.shape == (240, 120, 3) and image.dtype == np.uint8
        assert tuple(sorted(count_pips(image))) == (int(code[1]), int(code[2])), code


def test_canonical_is_fixed_and_back_has_no_pips() -> None:
    assert np.array_equal(canonical_tile("D25"), canonical_tile("D25"))
    assert count_pips(canonical_tile("D25")) == (2, 5)
    assert count_pips(canonical_tile("BACK")) == (0, 0)
    assert tile_mask((60, 120)).shape == (120, 60)


@pytest.mark.parametrize(("code", "size"), [("D65", (120, 240)), ("7R", (120, 240)),
                                            ("D7", (120, 240)), ("D56", (8, 8))])
def test_bad_codes_and_sizes(code: str, size: tuple[int, int]) -> None:
    with pytest.raises(TileError):
        render_tile(code, np.random.default_rng(0), size)
