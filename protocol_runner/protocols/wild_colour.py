"""Choosing a wild's colour (UNO paper Section 3.2; NOTES.md item 6): shuffle four cards of
different colours face down and take one; its colour is the colour in force."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from protocol_runner.cards import UNO_COLOURS, Card, parse_cards
from protocol_runner.machine import (
    VOCAB,
    Expect,
    PileScramble,
    Place,
    Protocol,
    Region,
    Slots,
    Step,
    Take,
    TokenArray,
    Turn,
)

NAME = "wild colour choice"
DEFAULT_COLOUR_CARDS = ("0R", "0Y", "0G", "0B")


def wild_colour(cards: Sequence[Card] | None = None) -> Protocol[TokenArray]:
    """Returns per run (R,) the token of the card taken (its colour is chosen)."""
    faces = list(cards) if cards is not None else parse_cards(DEFAULT_COLOUR_CARDS)
    if sorted(c.colour or "" for c in faces) != sorted(UNO_COLOURS):
        raise ValueError("the colour choice needs four cards, one of each colour R, Y, G, B")
    pos = Slots().new(4)
    region = (Region("colour cards", pos[None, :]),)
    tokens = VOCAB.tokens(faces)
    yield Step(NAME, "1", 3, "Place " + " ".join(map(str, faces)) + " face up, then turn them "
               "over.", Place(tokens, pos, face_up=True), region)
    yield Step(NAME, "1", 3, "Turn the four cards face down.", Turn(pos, up=False), region)
    yield Step(NAME, "2", 3, "Pile-scramble the four cards.", PileScramble(pos[:, None]), region)
    reveal = yield Step(NAME, "3", 3, "Turn over the first card: its colour is chosen.",
                        Turn(pos[:1], up=True), region,
                        Expect("one of the four colour cards", faces=frozenset(map(int, tokens))))
    assert reveal is not None
    yield Step(NAME, "3", 3, "Put the four cards back into the pool.", Take(pos, to="pool"),
               region)
    return np.asarray(reveal.tokens[:, 0])
