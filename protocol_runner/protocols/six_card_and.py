"""Six-card AND (Mizuki–Sone; UNO paper Section 2.4 with the lost figures from NOTES.md item 2).

Positions 1–6 hold ``x x | α β | y y``. Step 2 moves card 2 behind card 4 (order 1,3,4,2,5,6:
piles ``[x₁ α β | x₂ y₁ y₂]``); step 3 swaps the two piles unseen with probability 1/2; step 4
moves card 4 back to place 2 (order 1,4,2,3,5,6); step 5 turns cards 1–2. Without a swap the line
reads ``x, 0, y``, with one ``x̄, y, 0``: so ``αβ`` shown means middle = x∧y, right = x̄∧y, and
``βα`` the other way round. The turned pair goes back to the pool of helper cards.
"""

from __future__ import annotations

import numpy as np

from protocol_runner.machine import (
    T_ALPHA,
    T_BETA,
    Expect,
    IntArray,
    Lay,
    PileScramble,
    Place,
    Protocol,
    Rearrange,
    Region,
    Slots,
    Step,
    Take,
    Turn,
    bit_tokens,
    read_bits,
)

NAME = "six-card AND"
STEPS = 5
ZERO_OR_ONE = Expect("αβ or βα", faces=frozenset({T_ALPHA, T_BETA}),
                     words=frozenset({(T_ALPHA, T_BETA), (T_BETA, T_ALPHA)}))


def six_card_and(slots: Slots, x: IntArray, y: IntArray,
                 context: str = "") -> Protocol[tuple[IntArray, IntArray]]:
    """AND of the face-down pairs at slots ``x`` and ``y`` (each (2,), public).

    Returns ``(xy, nxy)``: per run (R, 2) the slots of the pairs encoding x∧y and x̄∧y.
    """
    ab = slots.new(2)
    line = np.array([x[0], x[1], ab[0], ab[1], y[0], y[1]], dtype=np.int64)
    regions = (Region("AND line", line[None, :]),)

    def step(number: str, text: str, action: object, expect: Expect | None = None) -> Step:
        return Step(NAME, number, STEPS, text, action, regions, expect, context)  # type: ignore[arg-type]

    yield step("1", "Place α β (= 0), face down, between the pairs encoding x and y: "
               "x x | α β | y y.", Place(bit_tokens([0])[0], ab, face_up=False))
    yield step("2", "Rearrange: move card 2 behind card 4, giving the order 1 3 4 2 5 6 "
               "(two piles of three: x₁ α β | x₂ y₁ y₂).",
               Rearrange(line, line[[0, 2, 3, 1, 4, 5]]))
    yield step("3", "Pile-scramble the two piles of three cards (swap them or not, unseen).",
               PileScramble(line.reshape(2, 3)))
    yield step("4", "Rearrange: move card 4 back to place 2, giving the order 1 4 2 3 5 6.",
               Rearrange(line, line[[0, 3, 1, 2, 4, 5]]))
    reveal = yield step("5", "Turn over the two leftmost cards: αβ → the middle pair is x∧y, "
                        "the right pair x̄∧y; βα → the other way round.",
                        Turn(line[:2], up=True), ZERO_OR_ONE)
    assert reveal is not None
    swapped = (read_bits(reveal.tokens) == 1)[:, None]
    middle, right = line[2:4][None, :], line[4:6][None, :]
    xy = np.where(swapped, right, middle)
    nxy = np.where(swapped, middle, right)
    yield step("5", "Put the two turned cards back into the pool of helper cards.",
               Take(line[:2], to="pool"))
    return xy, nxy


def and_protocol() -> Protocol[tuple[IntArray, IntArray]]:
    """The AND on its own: the pairs encoding x and y come face down from areas ``x`` and
    ``y`` (their owners commit them); returns the slots of x∧y and x̄∧y per run."""
    slots = Slots()
    x, y = slots.new(2), slots.new(2)
    yield Step(NAME, "1", STEPS, "Lay the pair encoding x face down (positions 1–2).",
               Lay("x", x), (Region("AND line", x[None, :]),))
    yield Step(NAME, "1", STEPS, "Lay the pair encoding y face down (positions 5–6).",
               Lay("y", y), (Region("AND line", np.concatenate([x, y])[None, :]),))
    return (yield from six_card_and(slots, x, y))
