"""Stability: commit a view to the runner only when the table has held still and is uncovered.

A camera reads a card differently from frame to frame while a hand moves over it, glare drifts,
or a card is still sliding. The runner must see none of that: :class:`StableCommitter` passes a
view on only after the same reading (every cell's code, ignoring confidences) held for
``frames`` consecutive frames with no obstruction (a hand) in any zone, and only when it differs
from the last view it committed. A blind frame or a frame that could not be read breaks the run.
"""

from __future__ import annotations

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


@dataclass
class StableCommitter:
    """Feed every :class:`TableView`; ``update`` returns a :class:`View` when one is committed."""

    frames: int = 5
    _run: int = 0
    _last: Signature | None = None
    _committed: Signature | None = None
    _window: list[View] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.frames < 1:
            raise ValueError("frames must be at least 1")

    def reset(self) -> None:
        """Forget the run in progress (e.g. after a blind window ended)."""
        self._run, self._last, self._window = 0, None, []

    def update(self, tv: TableView) -> View | None:
        if tv.blind or tv.error is not None or tv.observation is None or tv.hand_in_view:
            self.reset()
            return None
        sig = signature(tv.observation)
        if sig == self._last:
            self._run += 1
            self._window.append(tv.observation)
        else:
            self._run, self._last, self._window = 1, sig, [tv.observation]
        self._window = self._window[-self.frames:]
        if self._run < self.frames or sig == self._committed:
            return None
        self._committed = sig
        return _least_confident(self._window)

    @property
    def committed(self) -> Signature | None:
        return self._committed


def _least_confident(views: list[View]) -> View:
    """The window's view with each cell's confidence the lowest seen: stability is not certainty."""
    last = views[-1]

    def merge(zone: str) -> tuple[tuple[Cell, ...], ...]:
        cols = []
        for c, col in enumerate(last.cells(zone)):
            cells = []
            for r, cell in enumerate(col):
                if cell.code is not None:  # equal signatures: every view has this cell
                    cell = Cell(cell.code, min(v.cells(zone)[c][r].confidence for v in views))
                cells.append(cell)
            cols.append(tuple(cells))
        return tuple(cols)

    discard = last.discard
    if discard.code is not None:
        discard = Cell(discard.code, min(v.discard.confidence for v in views))
    return View(work=merge("work"), side=merge("side"), discard=discard, seq=last.seq, t=last.t)
