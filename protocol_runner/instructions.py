"""What the runner says: instructions for the table and verdicts on what the camera saw.

Both are frozen dataclasses with ``to_json`` (the journal, ``--json`` and the dashboard read the
same dicts). An :class:`Instruction` carries the human text and the structured data a screen
needs: where the step happens, what every cell should show afterwards (the expectation) and
which cells change (highlights). A :class:`Verdict` says whether an input was accepted, and if
not, every :class:`Problem` with its place (1-based columns and rows, as people count) and how to
recover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

VerdictKind = Literal["accepted", "deviation", "refused"]
BlindKind = Literal["shuffle", "face-down move"]

# What an expected cell shows: a code, "BACK", or "?" (a card being revealed: read it).
REVEAL = "?"


@dataclass(frozen=True, slots=True)
class Expected:
    """The table after the current step: per zone, columns of expected cells (top to bottom).

    ``discard`` is the expected top of the discard pile (a code, or ``?`` for a card about to
    be played there). ``reveal`` says in words which cards may appear where ``?`` stands, and
    ``may_show`` maps each code that may appear there to how many times at most: the prior a
    recogniser should use (the protocol is the truth).
    ``hands``: face-down cards expected in front of players (checked when a view counts them).
    """

    work: tuple[tuple[str, ...], ...] = ()
    side: tuple[tuple[str, ...], ...] = ()
    discard: str | None = None
    reveal: str = ""
    may_show: dict[str, int] = field(default_factory=dict)
    hands: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"work": [list(c) for c in self.work], "side": [list(c) for c in self.side],
                "discard": self.discard, "reveal": self.reveal, "may_show": dict(self.may_show),
                "hands": dict(self.hands)}


@dataclass(frozen=True, slots=True)
class Instruction:
    """One thing the table must do now.

    ``step``/``total`` number the paper's step ("5" of 12), ``index``/``count`` the runner's own
    position in the current protocol (every action, 1-based). ``blind`` says whether the camera
    must not look while the table performs it (``shuffle``: until ``shuffle_done``;
    ``face-down move``: until a view shows the expected all-face-down layout).
    """

    turn: int
    player: str
    phase: str
    text: str
    protocol: str = ""
    step: str = ""
    total: int = 0
    index: int = 0
    context: str = ""
    blind: BlindKind | None = None
    expected: Expected = field(default_factory=Expected)
    highlight: tuple[tuple[str, int, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "instruction", "turn": self.turn, "player": self.player,
                "phase": self.phase, "protocol": self.protocol, "step": self.step,
                "total": self.total, "index": self.index, "context": self.context,
                "text": self.text, "blind": self.blind, "expected": self.expected.to_json(),
                "highlight": [list(h) for h in self.highlight]}

    def line(self) -> str:
        """One line for a terminal."""
        where = f"[{self.protocol} {self.step}/{self.total}] " if self.protocol else ""
        blind = f" (camera off: {self.blind})" if self.blind else ""
        who = f" {self.player}" if self.player else ""
        return f"turn {self.turn}{who}: {where}{self.text}{blind}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong, and where: ``zone`` work/side/discard/hands, 1-based column and row."""

    message: str
    zone: str = ""
    column: int | None = None
    row: int | None = None
    expected: str | None = None
    saw: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        for name in ("zone", "column", "row", "expected", "saw"):
            if (value := getattr(self, name)) not in (None, ""):
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class Verdict:
    """The runner's answer to one input. ``kind``: accepted, deviation (the table differs from
    what the protocol allows: nothing advanced) or refused (the input itself cannot be taken:
    out of order, inside a blind window, not meaningful now)."""

    kind: VerdictKind
    message: str
    seq: int | None = None
    problems: tuple[Problem, ...] = ()
    recover: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "accepted"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "verdict", "verdict": self.kind, "seq": self.seq,
                               "message": self.message}
        if self.problems:
            out["problems"] = [p.to_json() for p in self.problems]
        if self.recover:
            out["recover"] = self.recover
        return out

    def line(self) -> str:
        seq = f"#{self.seq} " if self.seq is not None else ""
        text = f"{seq}{self.kind.upper()}: {self.message}"
        if self.problems:
            text += "".join(f"\n    - {p.message}" for p in self.problems[:8])
            if len(self.problems) > 8:
                text += f"\n    - … and {len(self.problems) - 8} more"
        if self.recover:
            text += f"\n    recover: {self.recover}"
        return text


Output = Instruction | Verdict
