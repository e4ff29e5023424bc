"""The card-based machine (Mizuki–Shizuya): a table of card slots, face up or down, and the
actions the papers use. Protocols are written ONCE, as generators of :class:`Step`, and driven
either by the simulator (:class:`Table`, true cards, R runs at once) or by the camera-checked
runner (R = 1, the camera supplies each :class:`Reveal`).

How a protocol is written
-------------------------
A protocol is a generator function over PUBLIC inputs only (hand sizes, top card, the public
multiset of remaining cards, …). It yields :class:`Step` objects; after a step that turns cards
face up it receives the :class:`Reveal` (``reveal = yield step``), otherwise ``None``. It never
sees a face-down card, so it cannot leak one; the same code drives simulation and the real table.
Its return value (``StopIteration.value``) is whatever the caller needs (e.g. output positions).

Slots. The table is a row of slots numbered 0, 1, 2, … in order of creation. :class:`Lay` (private
cards from a hand/area) and :class:`Place` (public helper cards) create new slots; they are
allocated by a shared :class:`Slots` counter, so sub-protocols compose. A slot is an identity,
not a spot on the mat: where slots lie on the mat is told by each step's ``regions`` (grids of
slot ids, -1 = empty cell), which the runner uses to map camera zones to slots and to highlight.
:class:`Take` empties a slot for good (its card goes to a named area: ``"P1"``, ``"pool"``…).

Batching. Every per-run quantity has a leading run axis R. Position arrays in actions are either
``(j,)`` (the same in every run: public) or ``(R, j)`` (per run, e.g. "the columns whose first
card is valid"); -1 in a per-run position array of :class:`Turn` or :class:`Take` means "no card
in this run". Rule that keeps exact enumeration possible (see :mod:`protocol_runner.exact`): a
protocol may hold per-run arrays only until the next shuffle (the machine may split or merge runs
at a shuffle); after a shuffle every position it uses is public again, as on a real table where
everybody looks again. The machine checks the leading axis and refuses stale per-run data.

Driving a protocol by hand (the runner, R = 1)::

    gen = uno_card_selection(groups, remaining, top)      # public inputs only
    step = next(gen)
    while True:                                            # until StopIteration
        show(step.title, step.instruction(0), step.regions)
        reveal = step.read(camera_codes, helper_deck) if step.reveals else None
        if reveal is not None and step.expect:             # the protocol is the prior
            report(step.expect.problems(reveal.tokens[0], VOCAB, helper_deck))
        step = gen.send(reveal)

Tokens. Cards on the simulated table are small ints of a :class:`Vocabulary`: helper roles first
(the same ids in every vocabulary), then game faces. ``EMPTY`` (-1) marks an empty slot.
A :class:`~protocol_runner.helpers.HelperDeck` turns role tokens into the physical codes the
camera reads; transcripts are written with those codes (see :func:`transcript_strings`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from protocol_runner.cards import Card, domino_set, standard_faces, uno_faces
from protocol_runner.helpers import (
    ALPHA,
    BETA,
    DUMMY,
    HELPER_JOKER,
    HelperDeck,
    Role,
    icard,
    theta,
)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
TokenArray = npt.NDArray[np.int16]
T = TypeVar("T")

EMPTY = -1
MAX_PLAYERS = 32  # θ1…θ32 and 1-card…32-card have tokens


class MachineError(ValueError):
    """An action the table cannot carry out (bad positions, stale per-run data, empty hand…)."""


# ---------------------------------------------------------------------------------- vocabulary

@cache
def _roles() -> tuple[Role, ...]:
    return ((ALPHA, BETA, DUMMY, HELPER_JOKER)
            + tuple(theta(i) for i in range(1, MAX_PLAYERS + 1))
            + tuple(icard(i) for i in range(1, MAX_PLAYERS + 1)))


@dataclass(frozen=True)
class Vocabulary:
    """Token ids: every helper role first (fixed ids), then the game faces given."""

    faces: tuple[Card, ...]
    roles: tuple[Role, ...] = field(default_factory=_roles)

    def __post_init__(self) -> None:
        items = self.roles + self.faces
        object.__setattr__(self, "_index", {item: i for i, item in enumerate(items)})

    def __len__(self) -> int:
        return len(self.roles) + len(self.faces)

    def token(self, item: Card | Role) -> int:
        try:
            return self._index[item]  # type: ignore[attr-defined,no-any-return]
        except KeyError:
            raise MachineError(f"{item} has no token in this vocabulary") from None

    def tokens(self, items: Iterable[Card | Role]) -> TokenArray:
        return np.array([self.token(i) for i in items], dtype=np.int16)

    def item(self, token: int) -> Card | Role:
        if token < 0:
            raise MachineError("an empty slot holds no card")
        return (self.roles + self.faces)[token]

    def table(self, fn: Callable[[Card | Role], T], dtype: npt.DTypeLike = bool) -> np.ndarray:
        """``fn`` for every token, as an array indexed by token (vectorised look-ups)."""
        return np.array([fn(item) for item in self.roles + self.faces], dtype=dtype)

    def codes(self, helper_deck: HelperDeck | None = None) -> np.ndarray:
        """Printable code per token: faces as themselves; roles as their physical face under
        ``helper_deck`` (what the camera reads), or the role's name without one."""
        def code(item: Card | Role) -> str:
            if isinstance(item, Card):
                return item.code
            if helper_deck is not None and item in helper_deck.faces:
                return helper_deck.card(item).code
            return str(item)
        return self.table(code, dtype=object)


@cache
def _face_codes(vocab: Vocabulary) -> frozenset[str]:
    return frozenset(face.code for face in vocab.faces)


@cache
def default_vocabulary() -> Vocabulary:
    """Roles, the 54 UNO faces, the 53 standard faces and the 28 domino tiles (last, so that
    adding them kept every other token id)."""
    return Vocabulary(uno_faces() + standard_faces() + domino_set())


VOCAB = default_vocabulary()
T_ALPHA = VOCAB.token(ALPHA)
T_BETA = VOCAB.token(BETA)
T_DUMMY = VOCAB.token(DUMMY)


def t_theta(i: int) -> int:
    return VOCAB.token(theta(i))


def t_icard(i: int) -> int:
    return VOCAB.token(icard(i))


def bit_tokens(bits: IntArray | Sequence[int]) -> TokenArray:
    """Bits → pairs of tokens (..., 2): 0 → αβ, 1 → βα (Section 2.3; NOTES.md item 1)."""
    b = np.asarray(bits, dtype=bool)
    return np.stack([np.where(b, T_BETA, T_ALPHA), np.where(b, T_ALPHA, T_BETA)],
                    axis=-1).astype(np.int16)


def read_bits(pairs: TokenArray) -> IntArray:
    """Pairs of tokens (..., 2) → bits; -1 where a pair is neither αβ nor βα."""
    a, b = pairs[..., 0], pairs[..., 1]
    return np.where((a == T_ALPHA) & (b == T_BETA), 0,
                    np.where((a == T_BETA) & (b == T_ALPHA), 1, -1))


# ------------------------------------------------------------------------------------- actions

@dataclass(frozen=True, eq=False)
class Lay:
    """Lay ``len(positions)`` private cards from area ``source`` (a hand, the unplayed deck) face
    down onto the new slots ``positions``, in the area's order."""

    source: str
    positions: IntArray


@dataclass(frozen=True, eq=False)
class Place:
    """Put public (helper) cards ``tokens`` ((j,) or per run (R, j)) onto new slots."""

    tokens: TokenArray
    positions: IntArray
    face_up: bool


@dataclass(frozen=True, eq=False)
class Turn:
    """Turn the cards at ``positions`` face up (``up``; they are revealed) or face down."""

    positions: IntArray
    up: bool


@dataclass(frozen=True, eq=False)
class Rearrange:
    """A public rearrangement: afterwards ``positions[i]`` holds the card that was at
    ``source[i]`` (per run if (R, j)); ``source`` is a permutation of ``positions``."""

    positions: IntArray
    source: IntArray


@dataclass(frozen=True, eq=False)
class PileScramble:
    """Pile-scramble shuffle: ``piles`` (P, s) or (R, P, s) slot ids; the P piles' contents are
    permuted uniformly at random, unseen (envelopes)."""

    piles: IntArray


@dataclass(frozen=True, eq=False)
class BisectionCut:
    """Random bisection cuts: ``halves`` (C, 2, h) or (R, C, 2, h); each of the C sequences has
    its two halves swapped with probability 1/2, unseen. Counts as C cuts."""

    halves: IntArray


@dataclass(frozen=True, eq=False)
class Take:
    """The cards at ``positions`` leave the table (face down) for area ``to`` (a hand,
    ``"pool"`` of helper cards, ``"selected"``, …). -1 in per-run positions: nothing."""

    positions: IntArray
    to: str


Action = Lay | Place | Turn | Rearrange | PileScramble | BisectionCut | Take


# ------------------------------------------------------------------------- steps and reveals

@dataclass(frozen=True, eq=False)
class Region:
    """Where slots lie on the mat: ``grid`` (rows, cols) or per run (R, rows, cols) of slot ids,
    -1 for an empty cell. E.g. the card-selection matrix, a lottery's piles, an AND's line."""

    name: str
    grid: IntArray

    def cells(self, run: int = 0) -> IntArray:
        return self.grid[run] if self.grid.ndim == 3 else self.grid


@dataclass(frozen=True, eq=False)
class Expect:
    """What a reveal may show, known from public information alone (the runner's prior, and a
    check that turns a contradicting reveal into a reported deviation).

    ``faces``: tokens allowed at every revealed position; ``multiset``: the reveal as a multiset,
    exactly; ``words``: the reveal read as consecutive words of equal length, each one of these;
    ``word_counts``: (word, least, most) occurrences of a word.
    """

    text: str
    faces: frozenset[int] | None = None
    multiset: Mapping[int, int] | None = None
    words: frozenset[tuple[int, ...]] | None = None
    word_counts: tuple[tuple[tuple[int, ...], int, int], ...] = ()

    def holds(self, tokens: TokenArray) -> BoolArray:
        """Per run (tokens (R, j)): does the reveal meet every expectation?"""
        ok = np.ones(tokens.shape[0], dtype=bool)
        if self.faces is not None:
            ok &= np.isin(tokens, list(self.faces)).all(axis=1)
        if self.multiset is not None:
            keys = sorted(self.multiset)
            want = np.repeat(keys, [self.multiset[k] for k in keys])
            if len(want) != tokens.shape[1]:
                return np.zeros(tokens.shape[0], dtype=bool)
            ok &= (np.sort(tokens, axis=1) == want).all(axis=1)
        width = self._width()
        if width:
            w = tokens.reshape(tokens.shape[0], -1, width)
            if self.words is not None:
                hit = np.zeros(w.shape[:2], dtype=bool)
                for word in self.words:
                    hit |= (w == np.array(word)).all(axis=2)
                ok &= hit.all(axis=1)
            for word, least, most in self.word_counts:
                n = (w == np.array(word)).all(axis=2).sum(axis=1)
                ok &= (n >= least) & (n <= most)
        return ok

    def _width(self) -> int:
        if self.words:
            return len(next(iter(self.words)))
        return len(self.word_counts[0][0]) if self.word_counts else 0

    def problems(self, tokens: Sequence[int], vocab: Vocabulary = VOCAB,
                 helper_deck: HelperDeck | None = None) -> list[str]:
        """For one run (the runner): what about this reveal contradicts the protocol."""
        row = np.asarray(tokens, dtype=np.int64)[None, :]
        if bool(self.holds(row)[0]):
            return []
        codes = vocab.codes(helper_deck)
        seen = " ".join("?" if t < 0 else str(codes[t]) for t in tokens)
        return [f"expected {self.text}; saw {seen}"]


@dataclass(frozen=True, eq=False)
class Reveal:
    """What a :class:`Turn` up made visible: ``positions`` and ``tokens``, both (R, j)."""

    positions: IntArray
    tokens: TokenArray


@dataclass(frozen=True, eq=False)
class Step:
    """One step of a protocol as the paper numbers it, made concrete.

    ``text`` is the paper's instruction with public values filled in; ``detail(run)`` (when a
    step depends on earlier reveals, e.g. "place βα under columns 2, 5 and 7") renders it for
    one run. ``context`` says where a sub-protocol runs ("lottery step 4a, i = 3 of 7").
    """

    protocol: str
    number: str
    total: int
    text: str
    action: Action
    regions: tuple[Region, ...] = ()
    expect: Expect | None = None
    context: str = ""
    detail: Callable[[int], str] | None = None

    @property
    def title(self) -> str:
        where = f" ({self.context})" if self.context else ""
        return f"{self.protocol} step {self.number} of {self.total}{where}"

    def instruction(self, run: int = 0) -> str:
        return self.detail(run) if self.detail is not None else self.text

    @property
    def reveals(self) -> bool:
        """Does this step turn cards face up (so the runner must read them)?"""
        return isinstance(self.action, Turn) and self.action.up

    def read(self, codes: Sequence[str], helper_deck: HelperDeck | None = None,
             vocab: Vocabulary = VOCAB) -> Reveal:
        """The runner's answer to a revealing step (R = 1): the codes the camera read, in the
        order of the step's positions, as a :class:`Reveal` to ``send`` to the protocol.

        A face that a helper role plays (α = 1R) is read as that role when the step expects
        the role (the protocol is the prior), else as the game face; whatever contradicts the
        expectation is left as read, for :meth:`Expect.problems` to report.
        """
        if not self.reveals:
            raise MachineError(f"{self.title} turns nothing face up")
        positions = np.asarray(self.action.positions).reshape(1, -1)  # type: ignore[union-attr]
        if len(codes) != positions.shape[1]:
            raise MachineError(f"{self.title}: {positions.shape[1]} cards turned, "
                               f"{len(codes)} read")
        allowed = self.expect.faces if self.expect and self.expect.faces else frozenset()
        roles = {card.code: role for role, card in (helper_deck.faces.items()
                                                     if helper_deck else ())}
        tokens = []
        for code in codes:
            face = vocab.token(Card(code)) if code in _face_codes(vocab) else EMPTY
            role = vocab.token(roles[code]) if code in roles else EMPTY
            tokens.append(role if role in allowed or face == EMPTY else face)
        return Reveal(positions, np.array([tokens], dtype=np.int16))


Protocol = Generator[Step, Reveal | None, T]


class Slots:
    """Allocates slot ids for a protocol run; shared by sub-protocols so they compose."""

    def __init__(self, start: int = 0) -> None:
        self.count = start

    def new(self, n: int) -> IntArray:
        ids = np.arange(self.count, self.count + n, dtype=np.int64)
        self.count += n
        return ids


# ---------------------------------------------------------------------------- the simulator

@dataclass
class Costs:
    """Counted per run: shuffles (the same in every run: the step sequence is public) and the
    helper cards in use at the peak, per role/face (``(R,)`` arrays: they may vary by run)."""

    pile_scramble: int = 0
    random_bisection_cut: int = 0
    helper_peak: dict[int, IntArray] = field(default_factory=dict)

    def helper_counts(self, vocab: Vocabulary = VOCAB) -> Counter[Role | Card]:
        """Physical helper cards to prepare, per role (or face), the maximum over runs."""
        return Counter({vocab.item(t): int(a.max()) for t, a in self.helper_peak.items()
                        if a.max() > 0})

    def helper_total(self) -> tuple[int, int]:
        """(min, max) over runs of the helper cards a run needs in all."""
        if not self.helper_peak:
            return (0, 0)
        total = sum(self.helper_peak.values())
        return (int(total.min()), int(total.max()))  # type: ignore[union-attr]


def cards_to_prepare(counts: Counter[Role | Card], helper_deck: HelperDeck) -> Counter[Card]:
    """The physical copies a protocol instance needs: roles through the helper deck."""
    roles: Counter[Role] = Counter({k: v for k, v in counts.items() if isinstance(k, Role)})
    need = helper_deck.cards_needed(roles)
    need.update({k: v for k, v in counts.items() if isinstance(k, Card)})
    return need


class Table:
    """R simulated tables at once: ``cards`` (R, N) tokens, ``up`` (R, N) face-up mask, named
    ``areas`` (hands, pool, …) as (R, M) token arrays (EMPTY-padded), and the ``transcript``:
    every reveal in order, as (R, j) token arrays."""

    def __init__(self, runs: int, areas: Mapping[str, TokenArray] | None = None,
                 rng: np.random.Generator | None = None, count_helpers: bool = True) -> None:
        self.runs = runs
        self.cards: TokenArray = np.full((runs, 0), EMPTY, dtype=np.int16)
        self.up: BoolArray = np.zeros((runs, 0), dtype=bool)
        self.areas: dict[str, TokenArray] = {}
        for name, tokens in (areas or {}).items():
            arr = np.asarray(tokens, dtype=np.int16)
            self.areas[name] = np.broadcast_to(arr, (runs, arr.shape[-1])).copy()
        self.transcript: list[TokenArray] = []
        self.rng = rng if rng is not None else np.random.default_rng()
        self.costs = Costs()
        self._count_helpers = count_helpers
        self._in_use: dict[int, IntArray] = {}

    # --- shapes -------------------------------------------------------------------------------
    def _per_run(self, a: IntArray, what: str, inner: int) -> IntArray:
        """``a`` as (R, …): broadcast public arrays, check per-run ones are current."""
        a = np.asarray(a, dtype=np.int64)
        if a.ndim == inner:
            return np.broadcast_to(a, (self.runs, *a.shape))
        if a.ndim == inner + 1 and a.shape[0] == self.runs:
            return a
        raise MachineError(
            f"{what}: expected shape (…{inner} dims) or ({self.runs}, …), got {a.shape}; "
            "a protocol may keep per-run positions only until the next shuffle"
        )

    def _check_slots(self, pos: IntArray, what: str, allow_none: bool = False) -> None:
        lo = -1 if allow_none else 0
        if pos.size and (pos.min() < lo or pos.max() >= self.cards.shape[1]):
            raise MachineError(f"{what}: slot out of range 0…{self.cards.shape[1] - 1}")

    # --- actions ------------------------------------------------------------------------------
    def apply(self, action: Action) -> Reveal | None:
        match action:
            case Lay():
                self._lay(action)
            case Place():
                self._place(action)
            case Turn():
                return self._turn(action)
            case Rearrange():
                self._rearrange(action)
            case PileScramble():
                self._scramble(action)
            case BisectionCut():
                self._cut(action)
            case Take():
                self._take(action)
            case _:
                raise MachineError(f"unknown action {action!r}")
        return None

    def _new_slots(self, positions: IntArray) -> None:
        n = self.cards.shape[1]
        if not np.array_equal(np.asarray(positions), np.arange(n, n + len(positions))):
            raise MachineError(f"new slots must be numbered {n}, {n + 1}, … (use Slots)")

    def _append(self, tokens: TokenArray, up: bool) -> None:
        self.cards = np.concatenate([self.cards, tokens.astype(np.int16)], axis=1)
        self.up = np.concatenate([self.up, np.full(tokens.shape, up)], axis=1)

    def _lay(self, a: Lay) -> None:
        self._new_slots(a.positions)
        area = self.areas.get(a.source)
        j = len(a.positions)
        if area is None:
            raise MachineError(f"no area {a.source!r} to lay cards from")
        full = area != EMPTY
        if (full.sum(axis=1) < j).any():
            raise MachineError(f"area {a.source!r} holds fewer than {j} cards")
        order = np.argsort(~full, axis=1, kind="stable")
        take, keep = order[:, :j], order[:, j:]
        self._append(np.take_along_axis(area, take, axis=1), up=False)
        self.areas[a.source] = np.take_along_axis(area, keep, axis=1)

    def _place(self, a: Place) -> None:
        self._new_slots(a.positions)
        tokens = self._per_run(a.tokens, "Place.tokens", 1).astype(np.int16)
        self._append(tokens, up=a.face_up)
        self._use(tokens, +1)

    def _use(self, tokens: TokenArray, sign: int) -> None:
        if not self._count_helpers:
            return
        for t in np.unique(tokens):
            if t < 0:
                continue
            n = (tokens == t).sum(axis=1)
            cur = self._in_use.get(int(t), np.zeros(self.runs, dtype=np.int64)) + sign * n
            self._in_use[int(t)] = cur
            if sign > 0:
                peak = self.costs.helper_peak.get(int(t), np.zeros(self.runs, dtype=np.int64))
                self.costs.helper_peak[int(t)] = np.maximum(peak, cur)

    def _turn(self, a: Turn) -> Reveal | None:
        if np.ndim(a.positions) == 1:  # public positions: plain column indexing
            pub = np.asarray(a.positions, dtype=np.int64)
            self._check_slots(pub, "Turn")
            tokens = self.cards[:, pub]
            if (tokens == EMPTY).any():
                raise MachineError("Turn: a slot is empty")
            self.up[:, pub] = a.up
            if not a.up:
                return None
            self.transcript.append(tokens)
            return Reveal(np.broadcast_to(pub, tokens.shape), tokens)
        pos = self._per_run(a.positions, "Turn.positions", 1)
        self._check_slots(pos, "Turn", allow_none=True)
        tokens, (r, c) = self._read(pos)
        if (tokens[r, c] == EMPTY).any():
            raise MachineError("Turn: a slot is empty")
        self.up[r, pos[r, c]] = a.up
        if not a.up:
            return None
        self.transcript.append(tokens)
        return Reveal(np.asarray(pos), tokens)

    def _read(self, pos: IntArray) -> tuple[TokenArray, tuple[IntArray, IntArray]]:
        """Tokens at per-run ``pos`` (R, j) (EMPTY where -1), and the (run, index) pairs of the
        real positions (so that writes never touch a -1 placeholder)."""
        valid = pos >= 0
        rows = np.arange(self.runs)[:, None]
        tokens = np.where(valid, self.cards[rows, np.where(valid, pos, 0)], EMPTY)
        return tokens.astype(np.int16), np.nonzero(valid)

    def _rearrange(self, a: Rearrange) -> None:
        if np.ndim(a.positions) == 1 and np.ndim(a.source) == 1:
            pos, src = np.asarray(a.positions), np.asarray(a.source)
            if not np.array_equal(np.sort(pos), np.sort(src)):
                raise MachineError("Rearrange: source must be a permutation of positions")
            self._check_slots(pos, "Rearrange")
            self.cards[:, pos] = self.cards[:, src]
            self.up[:, pos] = self.up[:, src]
            return
        pos = self._per_run(a.positions, "Rearrange.positions", 1)
        src = self._per_run(a.source, "Rearrange.source", 1)
        for r in {0, self.runs - 1}:  # a protocol's per-run permutations share one recipe
            if not np.array_equal(np.sort(pos[r]), np.sort(src[r])):
                raise MachineError("Rearrange: source must be a permutation of positions")
        self._check_slots(pos, "Rearrange")
        rows = np.arange(self.runs)[:, None]
        self.cards[rows, pos] = self.cards[rows, src]
        self.up[rows, pos] = self.up[rows, src]

    def _permute_groups(self, groups: IntArray, perm: IntArray) -> None:
        """``groups`` (R, P, s) slots: afterwards group i holds what group ``perm[r, i]`` held."""
        if self.up[np.arange(self.runs)[:, None, None], groups].any():
            raise MachineError("shuffle: every card must be face down")
        rows = np.arange(self.runs)[:, None, None]
        src = np.take_along_axis(groups, perm[:, :, None], axis=1)
        self.cards[rows, groups] = self.cards[rows, src]

    def _scramble(self, a: PileScramble) -> None:
        piles = self._per_run(a.piles, "PileScramble.piles", 2)
        self._check_slots(piles, "PileScramble")
        self.costs.pile_scramble += 1
        perm = np.argsort(self.rng.random((self.runs, piles.shape[1])), axis=1)
        self._permute_groups(piles, perm)

    def _cut(self, a: BisectionCut) -> None:
        halves = self._per_run(a.halves, "BisectionCut.halves", 3)
        self._check_slots(halves, "BisectionCut")
        self.costs.random_bisection_cut += halves.shape[1]
        swap = self.rng.random((self.runs, halves.shape[1])) < 0.5
        self._swap_halves(halves, swap)

    def _swap_halves(self, halves: IntArray, swap: BoolArray) -> None:
        for c in range(halves.shape[1]):
            perm = np.where(swap[:, c:c + 1], [[1, 0]], [[0, 1]])
            self._permute_groups(halves[:, c], perm)

    def _take(self, a: Take) -> None:
        if np.ndim(a.positions) == 1:  # public positions
            pub = np.asarray(a.positions, dtype=np.int64)
            self._check_slots(pub, "Take")
            tokens = self.cards[:, pub]
            if (tokens == EMPTY).any():
                raise MachineError("Take: a slot is already empty")
            self.cards[:, pub] = EMPTY
            self.up[:, pub] = False
        else:
            pos = self._per_run(a.positions, "Take.positions", 1)
            self._check_slots(pos, "Take", allow_none=True)
            tokens, (r, c) = self._read(pos)
            if (tokens[r, c] == EMPTY).any():
                raise MachineError("Take: a slot is already empty")
            self.cards[r, pos[r, c]] = EMPTY
            self.up[r, pos[r, c]] = False
        old = self.areas.get(a.to)
        self.areas[a.to] = tokens if old is None else np.concatenate([old, tokens], axis=1)
        if a.to == "pool":
            self._use(tokens, -1)

    def area(self, name: str) -> TokenArray:
        """The cards an area holds, (R, M), EMPTY-padded (no such area: (R, 0))."""
        return self.areas.get(name, np.full((self.runs, 0), EMPTY, dtype=np.int16))


def drive(protocol: Protocol[T], table: Table,
          on_step: Callable[[Step, Reveal | None], None] | None = None) -> T:
    """Run a protocol generator to its end on ``table``; return the protocol's result."""
    try:
        step = next(protocol)
        while True:
            reveal = table.apply(step.action)
            if reveal is not None and step.expect is not None:
                bad = ~step.expect.holds(reveal.tokens)
                if bad.any():
                    raise MachineError(f"{step.title}: reveal contradicts the protocol's "
                                       f"expectation ({step.expect.text}) in {bad.sum()} runs")
            if on_step is not None:
                on_step(step, reveal)
            step = protocol.send(reveal)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def measure(protocol: Protocol[object], areas: Mapping[str, TokenArray],
            rng: np.random.Generator | None = None) -> Costs:
    """Shuffles and helper cards of one protocol instance, by running it once (R = 1) on a
    table dealt ``areas``; with :func:`cards_to_prepare`, what the players must lay ready."""
    table = Table(1, areas, rng)
    drive(protocol, table)
    return table.costs


def transcript_strings(transcript: Sequence[TokenArray], codes: np.ndarray) -> list[str]:
    """One string per run: each reveal's codes joined by ``,`` in position order, reveals joined
    by ``/`` in time order (e.g. ``1R,2G/2G,1R/...``)."""
    if not transcript:
        return []
    runs = transcript[0].shape[0]
    lookup = np.append(codes, "?")  # EMPTY (-1) → "?"
    parts = [[",".join(row) for row in lookup[chunk].tolist()] for chunk in transcript]
    return ["/".join(p[r] for p in parts) for r in range(runs)]
