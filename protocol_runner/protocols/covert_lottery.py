"""Covert lottery (Shinoda et al.), original and modified (UNO paper Section 2.5; NOTES.md item 3).

m face-down cards c_i, each with a pair encoding x_i (valid or not) below it. The token starts as
``βα`` (t = 1); the i-th six-card AND takes X_i and t, leaves y_i = X_i ∧ t in pile i and makes
x̄_i ∧ t the next token, so y_i = 1 only for the first valid pile in the scrambled order. After a
second pile-scramble the y pairs are turned: at most one reads 1 (modified: none when no card is
valid), exactly one in the original, which runs m − 1 ANDs and sets y_m = t. m + 2 shuffles
(original m + 1); four helper cards (token and the AND's αβ).
"""

from __future__ import annotations

import numpy as np

from protocol_runner.machine import (
    EMPTY,
    T_ALPHA,
    T_BETA,
    Expect,
    IntArray,
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
from protocol_runner.protocols.six_card_and import six_card_and

STEPS = 7


def covert_lottery(slots: Slots, c: IntArray, x: IntArray, original: bool = False,
                   context: str = "") -> Protocol[IntArray]:
    """Lottery over the face-down cards at slots ``c`` (m,) with validity pairs at ``x`` (m, 2).

    Returns per run (R,) the slot of the selected card, or -1 when none is valid (modified).
    The c cards stay on the table; every helper card goes back to the pool.
    """
    m = len(c)
    name = "covert lottery (original)" if original else "modified covert lottery"
    piles = np.column_stack([c, x]).astype(np.int64)
    token = np.full(2, EMPTY, dtype=np.int64)

    def regions() -> tuple[Region, ...]:
        out = [Region("lottery piles", piles.T.copy())]
        if token[0] >= 0:
            out.append(Region("token", token[None, :].copy()))
        return tuple(out)

    def step(number: str, text: str, action: object, expect: Expect | None = None,
             detail: object = None) -> Step:
        return Step(name, number, STEPS, text, action, regions(), expect,  # type: ignore[arg-type]
                    context, detail)  # type: ignore[arg-type]

    yield step("1", f"Place each pair encoding x_i below card c_i: {m} piles of three cards.",
               Rearrange(piles.ravel(), piles.ravel()))
    yield step("2", f"Pile-scramble the {m} piles.", PileScramble(piles))
    token[:] = slots.new(2)
    yield step("3", "Place β α (t = 1), face down: the token.",
               Place(bit_tokens([1])[0], token.copy(), face_up=False))
    rounds = m - 1 if original else m
    for i in range(rounds):
        where = f"{name} step 4a, i = {i + 1} of {rounds}" + (f"; {context}" if context else "")
        xy, nxy = yield from six_card_and(slots, x[i], token.copy(), context=where)
        helpers = np.setdiff1d(np.concatenate([xy[0], nxy[0]]), token)
        positions = np.concatenate([x[i], token, helpers])
        source = np.concatenate([xy, nxy, np.broadcast_to(x[i], xy.shape)], axis=1)
        middle = xy[:, 0] == helpers[0]

        def detail(r: int, i: int = i, middle: IntArray = middle) -> str:
            where = "middle" if middle[r] else "right"
            return (f"Put the {where} pair (y_{i + 1} = X_{i + 1} ∧ t) into pile {i + 1}; the "
                    "other pair is the new token.")

        yield step("4b", f"Put the pair encoding y_{i + 1} = X_{i + 1} ∧ t into pile {i + 1}; "
                   "the other pair (x̄ ∧ t) is the new token.",
                   Rearrange(positions, source), detail=detail)
    if original:
        yield step("4", f"Set y_{m} = t: put the pair of pile {m} back into the pool.",
                   Take(x[m - 1], to="pool"))
        yield step("4", f"Put the token into pile {m}.",
                   Rearrange(np.concatenate([x[m - 1], token]), np.concatenate([token, x[m - 1]])))
    else:
        yield step("5", "Put the last token back into the pool, face down and unseen.",
                   Take(token.copy(), to="pool"))
    token[:] = EMPTY
    yield step("6", f"Pile-scramble the {m} piles.", PileScramble(piles))
    ones = (1, 1) if original else (0, 1)
    expect = Expect(
        f"{m} pairs αβ/βα, {'exactly' if original else 'at most'} one βα",
        faces=frozenset({T_ALPHA, T_BETA}),
        words=frozenset({(T_ALPHA, T_BETA), (T_BETA, T_ALPHA)}),
        word_counts=(((T_BETA, T_ALPHA), *ones),))
    reveal = yield step("7", "Turn over every pair below the cards: the card above the pair "
                        "βα (= 1) is selected" + ("." if original else "; none: no card is valid."),
                        Turn(x.ravel(), up=True), expect)
    assert reveal is not None
    bits = read_bits(reveal.tokens.reshape(-1, m, 2))
    selected = np.where(bits.max(axis=1) == 1, c[np.argmax(bits, axis=1)], -1)
    yield step("7", "Put the turned pairs back into the pool.", Take(x.ravel(), to="pool"))
    return selected
