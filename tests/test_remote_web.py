"""The local page of a remote game: endpoints and WebSocket (TestClient), then a real browser.

Two peers share one process (:func:`local_uno_sessions`, the small test group: the property under
test is the page, not the prime's size); the page belongs to one of them.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from protocol_runner.cards import Card
from protocol_runner.remote.local import LocalSession, local_uno_sessions
from protocol_runner.remote.scheme import small_group
from protocol_runner.remote.uno_remote import DECK
from protocol_runner.remote.web import RemotePage

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def _table_at_first_turn() -> tuple[LocalSession, LocalSession]:
    """(mover, other) once the deal is done and the mover still holds its 7 cards."""
    for _ in range(20):
        sessions = local_uno_sessions(small_group(), 2)
        while sessions[0].step():
            pass
        mover = next(s for s in sessions if s.game.my_turn())
        if len(mover.game.device.hand(DECK)) == 7:
            return mover, sessions[1 - mover.game.device.index]
    raise AssertionError("no table where the first player keeps 7 cards")


@pytest.fixture()
def table() -> tuple[LocalSession, LocalSession]:
    return _table_at_first_turn()


def _headers(page: RemotePage) -> dict[str, str]:
    return {"X-Cardtable-Token": page.token}


def test_the_state_shows_the_own_hand_and_the_public_game_and_needs_the_token(
        table: tuple[LocalSession, LocalSession]) -> None:
    mover, other = table
    page = RemotePage(mover)
    client = TestClient(page.app())
    assert client.get("/api/state").status_code == 401
    assert client.get("/api/state", params={"token": "wrong"}).status_code == 401
    state = client.get("/api/state", headers=_headers(page)).json()
    assert [c["card"] for c in state["hand"]] == [c for _, c in mover.game.device.hand(DECK)]
    assert not {c["slot"] for c in state["hand"]} & {s for s, _ in other.game.device.hand(DECK)}
    assert state["my_turn"] and state["me_name"] == f"player {mover.game.device.index + 1}"
    assert [p["hand_size"] for p in state["game"]["players"]] == [7, 7]
    assert state["game"]["top"] == mover.game.state.top.code
    assert client.get("/").status_code == 200 and "remote.js" in client.get("/").text
    assert client.get("/static/remote.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200  # the dashboard's look, reused


def _bad_moves(mover: LocalSession) -> list[tuple[object, int, str]]:
    state = mover.game.state
    hand = mover.game.device.hand(DECK)
    cases: list[tuple[object, int, str]] = [
        ([1, 2], 400, "send"),
        ({"move": "fold"}, 400, "send"),
        ({"move": "play"}, 400, "which card"),
        ({"move": "play", "slot": "3"}, 400, "which card"),
        ({"move": "play", "slot": 99999}, 400, "no card in slot 99999"),
        ({"move": "play", "slot": hand[0][0], "colour": "purple"}, 400, "colour must be"),
        ({"move": "pass"}, 422, "not allowed: .*only after drawing"),
    ]
    bad = [s for s, c in hand if not state.playable(Card(c))]
    if bad:
        cases.append(({"move": "play", "slot": bad[0]}, 422, "not allowed: .*cannot be played"))
    return cases


def test_bad_moves_get_a_clear_message_and_change_nothing(
        table: tuple[LocalSession, LocalSession]) -> None:
    mover, other = table
    mine, theirs = RemotePage(mover), RemotePage(other)
    log = len(mover.game.device.log)
    for body, status, message in _bad_moves(mover):
        answer = TestClient(mine.app()).post("/api/move", json=body, headers=_headers(mine))
        assert answer.status_code == status, body
        assert re.search(message, answer.json()["detail"]), answer.json()
    client = TestClient(theirs.app())
    answer = client.post("/api/move", json={"move": "draw"}, headers=_headers(theirs))
    assert answer.status_code == 409
    whose = f"player {mover.game.device.index + 1}"
    assert answer.json()["detail"] == f"it is {whose}'s turn, not yours"
    assert client.post("/api/move", json={"move": "draw"}).status_code == 401
    assert client.post("/api/move", content=b"{", headers=_headers(theirs)).status_code == 400
    assert len(mover.game.device.log) == len(other.game.device.log) == log
    assert len(mover.game.device.hand(DECK)) == 7


def test_a_move_goes_through_and_is_pushed_over_the_websocket(
        table: tuple[LocalSession, LocalSession]) -> None:
    mover, other = table
    page = RemotePage(mover)
    client = TestClient(page.app())
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws") as ws:
        ws.receive_text()
    assert refused.value.code == 4401
    with client.websocket_connect(f"/ws?token={page.token}") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["state"]["my_turn"]
        answer = client.post("/api/move", json={"move": "draw"}, headers=_headers(page))
        assert answer.status_code == 200 and answer.json()["state"]["game"]["drawn"]
        pushed = ws.receive_json()["state"]
        assert pushed["version"] > first["state"]["version"] and pushed["game"]["drawn"]
    assert other.game.state.drawn  # the other peer applied the very same entry
    while mover.step():  # the duty: the drawn card arrives
        pass
    page.refresh()
    state = client.get("/api/state", headers=_headers(page)).json()
    assert len(state["hand"]) == 8 and state["game"]["players"][mover.game.device.index][
        "hand_size"] == 8


# ----- a real browser ------------------------------------------------------------------------
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


@pytest.fixture()
def served(table: tuple[LocalSession, LocalSession]) -> Iterator[tuple[RemotePage, LocalSession]]:
    """The mover's page on a real port, and a thread doing the devices' duties (what the play
    loop of ``cardtable remote`` does)."""
    mover, other = table
    page = RemotePage(mover)
    page.serve(0)
    stop = threading.Event()

    def duties() -> None:
        while not stop.is_set():
            if not mover.step():
                page.acted.wait(0.05)
                page.acted.clear()

    thread = threading.Thread(target=duties, daemon=True)
    thread.start()
    yield page, other
    stop.set()
    thread.join(timeout=5)
    page.stop()


def _wait(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _settled(session: LocalSession) -> bool:
    """No pass nor duty outstanding: whose turn it is will not change by itself."""
    with session.lock:
        return session.game.device.op is None and session.game.duty() is None


def _serves_again(page: RemotePage, port: int) -> bool:
    try:
        page.serve(port)
    except OSError:  # the old server is still letting go of the port
        return False
    return True


def test_the_page_shows_the_hand_and_a_click_plays_a_card_the_other_peer_sees(
        served: tuple[RemotePage, LocalSession]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    page_server, other = served
    me = page_server.session.game
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1200, "height": 720})
            tab.goto(page_server.url())
            cards = tab.locator("[data-testid=card]")
            sync_api.expect(cards).to_have_count(7)
            sync_api.expect(tab.locator("#conn")).to_have_text("live")
            assert cards.evaluate_all("ts => ts.map(t => t.dataset.card)") == [
                c for _, c in me.device.hand(DECK)]
            sync_api.expect(tab.get_by_test_id("turn")).to_have_text("your turn")
            sync_api.expect(tab.get_by_test_id("players")).to_contain_text("7 cards")
            ARTIFACTS.mkdir(exist_ok=True)
            tab.screenshot(path=str(ARTIFACTS / "remote-page-hand.png"), full_page=True)

            # the process behind the page goes away and comes back: the page reconnects by itself
            port = page_server.port
            page_server.stop()
            sync_api.expect(tab.locator("#conn")).to_have_text("reconnecting…")
            _wait(lambda: _serves_again(page_server, port), "the page server to come back")
            sync_api.expect(tab.locator("#conn")).to_have_text("live", timeout=10_000)
            sync_api.expect(cards).to_have_count(7)

            unplayable = tab.locator("[data-testid=card]:not(.playable)")
            if unplayable.count():
                unplayable.first.click()
                sync_api.expect(tab.get_by_test_id("message")).to_contain_text("cannot be played")
                sync_api.expect(cards).to_have_count(7)  # nothing lost

            played = None
            for _ in range(20):
                playable = tab.locator("[data-testid=card].playable")
                if playable.count():
                    tile = playable.last
                    played = tile.get_attribute("data-card")
                    tile.click()
                    if played in ("W", "+4"):
                        tab.locator("button.colour.G").click()
                    break
                if not me.state.drawn:
                    tab.get_by_test_id("draw").click()
                    _wait(lambda: _settled(page_server.session) and me.state.drawn
                          and len(me.device.hand(DECK)) == cards.count(), "the drawn card")
                    continue
                tab.get_by_test_id("pass").click()
                _wait(lambda: not me.my_turn(), "the pass")
                deadline = time.monotonic() + 10
                while not me.my_turn():  # the other peer answers with simple moves
                    assert time.monotonic() < deadline, "my turn never came back"
                    with page_server.session.lock:
                        if _settled(other) and other.game.my_turn():
                            other.submit(other.game.choose())
                    time.sleep(0.02)
            assert played is not None, "no card could be played"
            _wait(lambda: other.game.state.top.code == played, f"the other peer seeing {played}")
            sync_api.expect(tab.get_by_test_id("top")).to_have_text(played)
            _wait(lambda: _settled(page_server.session), "the duties after the play")
            if not me.my_turn():
                # out of turn even a black card is sent as it is (no colour asked): refused
                tab.locator("[data-testid=card]").first.click()
                sync_api.expect(tab.locator("#colour-choice")).to_be_hidden()
                sync_api.expect(tab.get_by_test_id("message")).to_contain_text(
                    "turn, not yours")
            tab.screenshot(path=str(ARTIFACTS / "remote-page.png"), full_page=True)
        finally:
            browser.close()


# ----- two processes' worth over loopback HTTP: the joiner plays a whole game from its page -----
def test_a_joiner_plays_a_whole_game_from_its_page_over_http(tmp_path: Path) -> None:
    import httpx

    from protocol_runner.commands.remote import _play
    from protocol_runner.remote.transport import HostSession, JoinSession

    host = HostSession(tmp_path / "host", group="test-256", code="family", players=2)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    host.serve(port)
    host_done = threading.Thread(target=_play, args=(host, True), daemon=True)
    host_done.start()
    joiner = JoinSession(f"http://127.0.0.1:{port}", "1-family", tmp_path / "join",
                         groups=("test-256",), patience=20)
    page = RemotePage(joiner)
    page.serve(0)
    results: list[int] = []
    loop = threading.Thread(target=lambda: results.append(_play(joiner, False, page)),
                            daemon=True)
    loop.start()
    headers, moves = {"X-Cardtable-Token": page.token}, 0
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{page.port}", headers=headers) as client:
            deadline = time.monotonic() + 60
            while (state := client.get("/api/state").json())["phase"] != "done":
                assert time.monotonic() < deadline, "the game did not end"
                if not state["my_turn"]:
                    time.sleep(0.02)
                    continue
                playable = [c for c in state["hand"] if c["playable"]]
                if playable:
                    card = playable[0]
                    body = {"move": "play", "slot": card["slot"],
                            "colour": "G" if card["card"] in ("W", "+4") else None}
                else:
                    body = {"move": "pass" if state["game"]["drawn"] else "draw"}
                answer = client.post("/api/move", json=body)
                assert answer.status_code == 200, answer.json()
                moves += 1
            loop.join(timeout=20)
            assert results == [0] and moves > 0
            assert state["audit"]["clean"] and state["game"]["winner"]
            late = client.post("/api/move", json={"move": "draw"})
            assert late.status_code == 409 and "done" in late.json()["detail"]
        host_done.join(timeout=20)
        assert host.game.report is not None and host.game.report.clean
        assert [e["mac"] for e in host.envelopes] == [e["mac"] for e in joiner.store.envelopes()]
    finally:
        page.stop()
        joiner.close()
        host.stop()
