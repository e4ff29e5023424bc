"""What the runner says: instructions for the table and verdicts on what the camera saw.

Both are frozen dataclasses with ``to_json`` (the journal, ``--json`` and the dashboard read the
same dicts). An :class:`Instruction` carries the human text and the structured data a screen
needs: where the step happens, what every cell should show afterwards (the expectation) and
which cells change (highlights). A :class:`Verdict` says whether an input was accepted, and if
not, every :class:`Problem` with its place (1-based columns and rows, as people count) and how to
recover. A card the camera read too unsurely to be taken as read is a deviation of its own kind
(``unsure``, :func:`unsure_verdict`): nothing need be wrong on the table, the players are asked
to look at the card and confirm or correct it.
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

    def cells(self, zone: str) -> tuple[tuple[str, ...], ...]:
        return self.work if zone == "work" else self.side

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
    """One thing wrong, and where: ``zone`` work/side/discard/hands, 1-based column and row.
    ``confidence``: for a card the camera read too unsurely to be taken as read (an ``unsure``
    verdict), how sure it was of ``saw``."""

    message: str
    zone: str = ""
    column: int | None = None
    row: int | None = None
    expected: str | None = None
    saw: str | None = None
    confidence: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        for name in ("zone", "column", "row", "expected", "saw", "confidence"):
            if (value := getattr(self, name)) not in (None, ""):
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class Verdict:
    """The runner's answer to one input. ``kind``: accepted, deviation (the table differs from
    what the protocol allows: nothing advanced) or refused (the input itself cannot be taken:
    out of order, inside a blind window, not meaningful now).

    ``unsure`` marks a deviation of its own kind: the camera read some card too unsurely for
    the runner to take it as read (``problems`` name each, with its confidence). Nothing
    advanced either, but nothing need be wrong on the table: the players check the card and
    confirm or correct it (``card_corrected``), and the view is checked again."""

    kind: VerdictKind
    message: str
    seq: int | None = None
    problems: tuple[Problem, ...] = ()
    recover: str = ""
    unsure: bool = False

    @property
    def ok(self) -> bool:
        return self.kind == "accepted"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "verdict", "verdict": self.kind, "seq": self.seq,
                               "message": self.message}
        if self.unsure:
            out["unsure"] = True
        if self.problems:
            out["problems"] = [p.to_json() for p in self.problems]
        if self.recover:
            out["recover"] = self.recover
        return out

    def line(self) -> str:
        seq = f"#{self.seq} " if self.seq is not None else ""
        kind = "UNSURE" if self.unsure else self.kind.upper()
        text = f"{seq}{kind}: {self.message}"
        if self.problems:
            text += "".join(f"\n    - {p.message}" for p in self.problems[:8])
            if len(self.problems) > 8:
                text += f"\n    - … and {len(self.problems) - 8} more"
        if self.recover:
            text += f"\n    recover: {self.recover}"
        return text


def percent(confidence: float) -> str:
    """A confidence as players read it: "12%", "under 1%" (never a misleading "0%")."""
    return "under 1%" if confidence < 0.01 else f"{confidence:.0%}"


def where(zone: str, column: int | None, row: int | None) -> str:
    """A cell as players say it: "work column 3, row 1", "the discard pile"."""
    if zone == "discard":
        return "the discard pile"
    return f"{zone} column {column}, row {row}"


def unsure_problem(zone: str, column: int | None, row: int | None, read: str, label: str,
                   confidence: float, expected: str) -> Problem:
    """One card read too unsurely to be taken as read. ``read`` is its code, ``label`` the same
    for players ("1R (α)"), ``expected`` what the protocol expects there, in words."""
    return Problem(f"{where(zone, column, row)}: the camera read {label}, but is only "
                   f"{percent(confidence)} sure; expected {expected}", zone=zone, column=column,
                   row=row, expected=expected, saw=read, confidence=round(confidence, 4))


def unsure_verdict(problems: tuple[Problem, ...], threshold: float,
                   seq: int | None) -> Verdict:
    """The ``unsure`` deviation: what to check and how to answer, in the players' words."""
    n = len(problems)
    what = "this card" if n == 1 else f"these {n} cards"
    return Verdict(
        "deviation", f"confirm {what}: the camera is not sure of {'it' if n == 1 else 'them'} "
        f"(less than {threshold * 100:g}% sure), so the step is not taken yet", seq=seq,
        problems=problems, unsure=True,
        recover="look at the card on the table: if it is what the camera read, confirm it "
        "('correct this card' with the same code; card_corrected); if it is another card, "
        "correct it to that card; the step is then checked again")


Output = Instruction | Verdict
