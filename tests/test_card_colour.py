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
)
from vision.synth.faces import canonical_face, draw_uno_style, render_face
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
