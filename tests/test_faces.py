"""The face renderer draws every card code, varied by rng, fixed for the canonical look."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth.faces import (
    ALL_FACE_CODES,
    CLASSIC_UNO,
    FaceError,
    _s_arrows,
    _uno_symbol_layer,
    canonical_face,
    card_mask,
    draw_uno_style,
    render_face,
)


def test_every_code_renders_portrait_bgr() -> None:
    rng = np.random.default_rng(3)
    for code in ALL_FACE_CODES:
        img = render_face(code, rng, size=(60, 90))
        assert img.shape == (90, 60, 3) and img.dtype == np.uint8, code
        assert img.std() > 10, f"{code} rendered blank"


def test_codes_cover_both_decks_and_back() -> None:
    assert len(ALL_FACE_CODES) == 54 + 53 + 1
    assert {"7R", "+2B", "W", "+4", "AS", "10H", "JK", "BACK"} <= set(ALL_FACE_CODES)


def test_same_seed_same_face_other_seed_other_style() -> None:
    a = render_face("7R", np.random.default_rng(0))
    b = render_face("7R", np.random.default_rng(0))
    c = render_face("7R", np.random.default_rng(1))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    ("code", "channel"),  # BGR: the coloured field dominates its channel
    [("5R", 2), ("5G", 1), ("5B", 0)],
)
def test_uno_field_colour(code: str, channel: int) -> None:
    img = canonical_face(code, (120, 180)).astype(int)
    corner = img[30:40, 12:20].reshape(-1, 3).mean(0)  # coloured field next to the index
    assert corner.argmax() == channel, (code, corner)


def test_distinct_codes_look_distinct() -> None:
    faces = [canonical_face(c, (60, 90)).astype(int) for c in ("6R", "9R", "SR", "RR", "+2R")]
    for i in range(len(faces)):
        for j in range(i + 1, len(faces)):
            assert np.abs(faces[i] - faces[j]).mean() > 2


def test_card_mask_rounds_corners() -> None:
    m = card_mask((100, 150))
    assert m[0, 0] == 0 and m[75, 50] == 255


@pytest.mark.parametrize("code", ["XX", "11R", "", "D34", "1S"])
def test_unknown_codes_are_refused(code: str) -> None:
    with pytest.raises(FaceError, match="no face"):
        render_face(code, np.random.default_rng(0))


def test_tiny_size_refused() -> None:
    with pytest.raises(FaceError, match="too small"):
        render_face("7R", np.random.default_rng(0), size=(4, 4))


def test_printings_include_upright_round_and_tilted_ovals() -> None:
    styles = [draw_uno_style(np.random.default_rng(i)) for i in range(200)]
    upright = [s for s in styles if abs(s.ellipse_angle) <= 6 and s.ellipse_axes[0] >= 0.4]
    tilted = [s for s in styles if s.ellipse_angle >= 25]
    assert len(upright) >= 40 and len(tilted) >= 60


@pytest.mark.parametrize("symbol", ["+2", "R"])
def test_symbols_run_up_right_to_down_left(symbol: str) -> None:
    # +2: one small card up and right, the other down and left; reverse: one arrow up-right,
    # one down-left, as on printed decks
    layer = _uno_symbol_layer(symbol, "R", CLASSIC_UNO, (200, 30, 30), False, None)
    a = layer[..., 3].astype(float)
    h, w = a.shape
    tr, bl = a[: h // 2, w // 2:].sum(), a[h // 2:, : w // 2].sum()
    tl, br = a[: h // 2, : w // 2].sum(), a[h // 2:, w // 2:].sum()
    assert min(tr, bl) > max(tl, br), (tr, bl, tl, br)


@pytest.mark.parametrize("seed", range(4))
def test_reverse_arrows_are_point_symmetric(seed: int) -> None:
    ink = _s_arrows((255, 255, 255), 200, np.random.default_rng(seed))[..., 3] > 127
    turned = np.rot90(ink, 2)
    assert (ink & turned).sum() / (ink | turned).sum() > 0.95
