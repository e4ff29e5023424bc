"""What the table looks like, as one JSON object per line: the contract between camera and runner.

The vision pipeline (``vision/layout.py``) writes these records from camera frames; a script file
of them drives ``cardtable run`` with no camera at all; the journal stores them verbatim. Three
record kinds share one versioned envelope (``{"v": 1, "kind": ...}``):

* ``setup``  – who plays (human or virtual), who starts, the helper deck: the game's public start;
* ``view``   – the table as seen: zones of columns of cells (a code, ``BACK`` or empty);
* ``event``  – something an operator says that a camera cannot see (shuffle done, undo, …).

Records are frozen dataclasses with ``to_json``/``from_json`` so that both sides of the contract
parse and print through the same code. ``protocol_runner/README.md`` documents the format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from protocol_runner.cards import BACK, CardCodeError, parse_card

FORMAT_VERSION = 1

EventName = Literal[
    "shuffle_done", "step_undone", "card_corrected", "abort_turn", "drew", "pass", "colour",
    "played",
]
EVENTS: tuple[str, ...] = (
    "shuffle_done", "step_undone", "card_corrected", "abort_turn", "drew", "pass", "colour",
    "played",
)
ZONES = ("work", "side")
GAMES = ("uno", "old-maid", "sevens", "hearts", "muggins")  # the last four: games/checked.py
COLOURS = ("R", "Y", "G", "B")


class ObservationError(ValueError):
    """A record that does not follow the observation format; the message says which field."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One place on the table as read: a canonical code, ``BACK``, or ``None`` for empty."""

    code: str | None
    confidence: float = 1.0

    @property
    def empty(self) -> bool:
        return self.code is None

    @property
    def face_down(self) -> bool:
        return self.code == BACK

    def to_json(self) -> Any:
        if self.code is None:
            return None
        return self.code if self.confidence >= 1.0 else [self.code, round(self.confidence, 4)]

    @classmethod
    def from_json(cls, data: Any, where: str = "cell") -> Cell:
        """``null`` | ``"7R"`` | ``"BACK"`` | ``["7R", 0.93]`` (code and confidence)."""
        if data is None:
            return EMPTY
        confidence: Any = 1.0
        if isinstance(data, list):
            if len(data) != 2:
                raise ObservationError(f"{where}: a cell list is [code, confidence], got {data!r}")
            data, confidence = data
        if not isinstance(data, str):
            raise ObservationError(f"{where}: a cell is a code string, null or [code, confidence]"
                                   f", got {data!r}")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) \
                or not 0.0 <= confidence <= 1.0:
            raise ObservationError(f"{where}: confidence must be a number in [0, 1], "
                                   f"got {confidence!r}")
        try:
            code = _canonical(data)
        except CardCodeError as exc:
            raise ObservationError(f"{where}: {exc}") from None
        return cls(code, float(confidence))


EMPTY = Cell(None)


@lru_cache(maxsize=512)
def _canonical(text: str) -> str:
    """A cell's code, canonical (``7r`` → ``7R``, ``back`` → ``BACK``); cached, as a view
    repeats the same few dozen codes hundreds of times."""
    code = text.strip().upper()
    return code if code == BACK else parse_card(code).code

Column = tuple[Cell, ...]


def _columns_from_json(data: Any, where: str) -> tuple[Column, ...]:
    if not isinstance(data, list):
        raise ObservationError(f"{where}: expected a list of columns, got {type(data).__name__}")
    out = []
    for c, column in enumerate(data, start=1):
        if not isinstance(column, list):
            raise ObservationError(f"{where} column {c}: expected a list of cells (top to bottom)")
        out.append(tuple(Cell.from_json(cell, f"{where} column {c} row {r}")
                         for r, cell in enumerate(column, start=1)))
    return tuple(out)


def _columns_to_json(columns: Sequence[Column]) -> list[list[Any]]:
    return [[cell.to_json() for cell in column] for column in columns]


def trim(column: Sequence[Cell]) -> Column:
    """A column without trailing empty cells: two readings that differ only there are equal."""
    end = len(column)
    while end and column[end - 1].code is None:
        end -= 1
    return tuple(column[:end])


def compact(column: Sequence[Cell]) -> Column:
    """A column's cards without its empty cells: readings that differ only there are equal."""
    return tuple(cell for cell in column if cell.code is not None)


@dataclass(frozen=True, slots=True)
class View:
    """The table as one stable camera view (or one line of a script).

    ``work`` and ``side`` are lists of columns in the order people count them: left to right, and
    when the matrix wraps into bands, band after band (the vision pipeline un-wraps them). Each
    column lists its cells top to bottom. ``discard`` is the top card of the discard pile.
    ``hands`` optionally counts the face-down cards lying in front of each player (by name).
    """

    work: tuple[Column, ...] = ()
    side: tuple[Column, ...] = ()
    discard: Cell = EMPTY
    hands: Mapping[str, int] = field(default_factory=dict)
    seq: int | None = None
    t: float | None = None

    kind: Literal["view"] = "view"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"v": FORMAT_VERSION, "kind": "view"}
        if self.seq is not None:
            out["seq"] = self.seq
        if self.t is not None:
            out["t"] = self.t
        out["work"] = _columns_to_json(self.work)
        if self.side:
            out["side"] = _columns_to_json(self.side)
        out["discard"] = self.discard.to_json()
        if self.hands:
            out["hands"] = dict(self.hands)
        return out

    def cells(self, zone: str) -> tuple[Column, ...]:
        return self.work if zone == "work" else self.side

    def corrected(self, zone: str, column: int, row: int, code: str) -> View:
        """This view with one cell replaced (an operator's correction, 1-based indices)."""
        if zone == "discard":
            return _replace(self, discard=Cell(code))
        cols = [list(c) for c in self.cells(zone)]
        if not 1 <= column <= len(cols):
            raise ObservationError(f"no column {column} in the {zone} area "
                                   f"(it has {len(cols)})")
        col = cols[column - 1]
        if not 1 <= row <= len(col):
            raise ObservationError(f"no row {row} in {zone} column {column} (it has {len(col)})")
        col[row - 1] = Cell(code)
        new = tuple(tuple(c) for c in cols)
        return _replace(self, **{zone: new})


def _replace(view: View, **changes: Any) -> View:
    fields = {"work": view.work, "side": view.side, "discard": view.discard,
              "hands": view.hands, "seq": view.seq, "t": view.t}
    fields.update(changes)
    return View(**fields)


@dataclass(frozen=True, slots=True)
class Event:
    """An operator's word for what no camera sees.

    * ``shuffle_done``: the shuffle (or face-down move) of the current blind window is over;
    * ``step_undone``: the table put the last accepted step back; the runner goes back one step;
    * ``card_corrected``: the camera misread a card; ``zone``/``column``/``row`` (1-based) and
      ``code`` give the right reading, applied to the last view, which is then checked again.
      With the code the camera read, it *confirms* a card read less surely than the runner's
      ``min_confidence`` (the ``unsure`` deviation); the runner keeps the card confirmed while
      later views read the same code there;
    * ``abort_turn``: give up the virtual turn in progress; the table restores the hands;
    * ``drew`` / ``pass``: a human drew a card / ends the turn without playing;
    * ``colour``: a human who played a black card names the colour (``colour``: R, Y, G or B);
    * ``played``: a card (``code``) went onto the discard pile that the camera cannot tell from
      the top card (the same face): say so, as the view shows no change.
    """

    event: EventName
    zone: str | None = None
    column: int | None = None
    row: int | None = None
    code: str | None = None
    colour: str | None = None
    seq: int | None = None
    t: float | None = None

    kind: Literal["event"] = "event"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"v": FORMAT_VERSION, "kind": "event"}
        if self.seq is not None:
            out["seq"] = self.seq
        if self.t is not None:
            out["t"] = self.t
        out["event"] = self.event
        for name in ("zone", "column", "row", "code", "colour"):
            if (value := getattr(self, name)) is not None:
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    name: str
    virtual: bool


@dataclass(frozen=True, slots=True)
class Setup:
    """The public start of a game: seats in clockwise order, who starts, the helper deck.

    ``helper_deck`` maps roles to faces (``{"alpha": "1R", "beta": "2G", "theta1": "1B", …}``);
    empty means the game's default helper deck. ``target``: the score that ends a game of
    Hearts (``None``: 100, the rules; a table may agree on less), part of the setup so that a
    journal replays to the same end. ``min_confidence``: cells read less surely than this are
    not taken as read but must be confirmed (``None``: the runner's default,
    :data:`protocol_runner.runner.MIN_CONFIDENCE`); in the setup for the same reason.
    """

    players: tuple[PlayerSpec, ...]
    start: int = 0
    hand_size: int = 7
    variant: Literal["v1", "v2"] = "v2"
    helper_deck: Mapping[str, str] = field(default_factory=dict)
    game: str = "uno"
    target: int | None = None
    min_confidence: float | None = None

    kind: Literal["setup"] = "setup"

    def __post_init__(self) -> None:
        names = [p.name for p in self.players]
        if len(names) < 2:
            raise ObservationError("setup: a game needs at least two players")
        if len(set(names)) != len(names):
            raise ObservationError(f"setup: player names must differ, got {names}")
        virtual = sum(p.virtual for p in self.players)
        if not 1 <= virtual <= 9:
            raise ObservationError(f"setup: 1 to 9 virtual players are supported, got {virtual}")
        if not 0 <= self.start < len(names):
            raise ObservationError(f"setup: start must be a seat index 0..{len(names) - 1}")
        if not 1 <= self.hand_size <= 15:
            raise ObservationError("setup: hand_size must be 1..15")
        if self.variant not in ("v1", "v2"):
            raise ObservationError("setup: variant must be v1 or v2")
        if self.game not in GAMES:
            raise ObservationError(f"setup: unknown game {self.game!r} (one of {', '.join(GAMES)})")
        if self.target is not None and (self.game != "hearts" or self.target < 1):
            raise ObservationError("setup: target (the score that ends the game) is a positive "
                                   "integer, for hearts only")
        if self.min_confidence is not None and (
                isinstance(self.min_confidence, bool)
                or not isinstance(self.min_confidence, int | float)
                or not 0.0 <= self.min_confidence <= 1.0):
            raise ObservationError("setup: min_confidence (below it a card must be confirmed) is "
                                   f"a number in [0, 1], got {self.min_confidence!r}")

    def to_json(self) -> dict[str, Any]:
        return {"v": FORMAT_VERSION, "kind": "setup", "game": self.game,
                "players": [{"name": p.name, "type": "virtual" if p.virtual else "human"}
                            for p in self.players],
                "start": self.start, "hand_size": self.hand_size, "variant": self.variant,
                "helper_deck": dict(self.helper_deck)} | (
                    {"target": self.target} if self.target is not None else {}) | (
                    {"min_confidence": self.min_confidence}
                    if self.min_confidence is not None else {})


Record = Setup | View | Event


def _int(data: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ObservationError(f"{where}: {key} must be an integer, got {value!r}")
    return value


def from_json(data: Any) -> Record:
    """Build a record from a decoded JSON object; raise :class:`ObservationError` if malformed."""
    if not isinstance(data, dict):
        raise ObservationError(f"a record is a JSON object, got {type(data).__name__}")
    version = data.get("v")
    if version != FORMAT_VERSION:
        raise ObservationError(f"observation format version {version!r} is not supported "
                               f"(this cardtable reads version {FORMAT_VERSION})")
    kind = data.get("kind")
    seq = _int(data, "seq", kind or "record")
    t = data.get("t")
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float)):
        raise ObservationError(f"t must be a number of seconds, got {t!r}")
    if kind == "view":
        unknown = set(data) - {"v", "kind", "seq", "t", "work", "side", "discard", "hands"}
        if unknown:
            raise ObservationError(f"view: unknown field(s) {sorted(unknown)}")
        hands = data.get("hands", {})
        if not isinstance(hands, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for k, v in hands.items()):
            raise ObservationError("view: hands maps player names to card counts (integers ≥ 0)")
        return View(work=_columns_from_json(data.get("work", []), "work"),
                    side=_columns_from_json(data.get("side", []), "side"),
                    discard=Cell.from_json(data.get("discard"), "discard"),
                    hands=hands, seq=seq, t=t)
    if kind == "event":
        name = data.get("event")
        if name not in EVENTS:
            raise ObservationError(f"event: unknown event {name!r}; one of {', '.join(EVENTS)}")
        zone, code, colour = data.get("zone"), data.get("code"), data.get("colour")
        column, row = _int(data, "column", "event"), _int(data, "row", "event")
        if name == "card_corrected":
            if zone not in (*ZONES, "discard"):
                raise ObservationError("card_corrected: zone must be work, side or discard")
            if zone != "discard" and (column is None or row is None):
                raise ObservationError("card_corrected: column and row (1-based) are required")
            code = Cell.from_json(code, "card_corrected code").code
            if code is None:
                raise ObservationError("card_corrected: code is required")
        if name == "played":
            code = Cell.from_json(code, "played code").code
            if code in (None, BACK):
                raise ObservationError("played: code (the card played) is required")
        if name == "colour":
            if not isinstance(colour, str) or colour.upper() not in COLOURS:
                raise ObservationError(f"colour: colour must be one of R, Y, G, B, got {colour!r}")
            colour = colour.upper()
        return Event(event=name, zone=zone, column=column, row=row, code=code, colour=colour,
                     seq=seq, t=t)
    if kind == "setup":
        players = data.get("players")
        if not isinstance(players, list) or not all(
                isinstance(p, dict) and isinstance(p.get("name"), str)
                and p.get("type") in ("human", "virtual") for p in players):
            raise ObservationError('setup: players is a list of {"name": ..., "type": '
                                   '"human" | "virtual"}')
        helper = data.get("helper_deck", {})
        if not isinstance(helper, dict):
            raise ObservationError("setup: helper_deck maps roles to card codes")
        return Setup(players=tuple(PlayerSpec(p["name"], p["type"] == "virtual") for p in players),
                     start=_int(data, "start", "setup", 0) or 0,
                     hand_size=_int(data, "hand_size", "setup", 7) or 0,
                     variant=data.get("variant", "v2"), helper_deck=helper,
                     game=data.get("game", "uno"), target=_int(data, "target", "setup"),
                     min_confidence=data.get("min_confidence"))
    raise ObservationError(f"unknown record kind {kind!r}: expected setup, view or event")


def parse_line(line: str) -> Record:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ObservationError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    return from_json(data)


def dumps(record: Record) -> str:
    return json.dumps(record.to_json(), separators=(",", ":"), ensure_ascii=False)


def read_lines(path: str | Path) -> Iterator[tuple[int, Record | ObservationError]]:
    """Yield ``(line number, record)`` or ``(line number, error)`` for a malformed line, so a
    script runner can refuse one bad line and go on. Blank lines and ``#`` comments are skipped.
    """
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below, generator
    except OSError as exc:
        raise OSError(f"cannot read observations file {path}: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                yield number, parse_line(line)
            except ObservationError as exc:
                yield number, ObservationError(f"{path} line {number}: {exc}")


def read_records(path: str | Path) -> Iterator[tuple[int, Record]]:
    """Yield ``(line number, record)``; a malformed line raises :class:`ObservationError`
    naming the file and line number."""
    for number, item in read_lines(path):
        if isinstance(item, ObservationError):
            raise item
        yield number, item
