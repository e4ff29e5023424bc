"""A device's remote-play state in SQLite, so a crash or a dropped connection loses no card.

Three tables: ``meta`` (table id, join code, seat, host URL, group), ``log`` (every envelope in log
order) and ``journal`` (this device's random choices per entry it sent). The journal row is
written *before* its entry leaves the device, so whatever reached the other side can always be
explained on restart: replaying the log with the journal rebuilds every key and every card.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

DB_NAME = "remote.sqlite"


class StateError(OSError):
    """The state directory cannot be used (unreadable, or it holds another game)."""


class Store:
    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.dir / DB_NAME, check_same_thread=False)
            # WAL with synchronous=NORMAL survives a crash of the process (what resuming is for)
            # and costs no fsync per entry.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            with self._db:
                self._db.executescript(
                    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                    "CREATE TABLE IF NOT EXISTS log (idx INTEGER PRIMARY KEY, envelope TEXT NOT "
                    "NULL);"
                    "CREATE TABLE IF NOT EXISTS journal (idx INTEGER PRIMARY KEY, choices TEXT "
                    "NOT NULL);")
        except sqlite3.Error as exc:
            raise StateError(f"cannot use state directory {self.dir}: {exc}") from None
        self._lock = threading.Lock()
        self._saved: dict[int, str] = dict(self._db.execute("SELECT idx, choices FROM journal"))

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM meta")}

    def set_meta(self, **values: Any) -> None:
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                 [(k, json.dumps(v)) for k, v in values.items()])

    def envelopes(self) -> list[dict[str, Any]]:
        return [json.loads(e) for (e,) in self._db.execute("SELECT envelope FROM log ORDER BY idx")]

    def journal(self) -> dict[int, dict[str, Any]]:
        return {i: json.loads(c) for i, c in self._saved.items()}

    def save_journal(self, journal: dict[int, dict[str, Any]]) -> None:
        """Write the choices not yet on disk (or changed: an entry that never got posted)."""
        rows = [(i, json.dumps(c, sort_keys=True)) for i, c in journal.items()]
        rows = [(i, c) for i, c in rows if self._saved.get(i) != c]
        if rows:
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO journal VALUES (?, ?)", rows)
            self._saved.update(rows)

    def append(self, envelope: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT INTO log VALUES (?, ?)",
                             (envelope["index"], json.dumps(envelope, sort_keys=True)))

    def snapshot(self, data: dict[str, Any]) -> None:
        """``snapshot.json``: this device's hand and the public game, for a page to show."""
        tmp = self.dir / "snapshot.json.tmp"
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.dir / "snapshot.json")
