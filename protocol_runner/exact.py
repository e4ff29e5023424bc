"""Proofs by machine: exact enumeration of every shuffle outcome, with the SAME protocol
generators the simulator and the runner use.

:class:`ExactTable` is a :class:`~protocol_runner.machine.Table` whose rows are not random runs
but weighted branches: a pile-scramble of P piles replaces each row by its P! outcomes, a random
bisection cut by its 2 outcomes, each keeping the parent's weight (all outcomes are equally
likely; the common denominator is the product of the outcome counts, the same for every row since
the step sequence is public). After each shuffle, rows with the same table state, areas and
transcript are merged and their weights added, which keeps small instances small. Weights are
integers and probabilities :class:`fractions.Fraction`: nothing is sampled.

This works because protocols keep per-run data only until the next shuffle (see
:mod:`protocol_runner.machine`): the machine may split and merge rows there.

The checks: (a) correctness for every input and every branch; (b) uniformity: each valid card is
selected with probability exactly 1/#valid; (c) security: the distribution of transcripts
(everything turned face up) is identical for all inputs with the same public information.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from protocol_runner.cards import Card, parse_card, parse_cards, uno_playable
from protocol_runner.machine import (
    EMPTY,
    VOCAB,
    BisectionCut,
    BoolArray,
    IntArray,
    PileScramble,
    Protocol,
    Table,
    TokenArray,
    bit_tokens,
    drive,
    read_bits,
    transcript_strings,
)
from protocol_runner.protocols.card_selection import Variant, uno_card_selection, uno_groups
from protocol_runner.protocols.six_card_and import and_protocol


class ExactTable(Table):
    """All branches of a protocol run at once, with integer weights (see module doc)."""

    def __init__(self, areas: dict[str, TokenArray] | None = None) -> None:
        super().__init__(1, areas, rng=None, count_helpers=False)
        self.weights: IntArray = np.ones(1, dtype=np.int64)
        self.denominator = 1

    def _expand(self, outcomes: int) -> IntArray:
        """Repeat every row ``outcomes`` times; return the parent index of each new row."""
        parent = np.repeat(np.arange(self.runs), outcomes)
        self.cards, self.up = self.cards[parent], self.up[parent]
        self.areas = {k: v[parent] for k, v in self.areas.items()}
        self.transcript = [t[parent] for t in self.transcript]
        self.weights = self.weights[parent]
        self.runs = len(parent)
        self.denominator *= outcomes
        return parent

    def _canonical(self, groups: IntArray) -> None:
        """Put the groups (R, P, s) of every row in a fixed order by content, then merge rows.

        Exact, and the big saving: a shuffle's outcome distribution does not depend on the order
        its piles had, so rows that differ only in that order are merged before expanding.
        """
        contents = self.cards[np.arange(self.runs)[:, None, None], groups].astype(np.int64) + 1
        if contents.shape[2] > 6:  # a pile's tokens (< 1024) must fit one 64-bit sort key
            return
        key = np.zeros(contents.shape[:2], dtype=np.int64)
        for j in range(contents.shape[2]):
            key = key * 1024 + contents[:, :, j]
        self._permute_groups(groups, np.argsort(key, axis=1, kind="stable"))
        self._merge()

    def _scramble(self, a: PileScramble) -> None:
        self._check_slots(np.asarray(a.piles), "PileScramble")
        self._canonical(self._per_run(a.piles, "PileScramble.piles", 2))
        piles = self._per_run(a.piles, "PileScramble.piles", 2)
        self.costs.pile_scramble += 1
        n = piles.shape[1]
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
        parent = self._expand(len(perms))
        piles = (np.broadcast_to(a.piles, (self.runs, *np.shape(a.piles)))
                 if np.ndim(a.piles) == 2 else piles[parent])
        self._permute_groups(piles, np.tile(perms, (len(parent) // len(perms), 1)))
        self._merge()

    def _cut(self, a: BisectionCut) -> None:
        halves = self._per_run(a.halves, "BisectionCut.halves", 3)
        self._check_slots(halves, "BisectionCut")
        c = halves.shape[1]
        self.costs.random_bisection_cut += c
        swaps = np.array(list(itertools.product([False, True], repeat=c)), dtype=bool)
        parent = self._expand(len(swaps))
        self._swap_halves(halves[parent], np.tile(swaps, (len(parent) // len(swaps), 1)))
        self._merge()

    def _merge(self) -> None:
        """Add up the weights of identical rows (state, areas, transcript). An area is a hand
        or a pile of helper cards: a set, so its order is dropped first (sorted)."""
        self.areas = {k: np.sort(v, axis=1) for k, v in self.areas.items()}
        parts = [self.cards, self.up.astype(np.int16), *self.areas.values(), *self.transcript]
        first, inverse = _group_rows(np.concatenate(parts, axis=1, dtype=np.int16))
        weights = np.zeros(len(first), dtype=np.int64)
        np.add.at(weights, inverse, self.weights)
        self.cards, self.up = self.cards[first], self.up[first]
        self.areas = {k: v[first] for k, v in self.areas.items()}
        self.transcript = [t[first] for t in self.transcript]
        self.weights = weights
        self.runs = len(first)
        g = math.gcd(self.denominator, *map(int, weights))
        if g > 1:
            self.weights //= g
            self.denominator //= g


def _group_rows(key: npt.NDArray[np.int16]) -> tuple[IntArray, IntArray]:
    """Identical rows of ``key``: (index of each group's first row, group of each row).

    Rows are packed into as few 64-bit words as their varying columns need, then sorted: far
    faster than ``np.unique(axis=0)`` on the hundreds of thousands of rows a shuffle makes.
    """
    cols = key[:, (key != key[0]).any(axis=0)]
    if cols.shape[1] == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(len(key), dtype=np.int64)
    lo = cols.min(axis=0).astype(np.int64)
    bits = [max(1, int(span).bit_length()) for span in cols.max(axis=0) - lo]
    words: list[npt.NDArray[np.uint64]] = []
    acc, used = np.zeros(len(key), dtype=np.uint64), 0
    for j, b in enumerate(bits):
        if used + b > 64:
            words.append(acc)
            acc, used = np.zeros(len(key), dtype=np.uint64), 0
        acc = (acc << np.uint64(b)) | (cols[:, j].astype(np.int64) - lo[j]).astype(np.uint64)
        used += b
    words.append(acc)
    order = np.lexsort(words[::-1])
    packed = np.stack([w[order] for w in words], axis=1)
    new = np.ones(len(key), dtype=bool)
    new[1:] = (packed[1:] != packed[:-1]).any(axis=1)
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


@dataclass
class Branches:
    """The outcome of an exact run: every branch with its probability."""

    table: ExactTable
    result: Any

    def distribution(self, keys: Sequence[Any]) -> dict[Any, Fraction]:
        """Probability of each key (one key per branch)."""
        total: dict[Any, int] = {}
        for key, w in zip(keys, self.table.weights.tolist(), strict=True):
            total[key] = total.get(key, 0) + w
        return {k: Fraction(w, self.table.denominator) for k, w in total.items()}

    def transcripts(self) -> dict[str, Fraction]:
        """Probability of each transcript (see :func:`transcript_strings`)."""
        t = self.table
        if not t.transcript:
            return {"": Fraction(1)}
        first, inverse = _group_rows(np.concatenate(t.transcript, axis=1))
        weights = np.zeros(len(first), dtype=np.int64)
        np.add.at(weights, inverse, t.weights)
        keys = transcript_strings([c[first] for c in t.transcript], VOCAB.codes())
        return {k: Fraction(int(w), t.denominator) for k, w in zip(keys, weights, strict=True)}


def enumerate_branches(protocol: Protocol[Any], areas: dict[str, TokenArray]) -> Branches:
    table = ExactTable(areas)
    result = drive(protocol, table)
    if result is None:  # nothing per run to keep aligned: merge the final states too
        table._merge()
    assert sum(Fraction(int(w), table.denominator) for w in table.weights) == 1
    return Branches(table, result)


# ----------------------------------------------------------------------------------- reports

@dataclass
class Proof:
    """What one exact check established, for printing and for the tests."""

    name: str
    inputs: int = 0
    correct: bool = True
    uniform: bool = True
    secure: bool = True
    branches: int = 0
    details: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.correct and self.uniform and self.secure

    def line(self) -> str:
        marks = " ".join(f"{k} {'yes' if v else 'NO'}" for k, v in
                         (("correct", self.correct), ("uniform", self.uniform),
                          ("secure", self.secure)))
        return f"{self.name}: {self.inputs} inputs, {self.branches} branches; {marks}"


def _same_distributions(dists: Sequence[dict[Any, Fraction]]) -> bool:
    return all(d == dists[0] for d in dists[1:])


def prove_and() -> Proof:
    """Six-card AND for all four inputs: outputs x∧y and x̄∧y in every branch; the turned pair
    reads αβ or βα with probability 1/2 each, whatever the input."""
    proof = Proof("six-card AND")
    dists = []
    for x, y in itertools.product((0, 1), repeat=2):
        b = enumerate_branches(and_protocol(), {"x": bit_tokens([x])[0],
                                                "y": bit_tokens([y])[0]})
        xy, nxy = b.result
        rows = np.arange(b.table.runs)[:, None]
        proof.correct &= bool((read_bits(b.table.cards[rows, xy]) == (x & y)).all())
        proof.correct &= bool((read_bits(b.table.cards[rows, nxy]) == ((1 - x) & y)).all())
        dists.append(b.transcripts())
        proof.inputs += 1
        proof.branches += b.table.runs
    proof.secure = _same_distributions(dists)
    proof.uniform = set(dists[0].values()) == {Fraction(1, 2)}
    proof.details.append(f"transcripts: {_show(dists[0])}")
    return proof


def lottery_branches(valid: Sequence[int], original: bool) -> Branches:
    from protocol_runner.simulate import lottery_protocol

    m = len(valid)
    return enumerate_branches(lottery_protocol(m, original),
                              {"cards": VOCAB.tokens(VOCAB.faces[:m]),
                               "bits": bit_tokens(valid).ravel()})


def prove_lottery(m: int, original: bool = False) -> Proof:
    """Every validity vector of length m: the selected card is valid, each valid card with
    probability 1/#valid (original: each card 1/m when none is valid), none only when none is
    valid; transcripts identical across all vectors with a valid card (and, for the original,
    across all vectors)."""
    name = f"covert lottery ({'original' if original else 'modified'}), m = {m}"
    proof = Proof(name)
    dists: dict[bool, list[dict[str, Fraction]]] = {True: [], False: []}
    cards = VOCAB.tokens(VOCAB.faces[:m])
    for valid in itertools.product((0, 1), repeat=m):
        b = lottery_branches(valid, original)
        sel = b.result
        rows = np.arange(b.table.runs)
        picked = np.where(sel >= 0, b.table.cards[rows, np.maximum(sel, 0)], EMPTY)
        index = {int(t): i for i, t in enumerate(cards)}
        outcome = b.distribution([index.get(int(t), None) for t in picked])
        n_valid = sum(valid)
        if n_valid:
            want = {i: Fraction(1, n_valid) for i in range(m) if valid[i]}
        else:
            want = {i: Fraction(1, m) for i in range(m)} if original else {None: Fraction(1)}
        proof.uniform &= outcome == want
        proof.correct &= set(outcome) == set(want)
        dists[bool(n_valid) or original].append(b.transcripts())
        proof.inputs += 1
        proof.branches += b.table.runs
    proof.secure = all(_same_distributions(d) for d in dists.values() if d)
    return proof


def uno_branches(top: Card, hand: Sequence[Card], others: Sequence[Sequence[Card]],
                 deck: Sequence[Card], variant: Variant = "v2",
                 colour: str | None = None) -> Branches:
    groups = uno_groups([len(o) for o in others], len(deck), hand=len(hand))
    areas = {"P1": VOCAB.tokens(hand), "deck": VOCAB.tokens(deck)}
    areas |= {f"P{i + 2}": VOCAB.tokens(o) for i, o in enumerate(others)}
    everything = Counter(hand) + Counter(deck)
    for o in others:
        everything += Counter(o)
    return enumerate_branches(uno_card_selection(groups, everything, top, colour, variant),
                              areas)


def _assignments(cards: Sequence[Card], sizes: Sequence[int]) -> Iterator[list[list[Card]]]:
    """Every distinct way to deal ``cards`` into groups of ``sizes`` (as multisets)."""
    seen: set[tuple[tuple[Card, ...], ...]] = set()
    for perm in itertools.permutations(cards):
        groups, start = [], 0
        for n in sizes:
            groups.append(tuple(sorted(perm[start:start + n])))
            start += n
        key = tuple(groups)
        if key not in seen:
            seen.add(key)
            yield [list(g) for g in groups]


def prove_card_selection(top: str, cards: str, sizes: Sequence[int],
                         variant: Variant = "v2") -> Proof:
    """Every deal of ``cards`` (k ≤ 6) into P1, the other players and the deck (``sizes``):
    (a) every card is back with its owner or is P1's selected valid card; (b) each valid card of
    P1 (counting copies) is selected with probability exactly (copies)/#valid; (c) the transcript
    distribution is the same for every deal with the same public information: the cards, the
    sizes and whether P1 plays at all (which the game makes public)."""
    top_card = parse_card(top)
    all_cards = parse_cards(cards)
    if sum(sizes) != len(all_cards):
        raise ValueError("the sizes must add up to the number of cards")
    proof = Proof(f"UNO card selection {variant}, top {top_card}, k = {len(all_cards)}, "
                  f"sizes {'/'.join(map(str, sizes))}")
    # whether P1 holds a valid card becomes public (P1 plays or draws): compare within each
    by_public: dict[bool, list[dict[str, Fraction]]] = {True: [], False: []}
    for deal in _assignments(all_cards, sizes):
        hand, others, deck = deal[0], deal[1:-1], deal[-1]
        b = uno_branches(top_card, hand, others, deck, variant)
        selected = b.table.area("selected")[:, 0]
        proof.correct &= bool(_returned(b, hand, others, deck).all())
        outcome = b.distribution([None if t < 0 else VOCAB.item(int(t)) for t in selected])
        valid = [c for c in hand if uno_playable(c, top_card)]
        want: dict[Any, Fraction] = (
            {c: Fraction(n, len(valid)) for c, n in Counter(valid).items()} if valid
            else {None: Fraction(1)})
        proof.uniform &= outcome == want
        by_public[bool(valid)].append(b.transcripts())
        proof.inputs += 1
        proof.branches += b.table.runs
    proof.secure = all(_same_distributions(d) for d in by_public.values())
    proof.details += [f"{'some' if v else 'no'} valid card in P1's hand: {len(d)} deals, "
                      f"{len(d[0])} distinct transcripts" for v, d in by_public.items() if d]
    return proof


def _returned(b: Branches, hand: Sequence[Card], others: Sequence[Sequence[Card]],
              deck: Sequence[Card]) -> BoolArray:
    def same(now: TokenArray, want: Sequence[Card]) -> BoolArray:
        got = np.sort(now, axis=1)
        cut = got.shape[1] - len(want)
        return ((got[:, cut:] == np.sort(VOCAB.tokens(want))).all(axis=1)
                & (got[:, :cut] == EMPTY).all(axis=1))

    t = b.table
    ok = same(np.concatenate([t.area("P1"), t.area("selected")], axis=1), hand)
    ok &= same(t.area("deck"), deck)
    for i, o in enumerate(others):
        ok &= same(t.area(f"P{i + 2}"), o)
    return ok


def _show(dist: dict[str, Fraction]) -> str:
    return ", ".join(f"{k or '∅'}: {v}" for k, v in sorted(dist.items()))


DEFAULT_CASES: tuple[Callable[[], Proof], ...] = (
    prove_and,
    *(lambda m=m, o=o: prove_lottery(m, o) for m in range(1, 6) for o in (False, True)),
)
