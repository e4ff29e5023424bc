"""Several devices in one process: the log is a list every device applies in turn.

This is the transport used by the benchmark and the in-process tests; the HTTP transport
(:mod:`protocol_runner.remote.transport`) carries the very same entries between processes.
"""

from __future__ import annotations

import threading
import time

from protocol_runner.remote.protocol import Device, Entry, Referee
from protocol_runner.remote.scheme import Group
from protocol_runner.remote.uno_remote import RemoteUno


class LocalTable:
    """``devices`` devices sharing one log in memory."""

    def __init__(self, group: Group, devices: int,
                 referees: list[Referee | None] | None = None) -> None:
        refs = referees or [None] * devices
        self.devices = [Device(group, devices, i, refs[i]) for i in range(devices)]

    def post(self, entry: Entry) -> None:
        """Every device applies ``entry``; the first refusal propagates."""
        for device in self.devices:
            device.apply(entry)

    def settle(self) -> int:
        """Let devices send the passes the protocol waits for until none is due; count them."""
        sent = 0
        while (due := self.devices[0].due()) is not None:
            entry = self.devices[due].next_pass()
            assert entry is not None
            self.post(entry)
            sent += 1
        return sent


def play_uno_locally(group: Group, devices: int, max_entries: int = 5000) -> list[RemoteUno]:
    """A whole remote UNO game between ``devices`` automatic players sharing one log."""
    games = [RemoteUno(group, devices, i) for i in range(devices)]
    for _ in range(max_entries):
        entry = next((e for g in games if (e := g.next_entry()) is not None), None)
        if entry is None:
            mover = next((g for g in games if g.my_turn()), None)
            if mover is None:
                return games
            entry = mover.choose()
        for game in games:
            game.apply(entry)
    raise RuntimeError(f"no end after {max_entries} entries")


class LocalSession:
    """One seat of an in-process UNO table, with what the HTTP sessions offer the terminal and
    the page (``game``, ``lock``, ``submit``, ``step``, ``idle``): two players on one machine,
    or the tests, without a network. ``step`` does every device's duties, as nobody else will."""

    def __init__(self, games: list[RemoteUno], seat: int, lock: threading.RLock) -> None:
        self.games, self.game, self.lock = games, games[seat], lock

    def submit(self, entry: Entry) -> None:
        """Every device applies ``entry``; a refusal (the same everywhere) changes nothing."""
        with self.lock:
            for game in self.games:
                game.apply(entry)

    def step(self) -> bool:
        with self.lock:
            entry = next((e for g in self.games if (e := g.next_entry()) is not None), None)
            if entry is None:
                return False
            self.submit(entry)
            return True

    def idle(self) -> None:
        time.sleep(0.02)


def local_uno_sessions(group: Group, devices: int) -> list[LocalSession]:
    """A UNO table of ``devices`` devices in this process, one session per seat."""
    games, lock = [RemoteUno(group, devices, i) for i in range(devices)], threading.RLock()
    return [LocalSession(games, seat, lock) for seat in range(devices)]
