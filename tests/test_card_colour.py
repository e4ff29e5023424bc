"""The colour of an UNO card's field as a pixel statistic, under white and strongly tinted light."""

from __future__ import annotations

import numpy as np
import pytest

from vision.card_colour import (
    COLOURS,
    apply_gain,
    border_gain,
    code_colour,
    colour_weights,
    field_colour,
    oval_to_black,
)
from vision.synth.faces import canonical_face, current_wild_style, draw_uno_style, render_face
from vision.synth.photos import closeup_card_photo, tint_light, tinted_held_photo

LIGHTS = {
    "white": (1.0, 1.0, 1.0),
    "tungsten": (0.6, 0.85, 1.0),  # BGR: a warm bulb
    "cool": (1.0, 0.9, 0.7),
    "green tube": (0.8, 1.0, 0.75),
}


@pytest.mark.parametrize("light", sorted(LIGHTS))
@pytest.mark.parametrize(("code", "colour"), [
    ("7R", "R"), ("3Y", "Y"), ("SG", "G"), ("+2B", "B"), ("RR", "R"), ("W", "K"), ("+4", "K"),
])
def test_field_colour_of_canonical_cards(code: str, colour: str, light: str) -> None:
    face = apply_gain(canonical_face(code, (120, 180)), np.array(LIGHTS[light]))
    q = field_colour(face)
    assert q.sum() == pytest.approx(1.0)
    assert COLOURS[int(q.argmax())] == colour, np.round(q, 2)


def test_field_colour_of_drawn_printings_under_tinted_light() -> None:
    """Random printings (the renderer's spread of real colours) under random strong tints."""
    codes = ["5R", "5Y", "5G", "5B", "W"] * 8
    right = 0
    for i, code in enumerate(codes):
        rng = np.random.default_rng([31, i])
        face = render_face(code, rng, size=(120, 180), style=draw_uno_style(rng))
        right += COLOURS[int(field_colour(tint_light(face, rng, 0.4)).argmax())] == \
            code_colour(code)
    assert right >= len(codes) - 1


@pytest.mark.parametrize(("votes", "expected"), [
    # R, Y, G, B, K: a coloured card gives up nothing, nor does a finger's red or a shade beside it
    ((900, 0, 0, 0, 50), (900, 0, 0, 0, 50)),
    ((700, 0, 0, 200, 0), (700, 0, 0, 200, 0)),
    ((600, 0, 40, 200, 10), (600, 0, 40, 200, 10)),
    # a wild oval under a lifted black: what the four colours share is the oval's, black's
    ((200, 220, 180, 210, 0), (20, 40, 0, 30, 720)),
    ((300, 10, 5, 250, 100), (295, 5, 0, 245, 120)),
    ((0, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
])
def test_oval_to_black(votes: tuple[int, ...], expected: tuple[int, ...]) -> None:
    out = oval_to_black(np.array(votes, float))
    assert out.tolist() == pytest.approx(list(expected))
    assert out.sum() == pytest.approx(sum(votes))


def test_field_colour_of_current_wild_printings_under_a_veil() -> None:
    """Wild cards whose four-colour oval fills the field, the black lifted to near DARK: the
    oval's common share keeps them black; the coloured faces of the same printings keep
    their colour."""
    right = {"K": 0, "coloured": 0}
    for i in range(24):
        rng = np.random.default_rng([37, i])
        code = ("W", "+4", "5G", "RB")[i % 4]
        face = render_face(code, rng, size=(120, 180), style=current_wild_style(rng))
        veiled = (face.astype(np.float32) * 0.7 + 255 * 0.3).astype(np.uint8)
        truth = code_colour(code)
        right["K" if truth == "K" else "coloured"] += \
            COLOURS[int(field_colour(veiled).argmax())] == truth
    assert right == {"K": 12, "coloured": 12}


def test_border_gain_whitens_a_tinted_border() -> None:
    face = canonical_face("5G", (100, 150))
    tinted = apply_gain(face, np.array(LIGHTS["tungsten"]))
    border = apply_gain(tinted, border_gain(tinted))[2:5, 20:80].reshape(-1, 3).mean(0)
    assert np.ptp(border) < 12 and border.mean() > 215, border


@pytest.mark.parametrize(("code", "colour"), [
    ("7R", "R"), ("+2B", "B"), ("W", "K"), ("+4", "K"), ("QH", None), ("BACK", None),
    ("not a card", None),
])
def test_code_colour(code: str, colour: str | None) -> None:
    assert code_colour(code) == colour


def test_colour_weights_favour_the_field_colour_and_are_floored() -> None:
    w = colour_weights(canonical_face("7R", (100, 150)), ["7R", "7B", "W", "QH"])
    assert w[0] > 5 * w[1] and w[0] > 5 * w[2]
    assert min(w) >= 0.3 / len(COLOURS) - 1e-9  # the floor: no colour is ever ruled out
    assert w[3] == pytest.approx(np.mean(0.7 * field_colour(
        canonical_face("7R", (100, 150))) + 0.3 / 5))


@pytest.mark.parametrize("bad", [np.zeros((30, 20), np.uint8), "crop", np.zeros((30, 20, 4))])
def test_field_colour_refuses_what_is_no_bgr_crop(bad: object) -> None:
    with pytest.raises(ValueError, match="BGR card crop"):
        field_colour(bad)  # type: ignore[arg-type]


def test_tinted_and_closeup_renders_keep_their_scenes() -> None:
    img, quad = tinted_held_photo("7R", np.random.default_rng(4))
    assert img.shape == (480, 640, 3) and quad.shape == (4, 2)
    img, quad = closeup_card_photo("7R", np.random.default_rng(4))
    assert img.shape == (480, 640, 3)
    side = np.linalg.norm(quad - np.roll(quad, 1, 0), axis=1)
    assert side.max() >= 0.8 * 480  # the card fills most of the photo
