"""The face renderer draws every card code, varied by rng, fixed for the canonical look."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision.synth.faces import (
    ALL_FACE_CODES,
    BAR_GAP_MAX,
    CLASSIC_UNO,
    FONT_FILES,
    FONTS,
    LATER_TYPEFACES,
    OTHER_TYPEFACES,
    FaceError,
    _curled_arrows,
    _footless,
    _reverse_layer,
    _s_arrows,
    _text_layer,
    _uno_symbol_layer,
    canonical_face,
    card_mask,
    draw_uno_style,
    render_face,
    render_uno,
    widen_uno_style,
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


@pytest.mark.parametrize(("seed", "curled"), [  # the first draw picks the drawing: < 0.5 curls
    (2, True), (3, True), (8, True), (11, True), (0, False), (6, False)])
def test_wide_reverse_symbols_run_up_right_to_down_left(seed: int, curled: bool) -> None:
    assert (np.random.default_rng(seed).random() < 0.5) is curled
    a = _reverse_layer((200, 30, 30), 200, np.random.default_rng(seed), curled=True)[..., 3]
    a = a.astype(float)
    tr, bl = a[:100, 100:].sum(), a[100:, :100].sum()
    tl, br = a[:100, :100].sum(), a[100:, 100:].sum()
    assert min(tr, bl) > max(tl, br), (tr, bl, tl, br)


@pytest.mark.parametrize("seed", [0, 6, 7, 9])  # first draws >= 0.5: the curl is never drawn
def test_the_curl_leaves_the_other_reverse_drawings_as_they_were(seed: int) -> None:
    plain = _reverse_layer((200, 30, 30), 200, np.random.default_rng(seed))
    wide = _reverse_layer((200, 30, 30), 200, np.random.default_rng(seed), curled=True)
    assert np.array_equal(plain, wide)


@pytest.mark.parametrize(("code", "changes"), [("RB", True), ("RY", True), ("7B", False),
                                               ("+2G", False), ("W", False), ("BACK", False)])
def test_only_wide_reverse_faces_curl(code: str, changes: bool) -> None:
    # with generator 2 the reverse faces draw the curl; other codes never look at the flag
    base = draw_uno_style(np.random.default_rng(1))
    straight = widen_uno_style(base, np.random.default_rng(1))
    style = replace(straight, curled_reverse=True)
    assert not base.curled_reverse and not straight.curled_reverse
    a = render_uno(code, style, (60, 90), np.random.default_rng(2))
    b = render_uno(code, straight, (60, 90), np.random.default_rng(2))
    assert (not np.array_equal(a, b)) is changes


@pytest.mark.parametrize("draw", [_s_arrows, _curled_arrows])
@pytest.mark.parametrize("seed", range(4))
def test_reverse_arrows_are_point_symmetric(draw, seed: int) -> None:  # type: ignore[no-untyped-def]
    ink = draw((255, 255, 255), 200, np.random.default_rng(seed))[..., 3] > 127
    turned = np.rot90(ink, 2)
    assert (ink & turned).sum() / (ink | turned).sum() > 0.95


def test_plain_renders_ignore_the_wide_print_details() -> None:
    # scenes and tuning photos draw no print details: the same seed gives the same picture
    a = render_face("9G", np.random.default_rng(5), size=(60, 90))
    rng = np.random.default_rng(5)
    assert np.array_equal(a, render_uno("9G", draw_uno_style(rng), (60, 90), rng))
    wide = render_face("9G", np.random.default_rng(5), size=(60, 90), wide=True)
    assert not np.array_equal(a, wide)


def test_wide_printings_vary_weight_bar_and_small_cards() -> None:
    styles = [widen_uno_style(CLASSIC_UNO, np.random.default_rng(i)) for i in range(200)]
    assert sum(s.weight == 0 for s in styles) >= 30
    assert sum(s.weight > 0.05 for s in styles) >= 30
    assert {s.cards_edge for s in styles} == {"dark", "white", "shadow"}
    assert {s.cards_layout for s in styles} == {0, 1, 2}
    gaps = [s.underline[1] for s in styles if s.underline is not None]
    assert len(gaps) == len(styles) and all(0.03 <= g <= BAR_GAP_MAX for g in gaps)
    assert max(gaps) > 0.25  # as far under the numeral as the plain style's bar


def _ink(layer: np.ndarray) -> np.ndarray:
    return layer[..., 3] > 127


def _row_runs(ink: np.ndarray) -> list[int]:
    """Heights of the bands of inked rows, top to bottom."""
    filled = np.r_[False, ink.any(axis=1), False].astype(int)
    edges = np.nonzero(np.diff(filled))[0]
    return [int(b - a) for a, b in zip(edges[::2], edges[1::2], strict=True)]


@pytest.mark.parametrize("gap", [0.03, 0.2, BAR_GAP_MAX])
def test_bar_tells_six_from_nine_turned(gap: float) -> None:
    # a 9 turned half a turn is nearly a 6 but for the bar: under the 6, over the turned 9
    style = replace(CLASSIC_UNO, underline=(0.08, gap, 0.8))
    six = _ink(_uno_symbol_layer("6", "G", style, (40, 160, 70), False, None))
    nine = np.rot90(_ink(_uno_symbol_layer("9", "G", style, (40, 160, 70), False, None)), 2)
    runs6, runs9 = _row_runs(six), _row_runs(nine)
    assert len(runs6) == 2 and runs6[1] < runs6[0] / 4, runs6
    assert len(runs9) == 2 and runs9[0] < runs9[1] / 4, runs9


def test_heavier_numerals_have_more_ink() -> None:
    light = _ink(_uno_symbol_layer("3", "R", CLASSIC_UNO, (225, 35, 35), False, None)).sum()
    heavy_style = replace(CLASSIC_UNO, weight=0.06)
    heavy = _ink(_uno_symbol_layer("3", "R", heavy_style, (225, 35, 35), False, None)).sum()
    assert heavy > 1.3 * light


@pytest.mark.parametrize("edge", ["dark", "white", "shadow"])
@pytest.mark.parametrize("layout", [0, 1, 2])
def test_plus_four_shows_four_colours_in_every_layout(edge: str, layout: int) -> None:
    style = replace(CLASSIC_UNO, cards_edge=edge, cards_layout=layout, cards_tilt=-20.0)
    layer = _uno_symbol_layer("+4", None, style, style.paper, False, None)
    rgb = layer[..., :3][_ink(layer)].astype(int)
    for c in "RGBY":
        near = np.abs(rgb - np.array(style.field[c])).sum(axis=1) < 30
        assert near.sum() > 500, (c, edge, layout)


@pytest.mark.parametrize("seed", range(40))
def test_recent_printings_curl_and_may_cut_the_foot_of_the_one(seed: int) -> None:
    # recent: the curl always, a footless 1 in about half the printings, nothing else changed
    base = draw_uno_style(np.random.default_rng(seed))
    straight = widen_uno_style(base, np.random.default_rng(seed))
    recent = widen_uno_style(base, np.random.default_rng(seed), recent=True)
    assert recent.curled_reverse and not straight.footless_one
    assert replace(recent, curled_reverse=False, footless_one=False) == straight
    rng = np.random.default_rng(seed)
    widen_uno_style(base, rng)  # the draws of the straight style come first
    assert recent.footless_one is (rng.random() < 0.5)


TYPEFACE_SETS = (OTHER_TYPEFACES, OTHER_TYPEFACES + LATER_TYPEFACES)


@pytest.mark.parametrize("typefaces", TYPEFACE_SETS)
@pytest.mark.parametrize("seed", range(40))
def test_other_typefaces_take_half_the_printings_drawn_after_the_recent_details(
        seed: int, typefaces: tuple[str, ...]) -> None:
    base = draw_uno_style(np.random.default_rng(seed))
    recent = widen_uno_style(base, np.random.default_rng(seed), recent=True)
    other = widen_uno_style(base, np.random.default_rng(seed), recent=True, typefaces=typefaces)
    rng = np.random.default_rng(seed)
    widen_uno_style(base, rng, recent=True)  # the recent style's draws come first
    if rng.random() < 0.5:
        assert other.font == FONTS.index(typefaces[int(rng.integers(len(typefaces)))])
        assert other.weight == 0.0
        assert replace(other, font=recent.font, weight=recent.weight) == recent
    else:
        assert other == recent


@pytest.mark.parametrize("typefaces", TYPEFACE_SETS)
def test_other_typefaces_are_a_share_of_printings_and_each_is_drawn(
        typefaces: tuple[str, ...]) -> None:
    base = draw_uno_style(np.random.default_rng(0))
    fonts = [widen_uno_style(base, np.random.default_rng(i), recent=True,
                             typefaces=typefaces).font for i in range(300)]
    other = [FONTS[f] for f in fonts if FONTS[f] in typefaces]
    assert 0.4 < len(other) / len(fonts) < 0.6
    assert set(other) == set(typefaces)


@pytest.mark.parametrize("name", OTHER_TYPEFACES + LATER_TYPEFACES)
def test_each_other_typeface_is_shipped_and_draws_every_symbol_it_prints(name: str) -> None:
    index = FONTS.index(name)
    for text in (*"0123456789", "+2", "+4", "W", "UNO"):
        layer = _text_layer(text, index, (30, 30, 200))
        assert (layer[..., 3] > 127).sum() > 200, (name, text)


def _foot_ratio(layer: np.ndarray) -> float:
    """How much wider a glyph's lowest rows are than its stem half-way up."""
    ink = layer[..., 3] > 127
    rows = np.flatnonzero(ink.any(axis=1))
    width = ink.sum(axis=1)
    return float(width[rows[-1] - len(rows) // 30]) / float(width[(rows[0] + rows[-1]) // 2])


@pytest.mark.parametrize("font", range(len(FONT_FILES)))
def test_the_footless_one_keeps_the_stem_and_flag_and_loses_the_foot(font: int) -> None:
    one = _text_layer("1", font, (200, 30, 30))
    cut = _footless(one)
    assert _foot_ratio(one) > 1.5 and _foot_ratio(cut) == pytest.approx(1.0, abs=0.15)
    ink, kept = one[..., 3] > 127, cut[..., 3] > 127
    assert kept.shape[0] == ink.shape[0] and kept.any(axis=1).sum() == ink.any(axis=1).sum()
    # the flag (the top rows, wider than the stem) is kept whole
    top = np.flatnonzero(ink.any(axis=1))[len(np.flatnonzero(ink.any(axis=1))) // 10]
    assert kept[top].sum() == ink[top].sum()
    # cut to the ink with the glyph's margin on both sides
    cols = np.flatnonzero(kept.any(axis=0))
    assert cols[0] == np.flatnonzero(ink.any(axis=0))[0] and kept.shape[1] - 1 - cols[-1] == cols[0]


@pytest.mark.parametrize(("code", "changes"), [("1B", True), ("1Y", True), ("7B", False),
                                               ("RG", False), ("BACK", False)])
def test_only_the_one_loses_its_foot(code: str, changes: bool) -> None:
    straight = widen_uno_style(draw_uno_style(np.random.default_rng(4)), np.random.default_rng(4))
    a = render_uno(code, replace(straight, footless_one=True), (60, 90), np.random.default_rng(2))
    b = render_uno(code, straight, (60, 90), np.random.default_rng(2))
    assert (not np.array_equal(a, b)) is changes


def test_a_blank_layer_has_no_foot_to_cut() -> None:
    blank = np.zeros((40, 30, 4), np.uint8)
    assert np.array_equal(_footless(blank), blank)


@pytest.mark.parametrize(("code", "changes"), [("RB", True), ("RG", True), ("SB", False),
                                               ("2G", False), ("W", False), ("BACK", False)])
def test_only_the_reverse_index_grows(code: str, changes: bool) -> None:
    a = render_uno(code, replace(CLASSIC_UNO, reverse_index=1.4), (240, 360),
                   np.random.default_rng(2))
    b = render_uno(code, CLASSIC_UNO, (240, 360), np.random.default_rng(2))
    assert (not np.array_equal(a, b)) is changes
    if changes:  # inside the top-left border, the white index symbol covers about 1.4² as much
        def ink(img: np.ndarray) -> int:
            return int((img[18:72, 18:66].min(axis=2) > 200).sum())
        assert ink(a) > 1.6 * ink(b)


def _index_rows(img: np.ndarray) -> tuple[int, int]:
    """First and last row of white ink inside the top-left border of a 240 × 360 classic face."""
    rows = np.flatnonzero((img[18:90, 18:66].min(axis=2) > 200).any(axis=1))
    return int(rows[0]) + 18, int(rows[-1]) + 18


@pytest.mark.parametrize(("code", "bar", "changes"), [
    ("6G", "tall", True), ("9B", "tall", True), ("6Y", "bare", True), ("9R", "bare", True),
    ("6G", "short", False), ("8R", "tall", False), ("0Y", "bare", False), ("+2B", "tall", False),
    ("W", "bare", False), ("BACK", "tall", False),
])
def test_only_the_six_and_nine_index_changes(code: str, bar: str, changes: bool) -> None:
    a = render_uno(code, replace(CLASSIC_UNO, index_bar=bar), (240, 360),
                   np.random.default_rng(2))
    b = render_uno(code, CLASSIC_UNO, (240, 360), np.random.default_rng(2))
    assert (not np.array_equal(a, b)) is changes


@pytest.mark.parametrize(("bar", "ends_below_an_eight"), [("tall", True), ("bare", False)])
def test_a_tall_or_bare_six_is_a_numeral_high(bar: str, ends_below_an_eight: bool) -> None:
    """"tall" and "bare" draw the numeral as high as an 8's index; "tall" hangs the bar below
    it, "bare" draws none."""
    eight = _index_rows(render_uno("8G", CLASSIC_UNO, (240, 360)))
    six = _index_rows(render_uno("6G", replace(CLASSIC_UNO, index_bar=bar), (240, 360)))
    assert abs(six[0] - eight[0]) <= 1
    assert (six[1] > eight[1] + 5) is ends_below_an_eight
    assert ends_below_an_eight or abs(six[1] - eight[1]) <= 1


def test_an_unknown_index_bar_is_refused() -> None:
    with pytest.raises(FaceError, match="index_bar 'tal'"):
        render_uno("6G", replace(CLASSIC_UNO, index_bar="tal"), (60, 90))


@pytest.mark.parametrize(("code", "changes"), [
    ("W", True), ("+4", True), ("7R", False), ("SB", False), ("+2G", False), ("BACK", False),
])
def test_only_the_wild_cards_change_in_current_printings(code: str, changes: bool) -> None:
    style = draw_uno_style(np.random.default_rng(3))
    drawn = render_uno(code, style, (120, 180), np.random.default_rng(5))
    current = render_uno(code, replace(style, current_wild=True), (120, 180),
                         np.random.default_rng(5))
    assert bool(np.any(drawn != current)) == changes


@pytest.mark.parametrize("seed", range(6))
def test_a_current_wild_card_is_mostly_its_four_colour_oval(seed: int) -> None:
    """The card's own oval in four colours covers most of the field, each colour a good part
    of it; the drawn look's small oval covers under a third."""
    shares = {}
    for current in (False, True):
        rng = np.random.default_rng([41, seed])
        style = replace(draw_uno_style(rng), current_wild=current)
        face = render_uno("W", style, (120, 180), rng)
        hsv = cv2.cvtColor(face[18:-18, 12:-12], cv2.COLOR_BGR2HSV).reshape(-1, 3)
        hue = hsv[hsv[:, 1] > 100, 0].astype(int)
        bins = [((hue < 10) | (hue >= 165)), (hue >= 17) & (hue < 33), (hue >= 33) & (hue < 90),
                (hue >= 92) & (hue < 132)]
        shares[current] = [float(b.sum()) / len(hsv) for b in bins]
    assert sum(shares[False]) < 0.33 < 0.5 < sum(shares[True]), shares
    assert min(shares[True]) > 0.05, shares[True]
