"""The runner: follows a game and every protocol step from what is visible on the table.

Two layers:

* :class:`ProtocolDriver` drives one protocol generator of :mod:`protocol_runner.protocols` with
  one run (R = 1). It keeps a *public* model of the table (each slot empty, face down, or face up
  with a known card) and where each slot lies (the step's regions: ``matrix`` in the work area,
  every other region in the side area). For the current step it renders the expected view and
  checks an observed :class:`~protocol_runner.observations.View` against it cell by cell; at a
  reveal it reads the turned cards, checks them against the step's public expectation, and
  sends the :class:`~protocol_runner.machine.Reveal` on.
* :class:`GameRunner` plays the UNO game (:mod:`protocol_runner.games.uno`): it turns the first
  card, watches humans play on the discard pile, and runs the card selection protocol (then the
  wild colour choice, or draw-then-play) for virtual players. ``feed`` takes one input record and
  returns the verdict and, when the step changed, the next instruction.

The runner knows only public information: it never holds a face-down card's identity, and it
is deterministic, so replaying the journaled inputs rebuilds its state exactly (resume, audit).
:class:`Session` adds the journal, for every game: the setup record's ``game`` picks UNO's
:class:`GameRunner` or, for Old Maid, Sevens, Hearts and Muggins,
:class:`~protocol_runner.games.checked.CheckedGame` (same records, same outputs, the same
:class:`ProtocolDriver`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from protocol_runner.cards import BACK, Card, uno_deck
from protocol_runner.games import uno
from protocol_runner.helpers import (
    ALPHA,
    BETA,
    HelperDeck,
    HelperDeckError,
    Role,
    default_uno_helper_deck,
    theta,
)
from protocol_runner.instructions import (
    REVEAL,
    BlindKind,
    Expected,
    Instruction,
    Output,
    Problem,
    Verdict,
    unsure_problem,
    unsure_verdict,
)
from protocol_runner.machine import (
    VOCAB,
    BisectionCut,
    Lay,
    PileScramble,
    Place,
    Protocol,
    Rearrange,
    Reveal,
    Step,
    Take,
    Turn,
)
from protocol_runner.observations import (
    Cell,
    Event,
    ObservationError,
    Record,
    Setup,
    View,
    compact,
)
from protocol_runner.protocols.card_selection import Group, uno_card_selection, uno_groups
from protocol_runner.protocols.wild_colour import wild_colour

DOWN = -2     # model: a face-down card (its identity is not public)
PENDING = -3  # model: a card being turned face up in the current step
EMPTY = -1
WORK_REGIONS = frozenset({"matrix"})
CODES = VOCAB.codes()
PHASE_PROTOCOL = "protocol"
# A card read less surely than this is not taken as read: the table confirms or corrects it
# (the ``unsure`` deviation; a setup's ``min_confidence`` overrides it). WHY 0.2: it is the line
# the protocol prior draws between a misread and a misplaced card (``vision.prior.FLAG_BELOW``):
# the pipeline keeps a flagged card whose own reading is weak at its legal code, with that
# code's probability, always below 0.2 — so every such card is asked about. The classifier's
# probabilities are temperature-calibrated; on 1,080 held-out renders a top reading below 0.2
# was right 0 of 10 times, one of 0.2-0.5 22 of 87 (protocol_runner/README.md, "Unsure cards",
# has the command); a higher line would ask about more right cards.
MIN_CONFIDENCE = 0.2
# words of a protocol's text that name a group or area ("P2", "of deck"): said as people call them
_GROUP_RE = re.compile(r"(?:(?<=of )|(?<=below )|(?<=into ))(?:drawn|deck)\b|\bP\d+\b")


class RunnerError(ValueError):
    """The runner cannot go on (e.g. a protocol's public inputs are inconsistent)."""


def _flat(a: Any) -> list[int]:
    """A position array of one run: (j,) or (1, j) → list of ints."""
    arr = np.asarray(a)
    if arr.ndim >= 2 and arr.shape[0] == 1:
        arr = arr[0]
    return [int(x) for x in arr.ravel()]


def blind_kind(action: object, state: Sequence[int]) -> BlindKind | None:
    """Shuffles, and moves of face-down cards, must not be watched (NOTES.md item 14)."""
    if isinstance(action, PileScramble | BisectionCut):
        return "shuffle"
    if isinstance(action, Lay) or (isinstance(action, Place) and not action.face_up):
        return "face-down move"
    if isinstance(action, Rearrange | Take):
        moved = _flat(action.source if isinstance(action, Rearrange) else action.positions)
        if any(p >= 0 and state[p] == DOWN for p in moved):
            return "face-down move"
    return None


@dataclass
class _Rendered:
    """The expected view of one step: per zone, columns of slot ids; and the cell strings."""

    slots: dict[str, list[list[int]]]
    cells: dict[str, tuple[tuple[str, ...], ...]]
    where: dict[int, tuple[str, int, int]]  # slot → (zone, column, row), 1-based


class ProtocolDriver:
    """One protocol run on the real table, checked step by step (R = 1)."""

    def __init__(self, factory: Callable[[], Protocol[Any]], helper_deck: HelperDeck,
                 areas: dict[str, int], names: dict[str, str]) -> None:
        self.factory = factory
        self.helper_deck = helper_deck
        self.initial_areas = dict(areas)
        self.names = names  # group/area name → what people call it ("P2" → "Bob")
        self.history: list[Reveal | None] = []
        self._codes = VOCAB.codes(helper_deck)
        # token → what the camera shows; PENDING (-3), DOWN (-2), EMPTY (-1) index from the end
        self._code_list = [str(c) for c in self._codes] + [REVEAL, BACK, ""]
        self._start()

    # ---------------------------------------------------------------------------- lifecycle
    def _start(self) -> None:
        self.gen = self.factory()
        self.state: list[int] = []
        self.loc: dict[int, tuple[int, int, int]] = {}  # slot → (region index, column, row)
        self.region_names: list[str] = []
        self.areas: Counter[str] = Counter(self.initial_areas)
        self.index = 0
        self.done = False
        self.result: Any = None
        self.rendered = _Rendered({"work": [], "side": []}, {"work": (), "side": ()}, {})
        self._grids: list[tuple[str, np.ndarray]] = []
        self._layout = 0
        self._shape: tuple[tuple[int, bytes], dict[str, list[list[int]]],
                           dict[int, tuple[str, int, int]]] | None = None
        self.step: Step = next(self.gen)
        self._prepare()

    def undo(self) -> bool:
        """Go back one step: rebuild from the start and replay all but the last step."""
        if not self.history:
            return False
        replay = self.history[:-1]
        self.history = []
        self._start()
        for sent in replay:
            self._advance(sent)
        return True

    def _prepare(self) -> None:
        """Compute the current step's expected table (after the step) and its rendering."""
        step = self.step
        self.blind = blind_kind(step.action, self.state)
        self.after = self._apply(step.action, list(self.state))
        grids = [(region.name, region.cells(0)) for region in step.regions]
        if not self._same_regions(grids):  # (re-listing the same grids changes nothing)
            self._layout += 1
            for name, grid in grids:
                if name not in self.region_names:
                    self.region_names.append(name)
                r_idx = self.region_names.index(name)
                rows, cols = np.nonzero(grid >= 0)
                for slot, row, col in zip(grid[rows, cols].tolist(), rows.tolist(),
                                          cols.tolist(), strict=True):
                    self.loc[slot] = (r_idx, col, row)
        self._grids = grids
        self.before = self.rendered
        self.rendered = self._render(self.after)
        self.turned = _flat(step.action.positions) if isinstance(step.action, Turn) \
            and step.action.up else []
        self.turned = [p for p in self.turned if p >= 0]

    def _apply(self, action: object, state: list[int], tokens: Sequence[int] | None = None,
               areas: Counter[str] | None = None) -> list[int]:
        """The public effect of ``action`` on ``state`` (and on area counts, if given)."""
        match action:
            case Lay(source=source, positions=positions):
                pos = _flat(positions)
                state.extend([DOWN] * (max(pos) + 1 - len(state)))
                if areas is not None:
                    areas[source] -= len(pos)
            case Place(tokens=toks, positions=positions, face_up=up):
                pos, values = _flat(positions), _flat(toks)
                state.extend([EMPTY] * (max(pos) + 1 - len(state)))
                for p, t in zip(pos, values, strict=True):
                    state[p] = t if up else DOWN
            case Turn(positions=positions, up=up):
                pos = [p for p in _flat(positions) if p >= 0]
                for i, p in enumerate(pos):
                    state[p] = (tokens[i] if tokens is not None else PENDING) if up else DOWN
            case Rearrange(positions=positions, source=source):
                pos, src = _flat(positions), _flat(source)
                old = [state[s] for s in src]
                for p, v in zip(pos, old, strict=True):
                    state[p] = v
            case Take(positions=positions, to=to):
                pos = [p for p in _flat(positions) if p >= 0]
                for p in pos:
                    state[p] = EMPTY
                if areas is not None:
                    areas[to] += len(pos)
            case PileScramble() | BisectionCut():
                pass
            case _:
                raise RunnerError(f"unknown action {action!r}")
        return state

    def _same_regions(self, grids: list[tuple[str, np.ndarray]]) -> bool:
        old = self._grids
        return len(old) == len(grids) and all(
            a == b and x.shape == y.shape and np.array_equal(x, y)
            for (a, x), (b, y) in zip(old, grids, strict=True))

    def _render(self, state: Sequence[int]) -> _Rendered:
        """Group the present slots into columns per zone (the hot path: the grouping is cached
        while the layout and the set of occupied slots stay the same)."""
        present = bytes(v != EMPTY for v in state)
        key = (self._layout, present)
        if self._shape is not None and self._shape[0] == key:
            slots, where = self._shape[1], self._shape[2]
        else:
            slots, where = self._group(state)
            self._shape = (key, slots, where)
        codes = self._code_list
        cells = {zone: tuple(tuple([codes[state[s]] for s in col]) for col in cols)
                 for zone, cols in slots.items()}
        return _Rendered(slots, cells, where)

    def _group(self, state: Sequence[int]) -> tuple[dict[str, list[list[int]]],
                                                     dict[int, tuple[str, int, int]]]:
        work_regions = [name in WORK_REGIONS for name in self.region_names]
        columns: dict[tuple[bool, int, int], list[tuple[int, int]]] = {}
        size = len(state)
        for slot, (r_idx, col, row) in self.loc.items():
            if slot < size and state[slot] != EMPTY:
                key = (not work_regions[r_idx], r_idx, col)
                if key in columns:
                    columns[key].append((row, slot))
                else:
                    columns[key] = [(row, slot)]
        slots: dict[str, list[list[int]]] = {"work": [], "side": []}
        for key in sorted(columns):
            slots["side" if key[0] else "work"].append([s for _, s in sorted(columns[key])])
        where: dict[int, tuple[str, int, int]] = {}
        for zone, cols in slots.items():
            for c, col in enumerate(cols, start=1):
                for r, slot in enumerate(col, start=1):
                    where[slot] = (zone, c, r)
        return slots, where

    def _advance(self, sent: Reveal | None) -> None:
        tokens = _flat(sent.tokens) if sent is not None else None
        self.state = self._apply(self.step.action, self.state, tokens, self.areas)
        self.history.append(sent)
        self.index += 1
        try:
            self.step = self.gen.send(sent)
        except StopIteration as stop:
            self.done = True
            self.result = stop.value
            return
        self._prepare()

    # ------------------------------------------------------------------------------- checks
    def shuffle_done(self) -> None:
        self._advance(None)

    def check(self, view: View) -> tuple[list[Problem], Reveal | None]:
        """Compare ``view`` with the expected table; decode and check a reveal."""
        problems: list[Problem] = []
        read: dict[int, str] = {}
        for zone in ("work", "side"):
            want = self.rendered.cells[zone]
            want_slots = self.rendered.slots[zone]
            seen = [c for c in (compact(col) for col in view.cells(zone)) if c]
            if len(seen) != len(want):
                problems.append(Problem(
                    f"the {zone} area shows {len(seen)} columns; expected {len(want)}",
                    zone=zone, expected=str(len(want)), saw=str(len(seen))))
            for c, (wcol, scol, slots) in enumerate(zip(want, seen, want_slots, strict=False),
                                                    start=1):
                if len(scol) == len(wcol) and REVEAL not in wcol \
                        and all(x.code == w for x, w in zip(scol, wcol, strict=True)):
                    continue
                if len(scol) != len(wcol):
                    problems.append(Problem(
                        f"{zone} column {c} holds {len(scol)} cards; expected {len(wcol)} "
                        f"({self._label_col(wcol)})", zone=zone, column=c,
                        expected=" ".join(wcol), saw=" ".join(x.code or "-" for x in scol)))
                    continue
                for r, (w, cell, slot) in enumerate(zip(wcol, scol, slots, strict=True), start=1):
                    got = cell.code or "empty"
                    if w == REVEAL:
                        if got in (BACK, "empty"):
                            problems.append(Problem(
                                f"{zone} column {c}, row {r} should be turned face up",
                                zone=zone, column=c, row=r, expected="face up", saw=got))
                        else:
                            read[slot] = got
                    elif got != w:
                        problems.append(Problem(
                            f"{zone} column {c}, row {r}: expected {self._label(w)}, "
                            f"saw {self._label(got)}{self._why(zone, c, r)}",
                            zone=zone, column=c, row=r, expected=w, saw=got))
        if problems or not self.turned:
            return problems, None
        return self._check_reveal(read)

    def _label(self, code: str) -> str:
        return card_label(code, self.helper_deck)

    def _label_col(self, col: Sequence[str]) -> str:
        return " ".join(col) if col else "empty"

    def _why(self, zone: str, column: int, row: int) -> str:
        """For a validity pair (card selection Step 6): name the card and the reason."""
        protocol = self.step.protocol
        if self.step.number != "6" or zone != "work" or row < 3 or not (
                "selection" in protocol or "draw-then-play" in protocol):
            return ""
        top_slot = self.rendered.slots[zone][column - 1][0]
        value = self.after[top_slot]
        if value < 0:
            return ""
        card = str(self._codes[value])
        first = self.step.action.tokens if isinstance(self.step.action, Place) else None
        if first is None:
            return ""
        valid = _flat(first)[2 * (column - 1)] == VOCAB.token(BETA)
        rule = "on the top card" if protocol.startswith("UNO") else "by the rules now"
        return (f" — below {card}, which is {'valid' if valid else 'not valid'} {rule}, so "
                f"{'βα' if valid else 'αβ'}")

    def _token(self, code: str, allowed: frozenset[int]) -> int:
        """Physical code → token: a helper role where the step expects roles, else the face."""
        card = Card(code)
        role = self.helper_deck.role(card)
        if role is not None and VOCAB.token(role) in allowed:
            return VOCAB.token(role)
        return VOCAB.token(card)

    def _check_reveal(self, read: dict[int, str]) -> tuple[list[Problem], Reveal | None]:
        expect = self.step.expect
        allowed = frozenset(expect.faces or ()) | frozenset(expect.multiset or {})
        tokens = [self._token(read[p], allowed) for p in self.turned]
        reveal = Reveal(np.array([self.turned]), np.array([tokens], dtype=np.int16))
        if expect is None:
            return [], reveal
        problems: list[Problem] = []
        place = [self.rendered.where[p] for p in self.turned]
        if expect.faces is not None:
            for (zone, c, r), code, t in zip(place, (read[p] for p in self.turned), tokens,
                                             strict=True):
                if t not in expect.faces:
                    problems.append(Problem(
                        f"{zone} column {c}, row {r}: {self._label(code)} cannot appear here; "
                        f"expected {expect.text}", zone=zone, column=c, row=r, saw=code))
        if expect.multiset is not None:
            foreign = {t for t in tokens if expect.faces is not None and t not in expect.faces}
            problems += self._multiset_problems(tokens, place, dict(expect.multiset),
                                                expect.text, foreign)
        width = len(next(iter(expect.words))) if expect.words else (
            len(expect.word_counts[0][0]) if expect.word_counts else 0)
        if width and not problems:
            words = [tuple(tokens[i:i + width]) for i in range(0, len(tokens), width)]
            for i, word in enumerate(words):
                if expect.words is not None and word not in expect.words:
                    cells = place[i * width:(i + 1) * width]
                    zone, c, r = cells[0]
                    problems.append(Problem(
                        f"{_span(cells)}: the {'pair' if width == 2 else 'group'} reads "
                        f"{self._word(word)}; expected {expect.text}", zone=zone, column=c,
                        row=r, expected=expect.text, saw=self._word(word)))
            for word, least, most in expect.word_counts:
                hits = [place[i * width][1] for i, w in enumerate(words) if w == word]
                if not least <= len(hits) <= most:
                    cols = ", ".join(map(str, hits)) or "none"
                    bound = f"at most {most}" if least == 0 else (
                        f"exactly {least}" if least == most else f"{least} to {most}")
                    problems.append(Problem(
                        f"{len(hits)} pairs read {self._word(word)} (side columns {cols}); "
                        f"{bound} may", zone=place[0][0], column=hits[0] if hits else None,
                        expected=bound, saw=str(len(hits))))
        return problems, reveal

    def _word(self, word: Sequence[int]) -> str:
        """A word as people read it: roles as symbols ("βα"), cards as codes ("7H 7S")."""
        if all(isinstance(VOCAB.item(t), Role) for t in word):
            return "".join(str(VOCAB.item(t)) for t in word)
        return " ".join(str(self._codes[t]) for t in word)

    def _multiset_problems(self, tokens: Sequence[int], place: Sequence[tuple[str, int, int]],
                           want: dict[int, int], text: str,
                           reported: set[int]) -> list[Problem]:
        """What differs from a multiset reveal (``text``: the protocol's words for it), e.g.
        Step 5 (the remaining cards) and Step 9 (θ counts = hand sizes); faces already
        ``reported`` as impossible are not named twice."""
        got = Counter(tokens)
        problems = []
        for t in sorted(set(got) | set(want)):
            n, need = got[t], want.get(t, 0)
            if n == need or t in reported:
                continue
            cols = [c for (_, c, _), tok in zip(place, tokens, strict=True) if tok == t]
            at = f" (column{'s' if len(cols) > 1 else ''} {', '.join(map(str, cols))})" \
                if cols and len(cols) <= 12 else ""
            item = VOCAB.item(t)
            if isinstance(item, Role) and item.kind == "theta":
                owner = self.names.get(f"group{item.index}", f"group {item.index}")
                msg = (f"{item} ({self._codes[t]}) shows {n} times{at}, but {owner} holds "
                       f"{_cards(need)}")
            else:
                what = f"{item} ({self._codes[t]})" if isinstance(item, Role) else self._codes[t]
                msg = (f"{what} shows {n} times{at}, but {need or 'none'} "
                       f"{'is' if need == 1 else 'are'} expected ({text})")
            problems.append(Problem(msg, zone=place[0][0], column=cols[0] if cols else None,
                                    expected=str(need), saw=str(n)))
        return problems

    def may_show(self) -> dict[str, int]:
        """Codes the current reveal may show, each with its most copies (a recogniser's prior)."""
        expect = self.step.expect
        if not self.turned or expect is None:
            return {}
        if expect.multiset is not None:
            return {self._code_list[t]: n for t, n in sorted(expect.multiset.items())}
        return {self._code_list[t]: len(self.turned) for t in sorted(expect.faces or ())}

    def changes(self) -> tuple[tuple[str, int, int], ...]:
        """Cells (zone, column, row) that the current step changes: to highlight on a screen."""
        before, now = self.before, self.rendered
        out = []
        for zone in ("work", "side"):
            old_cells, old_slots = before.cells[zone], before.slots[zone]
            for c, (col, slots) in enumerate(zip(now.cells[zone], now.slots[zone], strict=True),
                                             start=1):
                if c <= len(old_cells) and old_cells[c - 1] == col \
                        and old_slots[c - 1] == slots and REVEAL not in col:
                    continue
                for r, (cell, slot) in enumerate(zip(col, slots, strict=True), start=1):
                    if cell == REVEAL or before.where.get(slot) != (zone, c, r) \
                            or old_cells[c - 1][r - 1] != cell:
                        out.append((zone, c, r))
        return tuple(out)

    def accept(self, reveal: Reveal | None) -> None:
        self._advance(reveal)

    def judge(self, view: View, discard: str | None, problems: list[Problem]) -> Verdict:
        """The verdict on a view of the current step, for every game: refused inside a shuffle,
        a deviation when the table differs from the protocol (cell by cell, the reveal, the
        discard cell that must still show ``discard``, and the game's own ``problems``, e.g.
        hand counts); else accepted, and the step is done (the reveal sent on)."""
        title = self.step.title
        if self.blind == "shuffle":
            return Verdict("refused", f"blind window: {title} is a shuffle; the camera must not "
                           "look until an operator says 'shuffle done'", seq=view.seq)
        found, reveal = self.check(view)
        problems = found + problems
        if view.discard.code != discard:
            problems.append(Problem(f"discard: expected {discard or 'nothing'} on top",
                                    zone="discard", expected=discard,
                                    saw=view.discard.code or "empty"))
        if problems:
            recover = ("if the camera misread a card, correct it (card_corrected); if the "
                       "cards are wrong, the table made a mistake earlier: undo (step_undone) "
                       "or abort the turn (abort_turn)" if self.turned else
                       "redo the step as instructed, or correct a misread card (card_corrected)")
            return Verdict("deviation", f"{title}: the table differs from the protocol",
                           seq=view.seq, problems=tuple(problems), recover=recover)
        self.accept(reveal)
        return Verdict("accepted", f"{title}: done", seq=view.seq)

    def instruction(self, turn: int, player: str, prefix: str, discard: str | None,
                    hands: dict[str, int]) -> Instruction:
        """The current step for the table, the same for every game: the protocol's words
        (groups named as people call them), the table expected after it, what a reveal may
        show, the cells it changes. ``discard`` and ``hands`` are the game's part."""
        step = self.step
        rendered = self.rendered
        expected = Expected(work=rendered.cells["work"], side=rendered.cells["side"],
                            discard=discard, reveal=step.expect.text if step.expect else "",
                            may_show=self.may_show(), hands=hands)
        return Instruction(
            turn, player, PHASE_PROTOCOL, prefix + self.named(step.instruction(0)),
            protocol=step.protocol, step=step.number, total=step.total, index=self.index + 1,
            context=self.named(step.context), blind=self.blind, expected=expected,
            highlight=self.changes())

    def named(self, text: str) -> str:
        """``text`` with group names ("P2", "of deck") replaced by what people call them."""
        if not self.names:
            return text
        return _GROUP_RE.sub(lambda m: self.names.get(m.group(0), m.group(0)), text)

    def areas_after(self) -> dict[str, int]:
        """Cards of each *player* lying on the table after the current step (by name)."""
        areas = Counter(self.areas)
        self._apply(self.step.action, list(self.state), None, areas)
        out: Counter[str] = Counter()
        for name, initial in self.initial_areas.items():
            player = self.names.get("P1" if name == "drawn" else name, name)
            out[player] += initial - areas[name]
        return dict(out)


def min_confidence(setup: Setup) -> float:
    """The confidence below which a card must be confirmed: the setup's, else the default."""
    return MIN_CONFIDENCE if setup.min_confidence is None else setup.min_confidence


def card_label(code: str, helper_deck: HelperDeck) -> str:
    """A cell's code as players read it: "1R (α)" for a helper card, "a face-down card"."""
    if code in (BACK, "empty", REVEAL, ""):
        return {"BACK": "a face-down card", "empty": "nothing", "": "nothing",
                REVEAL: "a card"}[code]
    try:
        role = helper_deck.role(Card(code))
    except ValueError:
        role = None
    return f"{code} ({role})" if role is not None else code


CellPlace = tuple[str, int | None, int | None]  # (zone, column, row), as a correction says


def _read_cells(view: View) -> Iterator[tuple[CellPlace, int | None, int | None, Cell]]:
    """Every card of ``view``: its place as the view counts it (what a correction names) and
    its place among the cards only (how the runner's expectation counts, empty cells and
    columns left out), and the cell."""
    for zone in ("work", "side"):
        k = 0
        for c, column in enumerate(view.cells(zone), start=1):
            cards = [(r, cell) for r, cell in enumerate(column, start=1) if cell.code is not None]
            k += bool(cards)
            for j, (r, cell) in enumerate(cards, start=1):
                yield (zone, c, r), k, j, cell
    if view.discard.code is not None:
        yield ("discard", None, None), None, None, view.discard


def _expected_text(expected: Expected, zone: str, k: int | None, j: int | None,
                   helper_deck: HelperDeck) -> str:
    """What the current step expects at a card's place, in words."""
    if zone == "discard":
        code = expected.discard
        return "a new card" if code == REVEAL else card_label(code or "", helper_deck)
    columns = expected.cells(zone)
    if k is None or j is None or k > len(columns) or j > len(columns[k - 1]):
        return "nothing there"
    code = columns[k - 1][j - 1]
    if code == REVEAL:
        return f"a card being revealed ({expected.reveal})" if expected.reveal else \
            "a card being revealed"
    return card_label(code, helper_deck)


class Confirmations:
    """The runner's side of unsure cards, for every game: which cells of a view were read less
    surely than the threshold (the ``unsure`` deviation), and which cards the table confirmed.

    A confirmation (a ``card_corrected`` event) holds for its place while later views read the
    same code there, so a card the camera keeps reading unsurely is asked about once, not at
    every step; a different code or no card there ends it, and so does a shuffle (the card at
    that place is another one afterwards). Deterministic from the inputs: a journal replays it.
    """

    def __init__(self) -> None:
        self.cells: dict[CellPlace, str] = {}

    def confirm(self, zone: str, column: int | None, row: int | None, code: str) -> None:
        self.cells[(zone, None, None) if zone == "discard" else (zone, column, row)] = code

    def clear(self) -> None:
        self.cells.clear()

    def check(self, view: View, instruction: Instruction | None, threshold: float,
              helper_deck: HelperDeck) -> Verdict | None:
        """The ``unsure`` deviation for ``view``, or ``None`` when every card is sure enough
        (or confirmed). Inside a shuffle nothing is asked: the view is refused anyway."""
        if instruction is None or instruction.blind == "shuffle":
            return None
        seen: dict[CellPlace, str] = {}
        problems = []
        for place, k, j, cell in _read_cells(view):
            code = cell.code
            assert code is not None
            if self.cells:
                seen[place] = code
            if cell.confidence >= threshold or self.cells.get(place) == code:
                continue
            problems.append(unsure_problem(
                *place, code, card_label(code, helper_deck), cell.confidence,
                _expected_text(instruction.expected, place[0], k, j, helper_deck)))
        if self.cells:
            self.cells = {p: c for p, c in self.cells.items() if seen.get(p) == c}
        return unsure_verdict(tuple(problems), threshold, view.seq) if problems else None


def _refilled(before: uno.UnoState, after: uno.UnoState) -> str:
    """The instruction for a refill, if the last draw emptied the unplayed deck."""
    if len(after.discard) >= len(before.discard):
        return ""
    return ("The unplayed deck ran out: shuffle the discard pile, except its top card, face "
            "down into a new unplayed deck (camera off). ")


def hand_problems(counted: Mapping[str, int], sizes: Mapping[str, int],
                  on_table: Mapping[str, int]) -> list[Problem]:
    """Hands counted by the camera against the public hand sizes, less each player's cards
    lying on the table (in a protocol's matrix, or about to be played): a card put back into
    the wrong hand shows here, in every game."""
    problems = []
    for name, count in sorted(counted.items()):
        if name not in sizes:
            problems.append(Problem(f"hands: no player called {name!r}", zone="hands"))
            continue
        want = sizes[name] - on_table.get(name, 0)
        if count != want:
            problems.append(Problem(f"hands: {name} holds {_cards(count)} face down; expected "
                                    f"{want}: a card went back to the wrong place?",
                                    zone="hands", expected=str(want), saw=str(count)))
    return problems


def _cards(n: int) -> str:
    return f"{n} card" if n == 1 else f"{n} cards"


def _span(cells: Sequence[tuple[str, int, int]]) -> str:
    """Where a word lies, as people say it: "side columns 4–5" or "work column 3, rows 3–4"."""
    zone, c0, r0 = cells[0]
    _, c1, r1 = cells[-1]
    if c0 == c1:
        return f"{zone} column {c0}, rows {r0}–{r1}" if r0 != r1 else f"{zone} column {c0}"
    return f"{zone} columns {c0}–{c1}"


# ----------------------------------------------------------------------------- the game

PHASE_SETUP = "setup"
PHASE_FIRST = "first card"
PHASE_HUMAN = "human turn"
PHASE_COLOUR = "human colour"
PHASE_PLAY = "play selected"
PHASE_OVER = "game over"


class GameRunner:
    """A whole UNO game at a real table, fed one record at a time (a ``Session`` for the web).

    ``feed(record)`` → ``[Verdict, Instruction?]``: the verdict on the record, then the next
    instruction when the table has something new to do. ``state()`` is a JSON-able snapshot.
    """

    def __init__(self) -> None:
        self.setup: Setup | None = None
        self.game: uno.UnoState | None = None
        self.helper_deck: HelperDeck = default_uno_helper_deck()
        self.phase = PHASE_SETUP
        self.turn = 0
        self.driver: ProtocolDriver | None = None
        self.purpose = ""
        self.pending: Card | None = None  # a black card on the pile, colour still to choose
        self.last_seq: int | None = None
        self.last_view: View | None = None
        self.instruction: Instruction | None = None
        self.verdict: Verdict | None = None
        self.timeline: list[dict[str, Any]] = []
        self.notice = ""
        self.sure = Confirmations()

    # ---------------------------------------------------------------------------- public
    @classmethod
    def start(cls, setup: Setup, journal: str | Path | None = None) -> Session:
        """A new game with its journal: shorthand for :meth:`Session.start`."""
        return Session.start(setup, journal)

    def feed(self, record: Record) -> list[Output]:
        """Take one input; return the verdict and, if the table must do something new, the
        instruction. Bad or untimely input is refused with a message; state stays intact."""
        seq = record.seq if not isinstance(record, Setup) else None
        if seq is not None and self.last_seq is not None and seq <= self.last_seq:
            verdict = Verdict("refused", f"observation {seq} arrived after {self.last_seq}: "
                              "out of order, ignored", seq=seq)
            self.verdict = verdict
            return [verdict]
        before = self.instruction
        try:
            verdict = self._dispatch(record)
        except uno.UnoRuleError as exc:
            verdict = Verdict("deviation", str(exc), seq=seq)
        except ObservationError as exc:  # e.g. a correction of a cell that does not exist
            verdict = Verdict("refused", str(exc), seq=seq)
        if seq is not None and verdict.kind != "refused":
            self.last_seq = seq
        out: list[Output] = [verdict]
        if self.instruction is not None and self.instruction is not before:
            out.append(self.instruction)
        self.verdict = verdict
        return out

    def state(self) -> dict[str, Any]:
        """Everything public, for a screen: players, hand sizes, pile, colour, direction, turn,
        the current instruction (step i of n), the last verdict, the blind flag, the timeline."""
        game = uno.state_to_json(self.game) if self.game else None
        instr = self.instruction
        return {"phase": self.phase, "turn_number": self.turn, "game": game,
                "pending_black": self.pending.code if self.pending else None,
                "instruction": instr.to_json() if instr else None,
                "expectation": instr.expected.to_json() if instr else None,
                "blind": instr.blind if instr else None,
                "last_verdict": self.verdict.to_json() if self.verdict else None,
                "last_seq": self.last_seq, "timeline": list(self.timeline)}

    # -------------------------------------------------------------------------- dispatch
    def _dispatch(self, record: Record) -> Verdict:
        if isinstance(record, Setup):
            return self._setup(record)
        if self.setup is None or self.game is None:
            return Verdict("refused", "no setup record yet: the first record must say who plays",
                           seq=record.seq)
        if self.phase == PHASE_OVER:
            return Verdict("refused", "the game is over", seq=record.seq)
        if isinstance(record, Event):
            return self._event(record)
        self.last_view = record
        return self._view(record)

    def _setup(self, setup: Setup) -> Verdict:
        if self.setup is not None:
            return Verdict("refused", "the game is already set up; start a new journal for a "
                           "new game")
        if setup.game != "uno":
            return Verdict("refused", f"this runner plays uno, not {setup.game} (see "
                           "protocol_runner/games/checked.py)")
        groups = len(setup.players) + 2  # every player, the deck, a drawn card (draw-then-play)
        try:
            helper = (HelperDeck.from_mapping(setup.helper_deck) if setup.helper_deck
                      else default_uno_helper_deck(groups))
            for role in (ALPHA, BETA, *(theta(i) for i in range(1, groups + 1))):
                helper.card(role)
        except HelperDeckError as exc:
            return Verdict("refused", f"setup: {exc} (a game of {len(setup.players)} players "
                           f"needs alpha, beta and theta1…theta{groups})")
        self.setup, self.helper_deck = setup, helper
        seats = tuple(uno.Seat(p.name, p.virtual) for p in setup.players)
        self.game = uno.new_game(seats, setup.start, setup.hand_size)
        self.phase = PHASE_FIRST
        self._instruct(PHASE_FIRST, f"Deal {setup.hand_size} cards to every player (face down "
                       "in front of virtual players, unseen), then turn the top card of the "
                       "unplayed deck face up onto the discard pile.", discard=REVEAL)
        who = ", ".join(self._seat_label(i) for i in range(len(seats)))
        return Verdict("accepted", f"game set up: {who}; {seats[setup.start].name} starts")

    def _seat_label(self, i: int) -> str:
        assert self.game is not None
        seat = self.game.seats[i]
        return f"{seat.name} ({'virtual' if seat.virtual else 'human'})"

    # ------------------------------------------------------------------------------ views
    def _view(self, view: View) -> Verdict:
        assert self.setup is not None
        unsure = self.sure.check(view, self.instruction, min_confidence(self.setup),
                                 self.helper_deck)
        if unsure is not None:
            return unsure
        if self.phase == PHASE_PROTOCOL:
            return self._protocol_view(view)
        assert self.game is not None
        problems = self._empty_areas(view) + self._hand_problems(view, self._aside())
        top = self.game.top
        seen = view.discard.code
        if problems:
            return self._deviation(view, "the table is not as expected", problems,
                                   "clear the work and side areas; recount the hands")
        if self.phase == PHASE_FIRST:
            return self._first_card(view, seen)
        if seen is None or seen == BACK:
            return self._deviation(view, "the discard pile shows no face-up card",
                                   [Problem("discard: expected a face-up card", zone="discard",
                                            expected=top.code if top else "a card",
                                            saw=seen or "empty")],
                                   f"put {top} back on top of the discard pile")
        if top is not None and seen == top.code and self.pending is None:
            return Verdict("accepted", "no change", seq=view.seq)
        if self.pending is not None:
            if seen != self.pending.code:
                return self._deviation(view, f"{self.pending} must stay on top until its colour "
                                       "is chosen", [], f"put {self.pending} back on top")
            return Verdict("accepted", "no change", seq=view.seq)
        card = Card(seen)
        return self._played(view, card)

    def _first_card(self, view: View, seen: str | None) -> Verdict:
        assert self.game is not None
        if seen is None or seen == BACK:
            return Verdict("accepted", "waiting for the first card on the discard pile",
                           seq=view.seq)
        card = Card(seen)
        if card.deck != "uno" or card.is_black:
            why = "is black" if card.is_black else "is not an UNO card"
            return self._deviation(view, f"{card} cannot start the discard pile",
                                   [Problem(f"discard: {card} {why}; the first card must "
                                            "be a colour card", zone="discard",
                                            expected="a colour card", saw=card.code)],
                                   "put it back into the middle of the unplayed deck and turn "
                                   "the next card")
        self.game = uno.turn_first_card(self.game, card)
        self.timeline.append({"turn": 0, "event": f"first card {card}"})
        self._begin_turn()
        return Verdict("accepted", f"first card {card}", seq=view.seq)

    def _played(self, view: View, card: Card) -> Verdict:
        """A new card lies on the discard pile: the move of the player to move."""
        assert self.game is not None
        game, who = self.game, self.game.seats[self.game.turn].name
        if self.phase not in (PHASE_HUMAN, PHASE_PLAY):
            return self._deviation(view, f"{card} appeared on the discard pile", [], "take it back")
        left = Counter(uno_deck()) - Counter(game.discard)
        problems: list[Problem] = []
        if left[card] == 0:
            problems.append(Problem(f"discard: every {card} is already on the discard pile or "
                                    "not in the deck; a misread?", zone="discard", saw=card.code))
        elif not game.playable(card):
            force = uno.COLOUR_NAMES[game.colour_in_force or "R"]
            problems.append(Problem(f"discard: {card} is not valid on {game.top} ({force} in "
                                    "force)", zone="discard", expected=f"a card valid on "
                                    f"{game.top}", saw=card.code))
        if problems:
            how = ("take it back and play a valid card, or draw" if self.phase == PHASE_HUMAN
                   else "the protocol selected it, so a step went wrong: take it back and "
                   "abort the turn (abort_turn) to run it again")
            return self._deviation(view, f"{who} cannot play {card}", problems, how)
        if card.is_black:
            self.pending = card
            if game.seats[game.turn].virtual:
                self._start_protocol("colour")
            else:
                self.phase = PHASE_COLOUR
                self._instruct(PHASE_COLOUR, f"You played {card}: name the colour (R, Y, G or "
                               "B).", discard=card.code)
            return Verdict("accepted", f"{who} played {card}", seq=view.seq)
        self._apply_play(card, None)
        return Verdict("accepted", f"{who} played {card}", seq=view.seq)

    def _apply_play(self, card: Card, colour: str | None) -> None:
        assert self.game is not None
        who = self.game.seats[self.game.turn].name
        before = self.game
        self.game = uno.play(self.game, card, colour)
        self.pending = None
        refilled = _refilled(before, self.game)
        entry = {"turn": self.turn, "player": who, "event": f"played {card}"
                 + (f" ({uno.COLOUR_NAMES[colour]})" if colour else "")}
        self.timeline.append(entry)
        notes = []
        if card.symbol in ("+2", "+4") and self.game.winner is None:
            victim = before.seat_after(before.turn)
            n = 2 if card.symbol == "+2" else 4
            name = self.game.seats[victim].name
            notes.append(f"{name} draws {n} cards from the unplayed deck"
                         + (" face down, unseen," if self.game.seats[victim].virtual else "")
                         + " and misses the turn.")
        elif card.symbol == "S" and self.game.winner is None:
            notes.append(f"{self.game.seats[before.seat_after(before.turn)].name} misses the "
                         "turn.")
        elif card.symbol == "R":
            notes.append("Play changes direction.")
        self.notice = refilled + " ".join(notes)
        self._begin_turn()

    def _begin_turn(self) -> None:
        assert self.game is not None
        self.driver = None
        if self.game.winner is not None:
            self.phase = PHASE_OVER
            name = self.game.seats[self.game.winner].name
            self.timeline.append({"turn": self.turn, "player": name, "event": "won"})
            self._instruct(PHASE_OVER, f"{name} has played every card and wins the game.")
            return
        self.turn += 1
        seat = self.game.seats[self.game.turn]
        if seat.virtual:
            self._start_protocol("select")
        else:
            self.phase = PHASE_HUMAN
            self._instruct(PHASE_HUMAN, f"Play a card valid on {self._top_text()} onto the "
                           "discard pile, or draw a card (say 'drew').",
                           discard=REVEAL)

    def _top_text(self) -> str:
        assert self.game is not None and self.game.top is not None
        colour = self.game.colour_in_force
        name = uno.COLOUR_NAMES[colour] if colour else ""
        return f"{self.game.top} ({name} in force)" if self.game.top.is_black else \
            str(self.game.top)

    # ----------------------------------------------------------------------------- events
    def _event(self, event: Event) -> Verdict:
        assert self.game is not None
        seq = event.seq
        name = self.game.seats[self.game.turn].name
        if event.event == "card_corrected":
            if self.last_view is None or self.verdict is None \
                    or self.verdict.kind != "deviation":
                return Verdict("refused", "nothing to correct: a correction applies to the last "
                               "view, after a deviation", seq=seq)
            view = self.last_view.corrected(event.zone or "work", event.column or 0,
                                            event.row or 0, event.code or BACK)
            self.last_view = view
            self.sure.confirm(event.zone or "work", event.column, event.row, event.code or BACK)
            verdict = self._view(view)
            return Verdict(verdict.kind, f"after the correction: {verdict.message}", seq=seq,
                           problems=verdict.problems, recover=verdict.recover,
                           unsure=verdict.unsure)
        if self.phase == PHASE_PROTOCOL:
            assert self.driver is not None
            if event.event == "shuffle_done":
                if self.driver.blind != "shuffle":
                    return Verdict("refused", "no shuffle is in progress: the current step is "
                                   f"{self.driver.step.title}", seq=seq)
                title = self.driver.step.title
                self.sure.clear()
                self.driver.shuffle_done()
                self._after_step()
                return Verdict("accepted", f"{title}: shuffle done", seq=seq)
            if event.event == "step_undone":
                if not self.driver.undo():
                    return Verdict("refused", "nothing to undo: this is the protocol's first "
                                   "step", seq=seq)
                self._instruct_step(prefix="Undone. ")
                return Verdict("accepted", "back one step", seq=seq)
            if event.event == "abort_turn":
                self._start_protocol(self.purpose, prefix="Turn aborted: put every card back "
                                     "(cards above θ_i to group i, turning the θ row if "
                                     "needed; helper cards to the pool), then start again. ")
                self.timeline.append({"turn": self.turn, "player": name, "event": "aborted"})
                return Verdict("accepted", "virtual turn restarted", seq=seq)
            return Verdict("refused", f"{event.event} does not apply during a virtual turn",
                           seq=seq)
        if event.event == "played" and self.phase in (PHASE_HUMAN, PHASE_PLAY):
            if self.last_view is None or event.code != self._discard_expected():
                return Verdict("refused", "'played' is only for a card of the same face as the "
                               "top card (the camera sees no change); other plays are seen",
                               seq=seq)
            return self._played(self.last_view, Card(event.code))
        if self.phase == PHASE_HUMAN and event.event == "drew":
            before = self.game
            self.game = uno.draw_for_turn(self.game)
            self.notice = _refilled(before, self.game)
            self.timeline.append({"turn": self.turn, "player": name, "event": "drew"})
            self._instruct(PHASE_HUMAN, f"Play the drawn card if it is valid on "
                           f"{self._top_text()}, or pass.", discard=REVEAL)
            return Verdict("accepted", f"{name} drew a card", seq=seq)
        if self.phase == PHASE_HUMAN and event.event == "pass":
            self.game = uno.pass_turn(self.game)
            self.timeline.append({"turn": self.turn, "player": name, "event": "passed"})
            self.notice = ""
            self._begin_turn()
            return Verdict("accepted", f"{name} passed", seq=seq)
        if self.phase == PHASE_COLOUR and event.event == "colour":
            assert self.pending is not None
            self._apply_play(self.pending, event.colour)
            return Verdict("accepted", f"{name} chose {uno.COLOUR_NAMES[event.colour or 'R']}",
                           seq=seq)
        if self.phase == PHASE_PLAY and event.event == "abort_turn":
            self._start_protocol(self.purpose, prefix="Turn aborted: ")
            return Verdict("accepted", "virtual turn restarted", seq=seq)
        return Verdict("refused", f"{event.event} does not apply now ({self.phase}, "
                       f"{name} to move)", seq=seq)

    # -------------------------------------------------------------------------- protocols
    def _start_protocol(self, purpose: str, prefix: str = "") -> None:
        assert self.game is not None and self.setup is not None
        game = self.game
        me = game.turn
        names: dict[str, str] = {}
        if purpose == "colour":
            factory: Callable[[], Protocol[Any]] = wild_colour
            areas: dict[str, int] = {}
        else:
            order = [game.seat_after(me, j) for j in range(1, len(game.seats))]
            others = [game.hand_sizes[s] for s in order]
            if purpose == "draw":
                if not game.drawn:  # (an aborted draw-then-play keeps its drawn card)
                    before, game = game, uno.draw_for_turn(game)
                    self.game = game
                    prefix = _refilled(before, game) + prefix
                groups = uno_groups(others, game.deck_size, drawn=True,
                                    hand=game.hand_sizes[me] - 1)
            else:
                groups = uno_groups(others, game.deck_size, hand=game.hand_sizes[me])
            remaining = Counter(uno_deck()) - Counter(game.discard)
            top, colour = game.top, game.colour_in_force if game.top and game.top.is_black \
                else None
            assert top is not None
            variant = self.setup.variant
            seat_of = {"P1": me, "drawn": me} | {f"P{j + 2}": s for j, s in enumerate(order)}
            for i, g in enumerate(groups, start=1):
                label = (game.seats[seat_of[g.name]].name if g.name in seat_of
                         else "the unplayed deck")
                if g.name == "drawn":
                    label = f"the card {game.seats[me].name} drew"
                names[g.name] = label
                names[f"group{i}"] = label
            areas = {g.name: g.size for g in groups}

            def factory(groups: Sequence[Group] = groups) -> Protocol[Any]:
                return uno_card_selection(groups, remaining, top, colour, variant)
        self.purpose = purpose
        self.phase = PHASE_PROTOCOL
        self.driver = ProtocolDriver(factory, self.helper_deck, areas, names)
        self._instruct_step(prefix=prefix)

    def _protocol_view(self, view: View) -> Verdict:
        driver = self.driver
        assert driver is not None
        verdict = driver.judge(view, self._discard_expected(),
                               self._hand_problems(view, driver.areas_after() | self._aside()))
        if verdict.ok:
            self._after_step()
        return verdict

    def _discard_expected(self) -> str | None:
        assert self.game is not None
        if self.pending is not None:
            return self.pending.code
        return self.game.top.code if self.game.top else None

    def _after_step(self) -> None:
        driver = self.driver
        assert driver is not None and self.game is not None
        if not driver.done:
            self._instruct_step()
            return
        name = self.game.seats[self.game.turn].name
        if self.purpose == "colour":
            token = int(np.asarray(driver.result).ravel()[0])
            colour = VOCAB.item(token).colour  # type: ignore[union-attr]
            assert self.pending is not None
            self._apply_play(self.pending, colour)
            return
        if driver.areas["selected"]:
            self.phase = PHASE_PLAY
            self.timeline.append({"turn": self.turn, "player": name, "event": "selected a card"})
            self._instruct(PHASE_PLAY, f"Turn the selected card face up onto the discard pile: "
                           f"it is {name}'s play.", discard=REVEAL)
            return
        if self.purpose == "select":
            self.timeline.append({"turn": self.turn, "player": name, "event": "no valid card"})
            self._start_protocol("draw", prefix=f"{name} has no valid card: draw one card from "
                                 "the unplayed deck, face down, unseen; it is laid alone in "
                                 "column 1. ")
            return
        self.timeline.append({"turn": self.turn, "player": name, "event": "drew, passed"})
        self.game = uno.pass_turn(self.game)
        self.notice = f"{name}'s drawn card is not valid: {name} keeps it and passes."
        self._begin_turn()

    # ---------------------------------------------------------------------------- helpers
    def _empty_areas(self, view: View) -> list[Problem]:
        problems = []
        for zone in ("work", "side"):
            n = sum(1 for col in view.cells(zone) for cell in col if cell.code is not None)
            if n:
                problems.append(Problem(f"the {zone} area should be empty; it shows {n} cards",
                                        zone=zone, expected="empty", saw=f"{n} cards"))
        return problems

    def _aside(self) -> dict[str, int]:
        """A card that left its player's hand but is not yet in the game state: the selected
        card about to be played, or a black card whose colour is being chosen."""
        assert self.game is not None
        if self.phase == PHASE_PLAY or self.pending is not None:
            return {self.game.seats[self.game.turn].name: 1}
        return {}

    def _hand_problems(self, view: View, on_table: dict[str, int]) -> list[Problem]:
        if not view.hands or self.game is None:
            return []
        sizes = {s.name: n for s, n in zip(self.game.seats, self.game.hand_sizes, strict=True)}
        return hand_problems(view.hands, sizes, on_table)

    def _deviation(self, view: View, message: str, problems: list[Problem],
                   recover: str) -> Verdict:
        return Verdict("deviation", message, seq=view.seq, problems=tuple(problems),
                       recover=recover)

    def _instruct(self, phase: str, text: str, discard: str | None = None) -> None:
        assert self.game is not None
        if self.notice:
            text = f"{self.notice} {text}"
            self.notice = ""
        expected = Expected(discard=discard if discard is not None else
                            (self.game.top.code if self.game.top else None),
                            hands=self._hands_expected(self._aside()))
        self.instruction = Instruction(self.turn, self.game.seats[self.game.turn].name, phase,
                                       text, expected=expected)

    def _hands_expected(self, on_table: dict[str, int]) -> dict[str, int]:
        assert self.game is not None
        return {s.name: n - on_table.get(s.name, 0) for s, n in
                zip(self.game.seats, self.game.hand_sizes, strict=True) if s.virtual}

    def _instruct_step(self, prefix: str = "") -> None:
        driver = self.driver
        assert driver is not None and self.game is not None
        if self.notice:
            prefix = f"{self.notice} {prefix}"
            self.notice = ""
        self.instruction = driver.instruction(
            self.turn, self.game.seats[self.game.turn].name, prefix,
            discard=self._discard_expected(),
            hands=self._hands_expected(driver.areas_after() | self._aside()))



# --------------------------------------------------------------------------- the session

if TYPE_CHECKING:
    from protocol_runner.games.checked import CheckedGame

    Runner = GameRunner | CheckedGame


def new_runner(record: Record | None = None) -> Runner:
    """The runner for the game a setup record names: UNO's :class:`GameRunner`, or
    :class:`~protocol_runner.games.checked.CheckedGame` for Old Maid, Sevens, Hearts and
    Muggins. Both take the same records and answer in the same outputs; both are deterministic
    from their inputs, so a journal or a transcript replays either."""
    if isinstance(record, Setup) and record.game != "uno":
        from protocol_runner.games.checked import CheckedGame  # (it builds on this module)

        return CheckedGame()
    return GameRunner()


class Session:
    """A game's runner with an optional :class:`~protocol_runner.journal.Journal`: every input
    is journaled together with the runner's answers before they are returned. Any game: the
    first setup record picks the runner (:func:`new_runner`)."""

    def __init__(self, journal: Any = None) -> None:
        self.runner: Runner = GameRunner()
        self.journal = journal
        self.replay_mismatches = 0

    @classmethod
    def start(cls, setup: Setup, journal: str | Path | None = None) -> Session:
        """A new game: a new journal at ``journal`` (if given), the setup fed and journaled."""
        from protocol_runner.journal import Journal

        session = cls(Journal.create(journal) if journal is not None else None)
        verdict = session.feed(setup)[0]
        if not isinstance(verdict, Verdict) or verdict.kind != "accepted":
            raise RunnerError(f"the setup was refused: {verdict}")
        return session

    @classmethod
    def resume(cls, path: str | Path) -> Session:
        """Rebuild the game from a journal by replaying its inputs (the runner is
        deterministic); count answers that differ from the journaled ones."""
        from protocol_runner.journal import Journal

        journal = Journal.open(path)
        session = cls(journal)
        for record, recorded in journal.inputs():
            outputs = [o.to_json() for o in session.answer(record)]
            if outputs != recorded:
                session.replay_mismatches += 1
        return session

    def answer(self, record: Record) -> list[Output]:
        """The runner's answer to ``record``, not journaled."""
        if isinstance(record, Setup) and self.runner.setup is None:
            self.runner = new_runner(record)
        return self.runner.feed(record)

    def feed(self, record: Record) -> list[Output]:
        outputs = self.answer(record)
        if self.journal is not None:
            self.journal.append(record, [o.to_json() for o in outputs])
        return outputs

    def state(self) -> dict[str, Any]:
        return self.runner.state()


def replay(records: Iterable[tuple[Record, list[dict[str, Any]]]]) -> tuple[Runner, list[str]]:
    """Feed recorded inputs to a fresh runner; return it and a line per answer that differs
    from the recorded one (an audit: same verdicts, no camera)."""
    session = Session()
    differences = []
    for n, (record, recorded) in enumerate(records, start=1):
        outputs = [o.to_json() for o in session.answer(record)]
        if outputs != recorded:
            got = [o.get("verdict", o.get("text")) for o in outputs]
            want = [o.get("verdict", o.get("text")) for o in recorded]
            differences.append(f"input {n} (seq {getattr(record, 'seq', None)}): recorded "
                               f"{want}, re-checked {got}")
    return session.runner, differences
