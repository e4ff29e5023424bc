"""The game's memory on disk: every input and every answer, appended to a SQLite file.

Why SQLite: a game must survive a crash or a power cut at any moment. Each input record (setup,
view, event) is written in ONE transaction together with everything the runner answered to it
(instructions, verdicts), in WAL mode with ``synchronous=FULL``: after a kill the journal holds
exactly the inputs whose answers were printed, never half of one. The runner is deterministic,
so resuming is replaying the journaled inputs (:meth:`protocol_runner.runner.Session.resume`),
for every game.

The journal holds only public things: what the camera saw face up, what operators said, what the
runner instructed and decided. ``export`` writes it as a transcript anyone can audit.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol_runner import __version__
from protocol_runner.observations import ObservationError, Record, dumps, parse_line

SCHEMA_VERSION = 1
INPUT_KINDS = ("setup", "view", "event")
OUTPUT_KINDS = ("instruction", "verdict")
TRANSCRIPT_VERSION = 1

_INSERT = "INSERT INTO entries (input_id, kind, seq, written, body) VALUES (?, ?, ?, ?, ?)"
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    input_id INTEGER REFERENCES entries(id),
    kind TEXT NOT NULL CHECK (kind IN ('setup', 'view', 'event', 'instruction', 'verdict')),
    seq INTEGER,
    written REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX entries_input ON entries(input_id);
"""


class JournalError(ValueError):
    """A journal that cannot be used: another schema version, damaged, not a journal at all."""


@dataclass(frozen=True, slots=True)
class Entry:
    id: int
    input_id: int | None
    kind: str
    body: dict[str, Any]


class Journal:
    """An append-only journal file. Use :meth:`create` for a new game, :meth:`open` to resume.

    WHY a lock and no thread check: the live table's journal is written by whichever thread
    the table's input arrives on (a setup given on the command line or from the page, views
    from the camera's pipeline, a correction from the page). SQLite's default check refused
    every thread but the one that opened it, and ``cardtable serve --setup`` stopped at the
    first view the camera committed; the lock keeps one writer at a time."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = threading.RLock()

    @classmethod
    def create(cls, path: str | Path) -> Journal:
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            raise JournalError(f"{path} already exists: resume it with `cardtable resume "
                               f"--journal {path}` or choose a new file")
        conn = _connect(path)
        with conn:
            conn.executescript(_SCHEMA)
            conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("schema_version", str(SCHEMA_VERSION)), ("cardtable", __version__),
                ("created", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))])
        return cls(path, conn)

    @classmethod
    def open(cls, path: str | Path) -> Journal:
        path = Path(path)
        if not path.is_file():
            raise JournalError(f"no journal at {path}")
        conn = _connect(path)
        try:
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            conn.execute("SELECT count(*) FROM entries").fetchone()
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JournalError(f"{path} is not a readable cardtable journal ({exc}); it may be "
                               "truncated or damaged: restore a copy or start a new game") from None
        if check != "ok":
            conn.close()
            raise JournalError(f"{path} is damaged ({check}): restore a copy or start a new game")
        version = rows.get("schema_version")
        if version != str(SCHEMA_VERSION):
            conn.close()
            raise JournalError(f"{path} is a journal of schema version {version} (written by "
                               f"cardtable {rows.get('cardtable', '?')}); this cardtable reads "
                               f"version {SCHEMA_VERSION}: use the matching cardtable version")
        return cls(path, conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def append(self, record: Record, outputs: Sequence[dict[str, Any]]) -> int:
        """Write one input and the runner's answers to it atomically; return the input's id."""
        now = time.time()
        with self._lock, self._conn:
            cur = self._conn.execute(
                _INSERT, (None, record.kind, getattr(record, "seq", None), now, dumps(record)))
            input_id = cur.lastrowid
            self._conn.executemany(
                _INSERT, [(input_id, out["type"], None, now, json.dumps(out, ensure_ascii=False))
                 for out in outputs])
        assert input_id is not None
        return input_id

    def entries(self) -> Iterator[Entry]:
        with self._lock:  # read at once: a writer may come between two entries given
            rows = self._conn.execute(
                "SELECT id, input_id, kind, body FROM entries ORDER BY id").fetchall()
        for id_, input_id, kind, body in rows:
            try:
                data = json.loads(body)
            except json.JSONDecodeError:
                raise JournalError(f"{self.path}: entry {id_} is damaged (not JSON)") from None
            yield Entry(id_, input_id, kind, data)

    def inputs(self) -> Iterator[tuple[Record, list[dict[str, Any]]]]:
        """Each journaled input record with the answers journaled for it, in order."""
        current: tuple[Record, list[dict[str, Any]]] | None = None
        for entry in self.entries():
            if entry.kind in INPUT_KINDS:
                if current:
                    yield current
                try:
                    current = (parse_line(json.dumps(entry.body)), [])
                except ObservationError as exc:
                    raise JournalError(f"{self.path}: entry {entry.id}: {exc}") from None
            elif current is not None:
                current[1].append(entry.body)
        if current:
            yield current

    def last_seq(self) -> int | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT max(seq) FROM entries WHERE input_id IS NULL").fetchone()
        return row[0]


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.isolation_level = "DEFERRED"
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path} is not a readable cardtable journal ({exc}); it may be "
                           "truncated or damaged: restore a copy or start a new game") from None
    return conn


def export_transcript(journal: Journal, out: str | Path) -> int:
    """Write every journal entry as JSON Lines after a header line; return the entry count."""
    count = 0
    with open(out, "w", encoding="utf-8") as handle:
        header = {"transcript": TRANSCRIPT_VERSION, "cardtable": __version__,
                  "journal_schema": SCHEMA_VERSION}
        handle.write(json.dumps(header) + "\n")
        for entry in journal.entries():
            line = {"n": entry.id, "type": entry.kind, "data": entry.body}
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


def read_transcript(path: str | Path) -> Iterator[tuple[Record, list[dict[str, Any]]]]:
    """Inputs and recorded answers from an exported transcript (see :func:`export_transcript`)."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below, generator
    except OSError as exc:
        raise OSError(f"cannot read transcript {path}: {exc.strerror}") from None
    with handle:
        first = handle.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("transcript") != TRANSCRIPT_VERSION:
            raise JournalError(f"{path} is not a cardtable transcript of version "
                               f"{TRANSCRIPT_VERSION} (bad first line)")
        current: tuple[Record, list[dict[str, Any]]] | None = None
        for number, line in enumerate(handle, start=2):
            try:
                item = json.loads(line)
                kind, data = item["type"], item["data"]
                if kind in INPUT_KINDS:
                    if current:
                        yield current
                    current = (parse_line(json.dumps(data)), [])
                elif kind in OUTPUT_KINDS and current is not None:
                    current[1].append(data)
                else:
                    raise ValueError(kind)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise JournalError(f"{path} line {number}: not a transcript entry ({exc})") \
                    from None
        if current:
            yield current
