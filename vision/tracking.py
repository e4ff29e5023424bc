"""Stability: commit a view to the runner only when the table has held still and is uncovered.

A camera reads a card differently from frame to frame while a hand moves over it, glare drifts,
or a card is still sliding. The runner must see none of that: :class:`StableCommitter` passes a
view on only after the table held still for ``frames`` consecutive frames with no obstruction
(a hand) in any zone — the same layout (where cards lie, which face down) and, from one frame to
the next, no more cards read differently than :func:`flicker` allows — and only when the view
differs from the last one it committed. A blind frame or a frame that could not be read breaks
the run.

Each card's code is the one most of those frames read (the latest on a tie), its confidence the
lowest with which they read it, scaled by the share of frames that agreed. WHY tolerate a few
cards read two ways: on a fanned matrix of a hundred small cards, one borderline corner flips
on most re-reads, and a still table would never be committed at all; such a card is uncertain
and says so through its confidence (the runner asks the table to confirm it).

Cards do not move by themselves: after a commit, a new view is committed only when the table
gave evidence of a change since — a hand, a blind or unreadable frame, or the camera's own
reading (before the protocol's prior, see ``CameraVision`` in :mod:`protocol_runner.pipeline`)
changed by more than flicker. Without this rule, the still table of an accepted step, read
again under the *next* step's prior, is a "new" reading that the runner rightly refuses: a
deviation for a table that did nothing wrong.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol_runner.observations import Cell, View, trim
from vision.recognise import TableView

Signature = tuple[object, ...]


def signature(view: View) -> Signature:
    """The codes of a view, cell by cell, without confidences and trailing empty cells."""

    def cols(columns: tuple[tuple[Cell, ...], ...]) -> tuple[tuple[str | None, ...], ...]:
        out = tuple(tuple(c.code for c in trim(col)) for col in columns)
        while out and not out[-1]:
            out = out[:-1]
        return out

    return (cols(view.work), cols(view.side), view.discard.code)


def layout(view: View) -> Signature:
    """Where cards lie and which lie face down, without which cards they are."""

    def shape(columns: tuple[tuple[Cell, ...], ...]) -> tuple[tuple[int, ...], ...]:
        out = tuple(tuple(_side(c.code) for c in trim(col)) for col in columns)
        while out and not out[-1]:
            out = out[:-1]
        return out

    return (shape(view.work), shape(view.side), _side(view.discard.code))


def _side(code: str | None) -> int:
    return 0 if code is None else 1 if code == "BACK" else 2


def changed(a: View, b: View) -> int:
    """How many cards read differently in ``a`` and ``b``; every card when the layouts differ."""
    if layout(a) != layout(b):
        return sum(1 for _ in _codes(a)) + sum(1 for _ in _codes(b))
    return sum(x != y for x, y in zip(_codes(a), _codes(b), strict=True))


def flicker(view: View) -> int:
    """Cards a still table may read differently from one frame to the next: one in 50 (a few
    borderline corners of a fanned matrix; none on a small table). More is a change."""
    return sum(1 for _ in _codes(view)) // 50


def _apart(a: Counter[str], b: Counter[str]) -> int:
    """Cards by which two multisets of codes differ (a card read as another counts once)."""
    return (sum(((a - b) + (b - a)).values()) + 1) // 2


def _codes(view: View) -> list[str | None]:
    return [c.code for zone in ("work", "side") for col in view.cells(zone) for c in col
            if c.code is not None] + [view.discard.code]


@dataclass
class StableCommitter:
    """Feed every :class:`TableView`; ``update`` returns a :class:`View` when one is committed.

    ``update(tv, own)``: ``own`` is what the camera read on its own in the frame, before any
    prior and before any layout was fitted (the codes of its detections; default: the codes of
    ``tv.observation``). A new view is committed only if a hand (or a blind or unreadable
    frame: the table was not seen) came since the last commit, or ``own`` differs from the
    codes read at the last commit in more cards than flicker allows.
    """

    frames: int = 5
    _run: int = 0
    _committed: Signature | None = None
    _own_at_commit: Counter[str] | None = None
    _moved: bool = False
    _window: list[View] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.frames < 1:
            raise ValueError("frames must be at least 1")

    def reset(self) -> None:
        """Forget the run in progress (e.g. after a blind window ended)."""
        self._run, self._window = 0, []

    def forget_commit(self) -> None:
        """The committed view was corrected by hand (a misread card named): the camera's reading
        of it no longer says what the runner holds, so the next view the table shows after a
        hand is committed even if the camera reads it as before (the card put right may read
        as the misread did). A still table is not committed again: no hand, no change."""
        self._committed = None

    def update(self, tv: TableView, own: Iterable[str] | None = None) -> View | None:
        if tv.blind or tv.error is not None or tv.observation is None or tv.hand_in_view:
            self._moved = True
            self.reset()
            return None
        view = tv.observation
        read = Counter(own) if own is not None else Counter(c for c in _codes(view) if c)
        if self._window and changed(self._window[-1], view) <= flicker(view):
            self._run += 1
            self._window.append(view)
        else:
            self._run, self._window = 1, [view]
        self._window = self._window[-self.frames:]
        if self._run < self.frames:
            return None
        voted = _voted(self._window)
        sig = signature(voted)
        if sig == self._committed:
            return None
        if not self._moved and self._own_at_commit is not None \
                and _apart(read, self._own_at_commit) <= flicker(view):
            return None  # the same still table, read under a new prior: nothing happened
        self._committed, self._own_at_commit, self._moved = sig, read, False
        return voted


def _voted(views: list[View]) -> View:
    """The window's views (one layout) as one: each cell's most frequent code (the latest on a
    tie), at the lowest confidence it was read with, times the share of views that read it."""
    last = views[-1]

    def vote(cells: list[Cell]) -> Cell:
        counts = Counter(c.code for c in cells)
        best = max(counts.values())
        code = next(c.code for c in reversed(cells) if counts[c.code] == best)
        low = min(c.confidence for c in cells if c.code == code)
        return Cell(code, low * best / len(cells))

    def merge(zone: str) -> tuple[tuple[Cell, ...], ...]:
        cols = []
        for c, col in enumerate(last.cells(zone)):
            cells = []
            for r, cell in enumerate(col):
                if cell.code is not None:  # one layout: every view has a card here
                    cell = vote([v.cells(zone)[c][r] for v in views])
                cells.append(cell)
            cols.append(tuple(cells))
        return tuple(cols)

    discard = last.discard
    if discard.code is not None:
        discard = vote([v.discard for v in views])
    return View(work=merge("work"), side=merge("side"), discard=discard, seq=last.seq, t=last.t)
