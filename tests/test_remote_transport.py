"""Two devices over real HTTP on loopback: a whole game, tampering, replays, drops and restarts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from protocol_runner.commands.remote import _play
from protocol_runner.remote.messages import seal
from protocol_runner.remote.protocol import Entry, ProtocolError
from protocol_runner.remote.transport import HostSession, JoinSession, RemoteError

GROUP = "test-256"  # the property under test is the transport, not the prime's size


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Host:
    """A host session serving on loopback, its automatic player in a thread."""

    def __init__(self, state: Path, port: int, stop_after: int | None = None,
                 players: int = 2) -> None:
        self.session = HostSession(state, group=GROUP, code="family-code", players=players)
        self.session.serve(port)
        self.stop_after, self.result = stop_after, None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        s = self.session
        while True:
            with s.lock:
                if self.stop_after is not None and len(s.envelopes) >= self.stop_after:
                    return
                if s.game.phase == "done":
                    self.result = s.game.report
                    return
                if s.step():
                    continue
                if s.game.my_turn():
                    s.submit(s.game.choose())
                    continue
            s.idle()

    def stop(self) -> None:
        self.thread.join(timeout=60)
        self.session.stop()


def _advance(joiner: JoinSession, until: int) -> None:
    """Play the joiner's side automatically until the log holds ``until`` entries."""
    while joiner.log_length < until:
        assert joiner.game.phase != "done"
        if joiner.step():
            continue
        if joiner.game.my_turn():
            joiner.submit(joiner.game.choose())
            continue
        time.sleep(0.01)


def _join(port: int, state: Path) -> JoinSession:
    return JoinSession(f"http://127.0.0.1:{port}", "1-family-code", state, groups=(GROUP,),
                       patience=20)


def test_two_devices_play_a_whole_game_over_http(tmp_path: Path) -> None:
    port = _free_port()
    host = Host(tmp_path / "host", port)
    joiner = _join(port, tmp_path / "join")
    assert _play(joiner, auto=True) == 0
    host.stop()
    assert host.result is not None and host.result.clean
    assert joiner.game.report is not None and joiner.game.report.clean
    assert [e["mac"] for e in host.session.envelopes] == [
        e["mac"] for e in joiner.store.envelopes()]
    snap = json.loads((tmp_path / "join" / "snapshot.json").read_text())
    assert snap["phase"] == "done" and snap["me"] == 1 and snap["game"]["winner"]
    assert [c["card"] for c in snap["hand"]] == [c for _, c in joiner.game.device.hand("deck")]
    assert len(snap["hand"]) == 1  # the card redrawn after everybody put their hand back
    joiner.close()


def test_three_devices_play_a_whole_game_over_http(tmp_path: Path) -> None:
    port = _free_port()
    host = Host(tmp_path / "host", port, players=3)
    url = f"http://127.0.0.1:{port}"
    joiners = [JoinSession(url, f"{seat}-family-code", tmp_path / f"j{seat}", groups=(GROUP,))
               for seat in (1, 2)]
    results: list[int] = []
    second = threading.Thread(target=lambda: results.append(_play(joiners[1], auto=True)))
    second.start()
    results.append(_play(joiners[0], auto=True))
    second.join(timeout=120)
    # one joiner cannot post in another's name: it does not know that seat's code
    forged = seal(Entry(len(host.session.envelopes), 2, "game", {"move": "pass"}),
                  joiners[0].table, joiners[0].key)
    assert httpx.post(f"{url}/entries", json=forged).status_code == 401
    host.stop()
    assert results == [0, 0]
    assert host.result is not None and host.result.clean
    logs = [[e["mac"] for e in j.store.envelopes()] for j in joiners]
    assert logs[0] == logs[1] == [e["mac"] for e in host.session.envelopes]
    hands = [set(j.game.device.cards) for j in joiners] + [set(host.session.game.device.cards)]
    assert all(len(h) == 1 for h in hands) and len(set.union(*hands)) == 3
    for joiner in joiners:
        joiner.close()


def test_tampered_replayed_and_cheating_messages_are_refused(tmp_path: Path) -> None:
    port = _free_port()
    host = Host(tmp_path / "host", port, stop_after=10_000)
    joiner = _join(port, tmp_path / "join")
    while not joiner.game.my_turn():  # deal, then wait for the joiner's first turn
        if not joiner.step():
            time.sleep(0.01)
    url = f"http://127.0.0.1:{port}/entries"
    game = joiner.game
    slot = game.device.hands[1][0]
    honest = game.device.reveal(slot)
    env = seal(honest, joiner.table, joiner.key)
    tampered = dict(env, body=dict(env["body"], card=(env["body"]["card"] + 1) % 108))
    assert httpx.post(url, json=tampered).status_code == 401
    assert httpx.post(url, json=dict(env, v=2)).json()["detail"].startswith("protocol version")
    old = joiner.store.envelopes()[3]
    assert httpx.post(url, json=old).status_code == 403  # the host's own entry, replayed
    mine = next(e for e in joiner.store.envelopes() if e["sender"] == 1)
    answer = httpx.post(url, json=mine)
    assert answer.status_code == 409 and "replay" in answer.json()["detail"]
    liar = Entry(honest.index, 1, "reveal", dict(honest.body, card=(honest.body["card"] + 1) % 108))
    with pytest.raises(ProtocolError, match="CheatDetected"):
        joiner.submit(liar)  # a valid MAC, but the card is not the one in that slot
    assert len(host.session.envelopes) == honest.index  # nothing was added
    host.stop_after = 0
    host.stop()
    joiner.close()


def test_a_dropped_connection_and_restarts_on_both_sides_lose_no_card(tmp_path: Path) -> None:
    port = _free_port()
    host = Host(tmp_path / "host", port, stop_after=30)  # a game takes 37 entries at the least
    joiner = _join(port, tmp_path / "join")
    _advance(joiner, 30)
    held = dict(joiner.game.device.cards)
    joiner.close()  # the joiner's process goes away...
    host.stop()  # ...and so does the host's server

    restarted: list[Host] = []

    def come_back() -> None:
        time.sleep(1.0)
        restarted.append(Host(tmp_path / "host", port))

    threading.Thread(target=come_back, daemon=True).start()
    again = _join(port, tmp_path / "join")  # retries until the host listens again
    assert again.game.device.cards == held
    assert _play(again, auto=True) == 0
    restarted[0].stop()
    assert restarted[0].result is not None and restarted[0].result.clean
    assert again.game.report is not None and again.game.report.clean
    again.close()


def test_a_joiner_gives_up_with_a_clear_error_when_nobody_hosts(tmp_path: Path) -> None:
    port = _free_port()
    with pytest.raises(RemoteError, match="lost the host"):
        JoinSession(f"http://127.0.0.1:{port}", "1-x", tmp_path, patience=0.3)


def test_a_wrong_join_code_is_refused(tmp_path: Path) -> None:
    port = _free_port()
    host = Host(tmp_path / "host", port, stop_after=0)
    with pytest.raises(RemoteError, match="wrong join code"):
        JoinSession(f"http://127.0.0.1:{port}", "1-guess", tmp_path / "j", groups=(GROUP,))
    with pytest.raises(ValueError, match="is not a join code"):
        JoinSession(f"http://127.0.0.1:{port}", "family-code", tmp_path / "j1", groups=(GROUP,))
    with pytest.raises(RemoteError, match="no seat 2"):
        JoinSession(f"http://127.0.0.1:{port}", "2-family-code", tmp_path / "j3", groups=(GROUP,))
    with pytest.raises(RemoteError, match="only rfc3526-2048"):
        JoinSession(f"http://127.0.0.1:{port}", "1-family-code", tmp_path / "j2")
    host.stop()


def test_two_cardtable_processes_play_to_the_end(tmp_path: Path) -> None:
    port = _free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    cli = [sys.executable, "-m", "protocol_runner.cli", "remote"]
    host = subprocess.Popen(
        [*cli, "host", "--auto", "--group", GROUP, "--port", str(port), "--code", "c0de",
         "--state-dir", str(tmp_path / "h")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env=env)
    try:
        line = host.stdout.readline() + host.stdout.readline()  # type: ignore[union-attr]
        assert f"cardtable remote join http://127.0.0.1:{port} 1-c0de" in line
        join = subprocess.run(
            [*cli, "join", f"http://127.0.0.1:{port}", "1-c0de", "--auto", "--allow-test-group",
             "--state-dir", str(tmp_path / "j")], capture_output=True, text=True, timeout=120,
            env=env)
        out, _ = host.communicate(timeout=60)
    finally:
        host.kill()
    assert join.returncode == 0, join.stdout + join.stderr
    assert host.returncode == 0, out
    for text in (out, join.stdout):
        assert "winner" in text and "no cheat found" in text
