"""The card selection protocol (UNO paper Section 4), v2 (12 steps) and v1 (15 steps), and its
uses: a virtual player's turn, draw-then-play (Section 3.2) and, generically, any game whose
players must pick a random valid card (Sevens, Hearts, Dominoes: Section 5).

Every card not in the discard pile is laid out face down in one row, by owner group (the virtual
player P1 first, the other players, the unplayed deck last); θ_i marks group i's cards. After a
pile-scramble of the columns the first row is turned (it shows the public multiset of remaining
cards), each column gets βα (= 1, valid) or αβ below it (NOTES.md item 1: Step 6 wins over the
proof's typo), the columns are scrambled again and the θ row is turned (it shows only how many
cards each group holds). The θ1 columns go to the modified covert lottery.

Modelling choices (documented, both public): Step 10 sorts the columns by their face-up θ (θ1
first) before taking the θ1 columns out, so that every later position is public (the rest of the
matrix then lies in group order, which is what Step 12 needs; v1's Step 15 sorts the same way).
Draw-then-play (NOTES.md item 5) gives the drawn card its own group, first, so only it can be
chosen. The discard pile may be one more group (NOTES.md item 4), hiding the remaining cards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from protocol_runner.cards import UNO_COLOURS, Card, uno_playable
from protocol_runner.machine import (
    VOCAB,
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
    Vocabulary,
    bit_tokens,
    t_theta,
)
from protocol_runner.protocols.covert_lottery import covert_lottery

Variant = Literal["v1", "v2"]
TOTAL_STEPS = {"v1": 15, "v2": 12}


class SelectionError(ValueError):
    """Public inputs that cannot describe a card selection (sizes vs. the remaining cards…)."""


@dataclass(frozen=True)
class Group:
    """Owner group i (θ_i): its cards come from area ``name`` and go back to ``home``."""

    name: str
    size: int
    home: str = ""

    @property
    def returns_to(self) -> str:
        return self.home or self.name


def card_selection(groups: Sequence[Group], remaining: Counter[Card],
                   valid: Callable[[Card], bool], variant: Variant = "v2",
                   vocab: Vocabulary = VOCAB, name: str = "card selection",
                   selected_to: str = "selected", original: bool = False) -> Protocol[None]:
    """Select a uniformly random valid card of group 1 (θ1), or none.

    ``original``: use the original covert lottery, which always selects a card (Hearts, UNO
    paper Section 5.2): a random valid one, or any one if none is valid.

    ``remaining``: the public multiset of all cards in the groups (Step 5 shows exactly these).
    The selected card goes to area ``selected_to`` face down; every other card goes back to its
    group's home; helper cards to ``"pool"``. The protocol never learns which card it was.
    """
    sizes = [g.size for g in groups]
    k, k1 = sum(sizes), sizes[0] if sizes else 0
    if variant not in TOTAL_STEPS:
        raise SelectionError(f"unknown variant {variant!r}: use v1 or v2")
    if not groups or k1 < 1 or min(sizes) < 0:
        raise SelectionError("the selecting group (θ1) must hold at least one card")
    if sum(remaining.values()) != k:
        raise SelectionError(f"the groups hold {k} cards but {sum(remaining.values())} remain")
    total = TOTAL_STEPS[variant]
    slots = Slots()
    row1 = slots.new(k)
    row2 = np.full(k, -1, dtype=np.int64)
    row3 = np.full((k, 2), -1, dtype=np.int64)

    def matrix(n: int = k, start: int = 0) -> Region:
        grid = np.full((3, n), -1, dtype=np.int64)
        grid[0], grid[1] = row1[start:start + n], row2[start:start + n]
        return Region("matrix", np.concatenate([grid, row3[start:start + n].T], axis=0))

    def step(number: str, text: str, action: object, expect: Expect | None = None,
             detail: Callable[[int], str] | None = None, region: Region | None = None) -> Step:
        return Step(name, number, total, text, action,  # type: ignore[arg-type]
                    (region or matrix(),), expect, "", detail)

    starts = np.cumsum([0, *sizes])
    for i, g in enumerate(groups):
        yield step("1", f"Lay the {g.size} cards of {g.name} face down in the row "
                   f"(columns {starts[i] + 1}–{starts[i + 1]}).",
                   Lay(g.name, row1[starts[i]:starts[i + 1]]))
    row2[:] = slots.new(k)
    thetas = np.repeat([t_theta(i + 1) for i in range(len(groups))], sizes).astype(np.int16)
    yield step("2", "Place θ_i face up below each card of group i: "
               + ", ".join(f"θ{i + 1} below {g.name}" for i, g in enumerate(groups)) + ".",
               Place(thetas, row2.copy(), face_up=True))
    yield step("3", "Turn over all face-up cards.", Turn(row2.copy(), up=False))
    yield step("4", f"Pile-scramble the matrix, each of the {k} columns a pile.",
               PileScramble(np.column_stack([row1, row2])))
    tokens = vocab.tokens(sorted(remaining.elements()))
    faces, counts = np.unique(tokens, return_counts=True)
    reveal = yield step("5", "Turn over all cards in the first row.", Turn(row1.copy(), up=True),
                        Expect("the remaining cards, in some order",
                               faces=frozenset(int(f) for f in faces),
                               multiset=dict(zip(faces.tolist(), counts.tolist(),
                                                 strict=True))))
    assert reveal is not None
    lut = vocab.table(lambda item: isinstance(item, Card) and valid(item))
    ok = lut[reveal.tokens]  # (R, k)
    row3[:] = slots.new(2 * k).reshape(k, 2)

    def place_detail(r: int) -> str:
        cols = [str(j + 1) for j in np.flatnonzero(ok[r])]
        if not cols:
            return "No card in the first row is valid: place α β below every column."
        return f"Place β α below column{'s' if len(cols) > 1 else ''} {', '.join(cols)} " \
               "(valid cards) and α β below the others."

    yield step("6", "For each column, place β α below it if the card in the first row is valid, "
               "otherwise α β.", Place(bit_tokens(ok).reshape(-1, 2 * k), row3.ravel(),
                                       face_up=True), detail=place_detail)
    yield step("7", "Turn over all face-up cards.",
               Turn(np.concatenate([row1, row3.ravel()]), up=False))
    columns = np.column_stack([row1, row2, row3])  # (k, 4)
    yield step("8", f"Pile-scramble the matrix, each of the {k} columns a pile.",
               PileScramble(columns))
    want = {t_theta(i + 1): n for i, n in enumerate(sizes) if n}
    reveal = yield step("9", "Turn over all cards in the second row.", Turn(row2.copy(), up=True),
                        Expect("θ_i as often as group i has cards",
                               faces=frozenset(want), multiset=want))
    assert reveal is not None
    order = np.argsort(reveal.tokens, axis=1, kind="stable")  # θ tokens ascend with i
    source = columns[order].reshape(order.shape[0], -1)

    def sort_detail(r: int) -> str:
        cols = ", ".join(str(j + 1) for j in order[r, :k1])
        return (f"Take the columns with θ1 ({cols}) out of the matrix for the lottery; push the "
                "others together, ordered by θ (θ2 first).")

    yield step("10", "Take the θ1 columns out of the matrix for the lottery; order the rest by θ.",
               Rearrange(columns.ravel(), source), detail=sort_detail)
    yield step("10", "Put the θ1 cards back into the pool.", Take(row2[:k1].copy(), to="pool"),
               region=matrix(k1))
    selected_slot = yield from covert_lottery(slots, row1[:k1].copy(), row3[:k1].copy(),
                                              original=original, context=f"{name} step 10")
    yield step("11", "The selected card leaves face down (to be played).",
               Take(selected_slot[:, None], to=selected_to), region=matrix(k1))
    others = np.where(row1[None, :k1] == selected_slot[:, None], -1, row1[None, :k1])
    yield step("11", f"Put the unselected cards back into {groups[0].returns_to}.",
               Take(others, to=groups[0].returns_to), region=matrix(k1))
    rest = slice(k1, k)
    if variant == "v2":
        yield from _return_groups(step, groups, starts, row1, row2)
        yield step("12", "Put the θ and α/β cards of the matrix back into the pool.",
                   Take(np.concatenate([row2[rest], row3[rest].ravel()]), to="pool"),
                   region=matrix(k - k1, k1))
        return
    yield step("12", "Remove the third row (back into the pool).",
               Take(row3[rest].ravel(), to="pool"), region=matrix(k - k1, k1))
    row3[rest] = -1
    yield step("12", "Turn over all face-up cards.", Turn(row2[rest].copy(), up=False),
               region=matrix(k - k1, k1))
    rest_columns = np.column_stack([row1[rest], row2[rest]])
    yield step("13", f"Pile-scramble the matrix, each of the {k - k1} columns a pile.",
               PileScramble(rest_columns), region=matrix(k - k1, k1))
    want = {t_theta(i + 1): n for i, n in enumerate(sizes) if n and i}
    reveal = yield step("14", "Turn over all cards in the second row.",
                        Turn(row2[rest].copy(), up=True),
                        Expect("θ_i (i ≥ 2) as often as group i has cards",
                               faces=frozenset(want), multiset=want), region=matrix(k - k1, k1))
    assert reveal is not None
    order = np.argsort(reveal.tokens, axis=1, kind="stable")
    yield step("15", "Sort all columns by the cards in the second row.",
               Rearrange(rest_columns.ravel(), rest_columns[order].reshape(order.shape[0], -1)),
               region=matrix(k - k1, k1))
    yield from _return_groups(step, groups, starts, row1, row2, number="15")
    yield step("15", "Put the θ cards back into the pool.", Take(row2[rest].copy(), to="pool"),
               region=matrix(k - k1, k1))


def _return_groups(step: Callable[..., Step], groups: Sequence[Group], starts: IntArray,
                   row1: IntArray, row2: IntArray, number: str = "12") -> Protocol[None]:
    for i, g in enumerate(groups[1:], start=1):
        if g.size:
            yield step(number, f"Put each card above a θ{i + 1} back into {g.returns_to}.",
                       Take(row1[starts[i]:starts[i + 1]].copy(), to=g.returns_to))


def uno_groups(others: Sequence[int], deck: int, drawn: bool = False, hand: int = 0,
               discard: int = 0) -> list[Group]:
    """Owner groups of a UNO turn: P1 (or P1's drawn card, then the rest of P1's hand), the
    other players P2…, the unplayed deck, optionally the discard pile (NOTES.md item 4)."""
    groups = [Group("drawn", 1, home="P1"), Group("P1", hand)] if drawn else [Group("P1", hand)]
    groups += [Group(f"P{i + 2}", n) for i, n in enumerate(others)]
    groups.append(Group("deck", deck))
    if discard:
        groups.append(Group("discard", discard))
    return groups


def uno_card_selection(groups: Sequence[Group], remaining: Counter[Card], top: Card,
                       colour: str | None = None, variant: Variant = "v2") -> Protocol[None]:
    """A virtual player's UNO turn (or draw-then-play, with :func:`uno_groups` ``drawn=True``):
    valid = playable on ``top`` (with ``colour`` in force after a black card)."""
    if top.is_black and colour not in UNO_COLOURS:
        raise SelectionError(f"{top} is on top: give the colour its player chose (R, Y, G or B)")
    if not top.is_black and colour not in (None, top.colour):
        raise SelectionError(f"{top} is a colour card: colour {colour} cannot be in force")
    drawn = groups[0].name == "drawn"
    name = f"UNO {'draw-then-play' if drawn else 'card selection'} {variant}"
    return card_selection(groups, remaining, lambda card: uno_playable(card, top, colour),
                          variant, name=name)
