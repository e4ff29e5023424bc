"""Two cardtable processes over HTTP: the host serves the log (FastAPI), the joiner polls (httpx).

The host's log is the table's single order of entries. The joiner fetches what is new, checks
every envelope (schema, MAC, index) and applies it; it posts its own entries, which the host
checks the same way and refuses with a status that says why: 401 wrong MAC, 403 wrong seat, 409
replay or out of order, 422 against the protocol or the rules (a cheat). Both sides keep their
state in a :class:`~protocol_runner.remote.store.Store`; a joiner whose connection drops keeps
retrying, and either side restarted on the same state directory replays its log and goes on.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from protocol_runner.remote.messages import (
    VERSION,
    MessageError,
    derive_key,
    join_mac,
    open_envelope,
    relay_mac,
    seal,
)
from protocol_runner.remote.protocol import Entry, ProtocolError
from protocol_runner.remote.scheme import Group, small_group, sound_group
from protocol_runner.remote.store import StateError, Store
from protocol_runner.remote.uno_remote import RemoteUno

GROUPS: dict[str, Callable[[], Group]] = {"rfc3526-2048": sound_group, "test-256": small_group}
PLAY_GROUPS = ("rfc3526-2048",)
HOST_SEAT = 0
MAX_PLAYERS = 6


class RemoteError(OSError):
    """The other device cannot be reached, or refused what this device sent."""


def seat_of(code: str) -> int:
    """The seat a join code is for: codes read ``SEAT-SECRET``, e.g. ``1-Xc3fQ9aLk2``."""
    head, _, secret = code.partition("-")
    if not head.isdigit() or not secret or int(head) < 1:
        raise ValueError(f"{code!r} is not a join code: they look like 1-Xc3fQ9aLk2 "
                         "(the seat, a dash, the secret), as the host printed it")
    return int(head)


class HostSession:
    """The hosting device (seat 0): its game, the log, and the FastAPI app that serves them."""

    def __init__(self, state_dir: str | Path, group: str = "rfc3526-2048",
                 code: str | None = None, players: int = 2) -> None:
        self.store = Store(state_dir)
        meta = self.store.meta()
        if meta:
            if meta.get("role") != "host":
                raise StateError(f"{state_dir} holds a joined game, not a hosted one")
            group, self.table, secret = meta["group"], meta["table"], meta["secret"]
            self.codes = {int(k): v for k, v in meta["codes"].items()}
        else:
            if group not in GROUPS:
                raise ValueError(f"unknown group {group!r}; use one of {', '.join(GROUPS)}")
            if not 2 <= players <= MAX_PLAYERS:
                raise ValueError(f"a remote table seats 2 to {MAX_PLAYERS} players, not {players}")
            self.table, secret = secrets.token_hex(16), secrets.token_urlsafe(16)
            self.codes = {seat: f"{seat}-{code or secrets.token_urlsafe(9)}"
                          for seat in range(1, players)}
            self.store.set_meta(role="host", group=group, table=self.table, secret=secret,
                                codes=self.codes)
        self.players = len(self.codes) + 1
        self.group_name = group
        self.keys = {HOST_SEAT: derive_key(secret, self.table)}
        self.keys.update({seat: derive_key(c, self.table) for seat, c in self.codes.items()})
        self.game = RemoteUno(GROUPS[group](), self.players, HOST_SEAT, self.store.journal())
        self.envelopes = self.store.envelopes()
        for env in self.envelopes:
            self.game.apply(open_envelope(env, self.table, self.keys[int(env["sender"])]))
        self.lock = threading.RLock()
        self.fetched = dict.fromkeys(self.codes, 0)  # how much of the log each joiner has
        self._news = threading.Event()  # set when a joiner's entry arrives
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def everyone_has_all(self) -> bool:
        return min(self.fetched.values()) >= len(self.envelopes)

    def submit(self, entry: Entry) -> None:
        """Apply one of this device's entries and add it to the log (journal first)."""
        with self.lock:
            self.store.save_journal(self.game.device.journal)
            envelope = seal(entry, self.table, self.keys[HOST_SEAT])
            self.game.apply(entry)
            self.store.append(envelope)
            self.envelopes.append(envelope)
            self.store.snapshot(self.game.snapshot())

    def idle(self) -> None:
        """Nothing to do until a joiner sends something: wait for it."""
        self._news.wait(0.5)
        self._news.clear()

    def step(self) -> bool:
        """Send what the protocol or the rules require of this device now; False if nothing."""
        with self.lock:
            entry = self.game.next_entry()
            if entry is None:
                return False
            self.submit(entry)
            return True

    def receive(self, data: object) -> tuple[int, dict[str, Any]]:
        """Handle an envelope posted by a joiner: (HTTP status, JSON answer)."""
        with self.lock:
            sender = data.get("sender") if isinstance(data, dict) else None
            if not isinstance(sender, int) or sender not in self.codes:
                return 403, {"detail": f"no joining seat {sender!r} at this table"}
            try:
                entry = open_envelope(data, self.table, self.keys[sender])
            except MessageError as exc:
                return 401 if "MAC" in str(exc) else 400, {"detail": str(exc)}
            if entry.index != len(self.envelopes):
                return 409, {"detail": f"entry {entry.index} refused: the log is at "
                             f"{len(self.envelopes)} (a replay or a message out of order)"}
            try:
                self.game.apply(entry)
            except ProtocolError as exc:
                return 422, {"detail": f"{type(exc).__name__}: {exc}"}
            assert isinstance(data, dict)
            self.store.append(data)
            self.envelopes.append(data)
            self.fetched[sender] = len(self.envelopes)
            self._news.set()
            self.store.snapshot(self.game.snapshot())
            return 200, {"index": entry.index}

    def app(self) -> Any:
        from fastapi import Body, FastAPI
        from fastapi.responses import JSONResponse

        app = FastAPI(title="cardtable remote table")

        @app.get("/table")
        def table() -> dict[str, Any]:
            return {"v": VERSION, "table": self.table, "devices": self.players,
                    "group": self.group_name, "p": format(self.game.device.group.p, "x"),
                    "game": "uno"}

        @app.post("/join")
        def join(body: dict[str, Any] = Body(...)) -> JSONResponse:  # noqa: B008
            seat = body.get("seat")
            if seat not in self.codes or not secrets.compare_digest(
                    str(body.get("mac", "")), join_mac(self.keys[seat], self.table, seat)):
                return JSONResponse({"detail": "wrong join code"}, status_code=401)
            return JSONResponse({"seat": seat})

        @app.get("/log")
        def log(seat: int, after: int = 0, wait: float = 0.0) -> JSONResponse:
            """Entries from ``after`` on, each with a relay MAC for ``seat``; with ``wait``, hold
            the request until there are some."""
            if seat not in self.codes:
                return JSONResponse({"detail": f"no joining seat {seat}"}, status_code=403)
            deadline = time.monotonic() + min(max(wait, 0.0), 5.0)
            while len(self.envelopes) <= after and time.monotonic() < deadline:
                time.sleep(0.005)
            with self.lock:
                self.fetched[seat] = max(self.fetched[seat], after)
                key = self.keys[seat]
                return JSONResponse({"entries": [{"envelope": e, "relay": relay_mac(key, e)}
                                                 for e in self.envelopes[after:after + 200]]})

        @app.post("/entries")
        def entries(data: dict[str, Any] = Body(...)) -> JSONResponse:  # noqa: B008
            status, answer = self.receive(data)
            return JSONResponse(answer, status_code=status)

        return app

    def serve(self, port: int, bind: str = "127.0.0.1") -> None:
        """Start the HTTP server in a background thread; return once it listens."""
        import uvicorn

        config = uvicorn.Config(self.app(), host=bind, port=port, log_level="warning",
                                access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RemoteError(f"could not listen on {bind}:{port} (is the port taken?)")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
            self._server = self._thread = None


class JoinSession:
    """The joining device: polls the host's log and posts its own entries, retrying on drops."""

    def __init__(self, url: str, code: str, state_dir: str | Path,
                 groups: tuple[str, ...] = PLAY_GROUPS, patience: float = 120.0) -> None:
        self.url, self.patience = url.rstrip("/"), patience
        self.lock = threading.RLock()  # the terminal loop shares one code path with the host
        self.client = httpx.Client(base_url=self.url, timeout=30.0)
        self.store = Store(state_dir)
        info = self._call("GET", "/table", patience=min(patience, 5.0))  # first contact: fail fast
        if info.get("v") != VERSION:
            raise RemoteError(f"the host speaks protocol version {info.get('v')}, this "
                              f"cardtable speaks {VERSION}")
        group = info.get("group")
        if group not in groups or format(GROUPS[group]().p, "x") != info.get("p"):
            raise RemoteError(f"the host proposes group {group!r}; only "
                              f"{', '.join(groups)} is accepted")
        meta = self.store.meta()
        if meta and (meta.get("role") != "join" or meta.get("table") != info["table"]):
            raise StateError(f"{state_dir} holds another game; use a fresh --state-dir")
        self.table, self.seat = str(info["table"]), seat_of(code)
        devices = info.get("devices")
        if not isinstance(devices, int) or not self.seat < devices <= MAX_PLAYERS:
            raise RemoteError(f"the host seats {devices!r} players; no seat {self.seat} there")
        self.key = derive_key(code, self.table)
        self._call("POST", "/join", json={"seat": self.seat,
                                          "mac": join_mac(self.key, self.table, self.seat)})
        self.store.set_meta(role="join", table=self.table, url=self.url, group=group)
        self.game = RemoteUno(GROUPS[group](), devices, self.seat, self.store.journal())
        envelopes = self.store.envelopes()
        for env in envelopes:  # our own disk: only our own entries carry a MAC we can check
            self.game.apply(open_envelope(env, self.table, self._key_for(env)))
        self.log_length = len(envelopes)

    def _key_for(self, envelope: dict[str, Any]) -> bytes | None:
        return self.key if envelope.get("sender") == self.seat else None

    def _call(self, method: str, path: str, patience: float | None = None,
              **kwargs: Any) -> dict[str, Any]:
        """One request, retried with backoff while the connection is down."""
        deadline = time.monotonic() + (self.patience if patience is None else patience)
        pause = 0.1
        while True:
            try:
                response = self.client.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if time.monotonic() > deadline:
                    raise RemoteError(f"lost the host at {self.url}: {exc}") from None
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
                continue
            if response.status_code == 401:
                raise RemoteError(f"the host refused: {response.json().get('detail')}")
            if response.status_code in (200, 409, 422):
                data = response.json()
                data["status"] = response.status_code
                return data
            raise RemoteError(f"the host answered {response.status_code}: {response.text[:200]}")

    def idle(self) -> None:
        """Nothing to do until the host sends something: wait for it (a long poll)."""
        self.sync(wait=2.0)

    def sync(self, wait: float = 0.0) -> int:
        """Fetch and apply the host's new entries; return how many.

        The long poll runs outside the lock, so a move from the page can go out meanwhile;
        entries are applied under the lock, and only if the log has not moved on since."""
        got = 0
        while True:
            after = self.log_length
            data = self._call("GET", "/log", params={"seat": self.seat, "after": after,
                                                     "wait": wait})
            envelopes, wait = data.get("entries", []), 0.0
            with self.lock:
                if self.log_length != after:  # our own entry went out meanwhile: ask again
                    continue
                for item in envelopes:
                    env = item.get("envelope") if isinstance(item, dict) else None
                    if not isinstance(env, dict) or not secrets.compare_digest(
                            str(item.get("relay", "")), relay_mac(self.key, env)):
                        raise MessageError("an entry from the host has a wrong relay MAC: "
                                           "tampered with on the way")
                    entry = open_envelope(env, self.table, self._key_for(env))
                    self.game.apply(entry)
                    self.store.append(env)
                    self.log_length += 1
                    got += 1
                if got:
                    self.store.snapshot(self.game.snapshot())
            if len(envelopes) < 200:
                return got

    def submit(self, entry: Entry) -> None:
        """Post one of this device's entries (journal first); the host's verdict is final."""
        with self.lock:
            self._submit(entry)

    def _submit(self, entry: Entry) -> None:
        self.store.save_journal(self.game.device.journal)
        envelope = seal(entry, self.table, self.key)
        answer = self._call("POST", "/entries", json=envelope)
        if answer["status"] == 422:
            raise ProtocolError(f"the host refused entry {entry.index}: {answer.get('detail')}")
        if answer["status"] == 409:  # it may have landed before the connection dropped
            self.sync()
            return
        self.game.apply(entry)
        self.store.append(envelope)
        self.log_length += 1
        self.store.snapshot(self.game.snapshot())

    def step(self) -> bool:
        """Catch up with the host and send what this device owes; False if nothing happened."""
        got = self.sync()
        entry = self.game.next_entry()
        if entry is not None:
            self.submit(entry)
            return True
        return got > 0

    def close(self) -> None:
        self.client.close()
