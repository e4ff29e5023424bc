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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from protocol_runner.cards import Card, parse_card, parse_cards, uno_playable
from protocol_runner.helpers import HelperDeck
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
)
from protocol_runner.protocols.card_selection import Variant, uno_card_selection, uno_groups
from protocol_runner.protocols.six_card_and import and_protocol

Chunks = tuple[tuple[int, ...], ...]
Entry = tuple[int, Chunks, Fraction]


class Histories:
    """Interned distributions over transcript prefixes, shared by the inputs being compared.

    Node 0 is the empty prefix. Any other node is a mixture: entries (parent node, reveals made
    since the parent, probability), sorted, so that one distribution built the same way gets
    the same id. Equal ids mean equal distributions (the converse is checked by expanding).
    """

    def __init__(self) -> None:
        self.nodes: list[tuple[Entry, ...]] = [()]
        self._ids: dict[tuple[Entry, ...], int] = {(): 0}
        self._expanded: dict[tuple[int, int], dict[str, Fraction]] = {}

    def intern(self, entries: dict[tuple[int, Chunks], Fraction]) -> int:
        key = tuple(sorted((h, c, p) for (h, c), p in entries.items()))
        if key not in self._ids:
            self._ids[key] = len(self.nodes)
            self.nodes.append(key)
        return self._ids[key]

    def expand(self, node: int, codes: np.ndarray) -> dict[str, Fraction]:
        """The distribution a node stands for, as transcript strings (see
        :func:`protocol_runner.machine.transcript_strings`)."""
        memo = (node, id(codes))
        if memo in self._expanded:
            return self._expanded[memo]
        if node == 0:
            return {"": Fraction(1)}
        out: dict[str, Fraction] = {}
        for parent, chunks, p in self.nodes[node]:
            tail = "/".join(",".join(str(codes[t]) if t >= 0 else "?" for t in c)
                            for c in chunks)
            for head, q in self.expand(parent, codes).items():
                key = f"{head}/{tail}" if head and tail else head or tail
                out[key] = out.get(key, Fraction(0)) + p * q
        self._expanded[memo] = out
        return out


class ExactTable(Table):
    """All branches of a protocol run at once, with integer weights (see module doc).

    Before each shuffle, rows in the same (canonical) table state are merged even when their
    transcripts differ: what happens next depends on the state alone (protocols keep no per-run
    data across a shuffle), so their transcript prefixes become one :class:`Histories` node.
    """

    def __init__(self, areas: dict[str, TokenArray] | None = None,
                 histories: Histories | None = None, compress: bool = True) -> None:
        super().__init__(1, areas, rng=None, count_helpers=False)
        self.compress = compress  # False: keep every transcript apart (slow; a cross-check)
        self.weights: IntArray = np.ones(1, dtype=np.int64)
        self.denominator = 1
        self.histories = histories or Histories()
        self.history: IntArray = np.zeros(1, dtype=np.int64)

    def _take_rows(self, rows: IntArray) -> None:
        self.cards, self.up = self.cards[rows], self.up[rows]
        self.areas = {k: v[rows] for k, v in self.areas.items()}
        self.transcript = [t[rows] for t in self.transcript]
        self.history = self.history[rows]
        self.runs = len(rows)

    def _expand(self, outcomes: int) -> IntArray:
        """Repeat every row ``outcomes`` times; return the parent index of each new row."""
        parent = np.repeat(np.arange(self.runs), outcomes)
        weights = self.weights[parent]
        self._take_rows(parent)
        self.weights = weights
        self.denominator *= outcomes
        return parent

    def _canonical(self, groups: IntArray) -> None:
        """Put the groups (R, P, s) of every row in a fixed order by content, then merge rows.

        Exact, and the big saving: a shuffle's outcome distribution does not depend on the order
        its piles had, so rows that differ only in that order are merged before expanding.
        """
        contents = self.cards[np.arange(self.runs)[:, None, None], groups].astype(np.int64) + 1
        if contents.shape[2] <= 6:  # a pile's tokens (< 1024) must fit one 64-bit sort key
            key = np.zeros(contents.shape[:2], dtype=np.int64)
            for j in range(contents.shape[2]):
                key = key * 1024 + contents[:, :, j]
            self._permute_groups(groups, np.argsort(key, axis=1, kind="stable"))
        self._before_shuffle()

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
        self._before_shuffle()
        c = halves.shape[1]
        self.costs.random_bisection_cut += c
        swaps = np.array(list(itertools.product([False, True], repeat=c)), dtype=bool)
        parent = self._expand(len(swaps))
        self._swap_halves(halves[parent], np.tile(swaps, (len(parent) // len(swaps), 1)))
        self._merge()

    def _state_parts(self) -> list[np.ndarray]:
        self.areas = {k: np.sort(v, axis=1) for k, v in self.areas.items()}
        return [self.cards, self.up, *self.areas.values()]

    def _merge(self) -> None:
        """Add up the weights of identical rows (state, areas, history, transcript). An area is
        a hand or a pile of helper cards: a set, so its order is dropped first (sorted)."""
        parts = [*self._state_parts(), self.history[:, None], *self.transcript]
        first, inverse = _group_rows(np.concatenate(parts, axis=1, dtype=np.int64))
        weights = np.zeros(len(first), dtype=np.int64)
        np.add.at(weights, inverse, self.weights)
        self._take_rows(first)
        self.weights = weights
        g = math.gcd(self.denominator, *weights.tolist())
        if g > 1:
            self.weights //= g
            self.denominator //= g

    def _before_shuffle(self) -> None:
        if self.compress:
            self._compress()
        else:
            self._merge()

    def _compress(self) -> None:
        """Merge rows in the same state whatever their transcripts: each group's transcripts
        (history node + reveals since) become one new history node."""
        first, inverse = _group_rows(np.concatenate(self._state_parts(), axis=1,
                                                    dtype=np.int64))
        entries: list[dict[tuple[int, Chunks], int]] = [{} for _ in first]
        chunks = _row_chunks(self.transcript, self.runs)
        for r, (g, h, w) in enumerate(zip(inverse.tolist(), self.history.tolist(),
                                          self.weights.tolist(), strict=True)):
            e = entries[g]
            e[(h, chunks[r])] = e.get((h, chunks[r]), 0) + w
        totals = [sum(e.values()) for e in entries]
        history = [self.histories.intern({k: Fraction(w, t) for k, w in e.items()})
                   for e, t in zip(entries, totals, strict=True)]
        self._take_rows(first)
        self.transcript = []
        self.history = np.array(history, dtype=np.int64)
        self.weights = np.array(totals, dtype=np.int64)

    def transcript_node(self) -> int:
        """The node of the whole run's transcript distribution (all rows, state ignored)."""
        entries: dict[tuple[int, Chunks], Fraction] = {}
        chunks = _row_chunks(self.transcript, self.runs)
        for r, (h, w) in enumerate(zip(self.history.tolist(), self.weights.tolist(),
                                       strict=True)):
            key = (h, chunks[r])
            entries[key] = entries.get(key, Fraction(0)) + Fraction(w, self.denominator)
        return self.histories.intern(entries)


def _row_chunks(transcript: Sequence[TokenArray], runs: int) -> list[Chunks]:
    lists = [c.tolist() for c in transcript]
    return [tuple(tuple(c[r]) for c in lists) for r in range(runs)]


def _group_rows(key: npt.NDArray[np.int64]) -> tuple[IntArray, IntArray]:
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

    def transcript_node(self) -> int:
        """Id of the transcript distribution: equal ids, equal distributions."""
        return self.table.transcript_node()

    def transcripts(self, helper_deck: HelperDeck | None = None) -> dict[str, Fraction]:
        """Probability of each transcript (see :func:`transcript_strings`; roles by name, or
        by their physical faces under ``helper_deck``)."""
        return self.table.histories.expand(self.transcript_node(), VOCAB.codes(helper_deck))


def enumerate_branches(protocol: Protocol[Any], areas: dict[str, TokenArray],
                       histories: Histories | None = None, compress: bool = True) -> Branches:
    """Run ``protocol`` over every shuffle outcome; inputs compared for security must share
    ``histories``."""
    table = ExactTable(areas, histories, compress)
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
        return f"{self.name}: {self.inputs} inputs, {self.branches} final states; {marks}"


def _same_transcripts(runs: Sequence[Branches]) -> bool:
    """Do all runs have one transcript distribution? Equal node ids prove it at once; other
    ids are expanded and compared (a different construction may still give equal sums)."""
    nodes = {b.transcript_node() for b in runs}
    if len(nodes) <= 1:
        return True
    first = runs[0].transcripts()
    return all(b.transcripts() == first for b in runs[1:])


def and_input(x: int, y: int) -> tuple[Protocol[Any], dict[str, TokenArray]]:
    return and_protocol(), {"x": bit_tokens([x])[0], "y": bit_tokens([y])[0]}


def and_outcomes(b: Branches) -> dict[str, Fraction]:
    """``x&y=a ~x&y=b`` → probability, as :func:`protocol_runner.simulate.simulate_and`."""
    xy, nxy = b.result
    rows = np.arange(b.table.runs)[:, None]
    a, c = read_bits(b.table.cards[rows, xy]), read_bits(b.table.cards[rows, nxy])
    return b.distribution([f"x&y={i} ~x&y={j}" for i, j in zip(a, c, strict=True)])


def prove_and() -> Proof:
    """Six-card AND for all four inputs: outputs x∧y and x̄∧y in every branch; the turned pair
    reads αβ or βα with probability 1/2 each, whatever the input."""
    proof = Proof("six-card AND")
    runs, histories = [], Histories()
    for x, y in itertools.product((0, 1), repeat=2):
        b = enumerate_branches(*and_input(x, y), histories)
        proof.correct &= and_outcomes(b) == {f"x&y={x & y} ~x&y={(1 - x) & y}": 1}
        runs.append(b)
        proof.inputs += 1
        proof.branches += b.table.runs
    proof.secure = _same_transcripts(runs)
    shown = runs[0].transcripts()
    proof.uniform = set(shown.values()) == {Fraction(1, 2)}
    proof.details.append(f"transcripts: {_show(shown)}")
    return proof


def lottery_branches(valid: Sequence[int], original: bool,
                     histories: Histories | None = None) -> Branches:
    from protocol_runner.simulate import lottery_protocol

    m = len(valid)
    return enumerate_branches(lottery_protocol(m, original),
                              {"cards": VOCAB.tokens(VOCAB.faces[:m]),
                               "bits": bit_tokens(valid).ravel()}, histories)


def lottery_outcomes(b: Branches, m: int) -> dict[str, Fraction]:
    """Selected 0-based index (or ``none``) → probability."""
    rows = np.arange(b.table.runs)
    sel = b.result
    picked = np.where(sel >= 0, b.table.cards[rows, np.maximum(sel, 0)], EMPTY)
    index = {int(t): str(i) for i, t in enumerate(VOCAB.tokens(VOCAB.faces[:m]))}
    return b.distribution([index.get(int(t), "none") for t in picked])


def prove_lottery(m: int, original: bool = False) -> Proof:
    """Every validity vector of length m: the selected card is valid, each valid card with
    probability 1/#valid (original: each card 1/m when none is valid), none only when none is
    valid; transcripts identical across all vectors with a valid card (and, for the original,
    across all vectors)."""
    name = f"covert lottery ({'original' if original else 'modified'}), m = {m}"
    proof = Proof(name)
    runs: dict[bool, list[Branches]] = {True: [], False: []}
    histories = Histories()
    for valid in itertools.product((0, 1), repeat=m):
        b = lottery_branches(valid, original, histories)
        outcome = lottery_outcomes(b, m)
        n_valid = sum(valid)
        if n_valid:
            want = {str(i): Fraction(1, n_valid) for i in range(m) if valid[i]}
        else:
            want = ({str(i): Fraction(1, m) for i in range(m)} if original
                    else {"none": Fraction(1)})
        proof.uniform &= outcome == want
        proof.correct &= set(outcome) == set(want)
        runs[bool(n_valid) or original].append(b)
        proof.inputs += 1
        proof.branches += b.table.runs
    proof.secure = all(_same_transcripts(r) for r in runs.values() if r)
    return proof


def uno_branches(top: Card, hand: Sequence[Card], others: Sequence[Sequence[Card]],
                 deck: Sequence[Card], variant: Variant = "v2", colour: str | None = None,
                 histories: Histories | None = None) -> Branches:
    groups = uno_groups([len(o) for o in others], len(deck), hand=len(hand))
    areas = {"P1": VOCAB.tokens(hand), "deck": VOCAB.tokens(deck)}
    areas |= {f"P{i + 2}": VOCAB.tokens(o) for i, o in enumerate(others)}
    everything = Counter(hand) + Counter(deck)
    for o in others:
        everything += Counter(o)
    return enumerate_branches(uno_card_selection(groups, everything, top, colour, variant),
                              areas, histories)


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
                         variant: Variant = "v2", colour: str | None = None) -> Proof:
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
    by_public: dict[bool, list[Branches]] = {True: [], False: []}
    histories = Histories()
    for deal in _assignments(all_cards, sizes):
        hand, others, deck = deal[0], deal[1:-1], deal[-1]
        b = uno_branches(top_card, hand, others, deck, variant, colour, histories)
        selected = b.table.area("selected")[:, 0]
        proof.correct &= bool(_returned(b, hand, others, deck).all())
        outcome = b.distribution([None if t < 0 else VOCAB.item(int(t)) for t in selected])
        valid = [c for c in hand if uno_playable(c, top_card, colour)]
        want: dict[Any, Fraction] = (
            {c: Fraction(n, len(valid)) for c, n in Counter(valid).items()} if valid
            else {None: Fraction(1)})
        proof.uniform &= outcome == want
        by_public[bool(valid)].append(b)
        proof.inputs += 1
        proof.branches += b.table.runs
    proof.secure = all(_same_transcripts(r) for r in by_public.values() if r)
    proof.details += [f"{'some' if v else 'no'} valid card in P1's hand: {len(r)} deals"
                      for v, r in by_public.items() if r]
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


CARD_SELECTION_CASES: tuple[tuple[str, str, tuple[int, ...], str | None], ...] = (
    ("2R", "7R,SY,2G", (2, 1), None),
    ("2R", "7R,SY,2G,W", (2, 1, 1), None),
    ("2R", "7R,SY,2G,5B", (1, 2, 1), None),
    ("2R", "7R,SY,2G,W,5B", (2, 2, 1), None),
    ("2R", "7R,SY,2G,W,5B,+4", (3, 2, 1), None),
    ("W", "7Y,SY,2G,+4,5B,5B", (2, 2, 2), "Y"),
)


def all_proofs() -> Iterator[Proof]:
    """Every exact check the project makes (``cardtable prove``; the tests run the same)."""
    yield prove_and()
    for m in range(1, 6):
        for original in (False, True):
            yield prove_lottery(m, original)
    for top, cards, sizes, colour in CARD_SELECTION_CASES:
        for variant in ("v2", "v1"):
            yield prove_card_selection(top, cards, sizes, variant, colour)  # type: ignore[arg-type]
