"""The dashboard in a real browser (Debian's chromium, headless, driven by Playwright): it loads
during a replay, shows the instruction, takes "shuffle done", corrects a card, survives a server
restart. Screenshots go to test-artifacts/ (gitignored) for a human to look at."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from protocol_runner.observations import Event, Record
from protocol_runner.pipeline import Pipeline, RecordItem, make_game
from protocol_runner.server import Hub, bind_socket, create_app, serve_in_thread

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium")


@dataclass
class Script:
    """A simulated game with a planted misread at step 5, cut where the browser takes over:
    the table waits for the operator's "shuffle done", and the replay ends on the misread
    view (a deviation) so the browser's correction is the one that resolves it."""

    records: list[Record]
    misread: tuple[str, int, int]
    truth: str


@pytest.fixture(scope="module")
def script() -> Script:
    from protocol_runner.runner import Session
    from protocol_runner.tablesim import TableSimulator, simulated_setup

    game = TableSimulator(simulated_setup(2, 2, hand_size=2), seed=0,
                          faults=["step5_misread"]).play()
    session = Session()
    for n, record in enumerate(game.records):
        verdict = session.feed(record)[0]
        if verdict.kind == "deviation":
            fix = game.records[n + 1]
            assert isinstance(fix, Event) and fix.event == "card_corrected"
            return Script(game.records[:n + 1], (fix.zone or "", fix.column or 0,
                                                 fix.row or 0), fix.code or "")
    raise AssertionError("the planted misread did not show")


def operator_paced(records: list[Record], holder: list[Pipeline]) -> Iterator[RecordItem]:
    """The records, 0.15 s apart; at a "shuffle done" the table waits for the operator."""
    t = 0.0
    for record in records:
        if isinstance(record, Event) and record.event == "shuffle_done":
            while holder[0].blind:
                time.sleep(0.05)
            continue
        yield RecordItem(record, t)
        t += 0.15


def start(script: Script, port: int = 0) -> tuple[Pipeline, object, int]:
    hub = Hub()
    holder: list[Pipeline] = []
    pipeline = Pipeline(operator_paced(script.records, holder), make_game(None),
                        source="planted-misread.jsonl", speed=1.0, publish=hub.publish)
    holder.append(pipeline)
    sock = bind_socket("127.0.0.1", port)
    server = serve_in_thread(create_app(pipeline, hub), sock)
    pipeline.start()
    return pipeline, server, sock.getsockname()[1]


@pytest.fixture
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run"])
        yield b
        b.close()


def test_dashboard_replay_shuffle_done_and_correction(script: Script, browser: object) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pipeline, server, port = start(script)
    errors: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 950})  # type: ignore[attr-defined]
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{port}/")
        # an instruction while the replay runs
        page.wait_for_function("document.getElementById('instruction').textContent.length > 10")
        page.screenshot(path=str(ARTIFACTS / "dashboard-1-replay.png"))
        # the replay stops inside a blind window: the panel is blank, the button is live
        page.wait_for_selector("#btn-shuffle:not([disabled])", timeout=20_000)
        assert page.is_visible("#blind")
        blind_text = page.text_content("#instruction") or ""
        assert "shuffle" in blind_text.lower() or "scramble" in blind_text.lower()
        page.screenshot(path=str(ARTIFACTS / "dashboard-2-blind.png"))
        page.click("#btn-shuffle")
        page.wait_for_selector("#btn-shuffle[disabled]")
        assert not page.is_visible("#blind")
        page.wait_for_function(f"document.getElementById('instruction').textContent !== "
                               f"{blind_text!r}")
        page.wait_for_function("document.getElementById('timeline').textContent"
                               ".includes('shuffle done')")
        page.screenshot(path=str(ARTIFACTS / "dashboard-3-after-shuffle.png"))

        # the replay ends on a misread card: the deviation names it
        page.wait_for_selector("#verdict.bad", timeout=20_000)
        assert "9Y" in (page.text_content("#verdict") or "")
        page.screenshot(path=str(ARTIFACTS / "dashboard-4-deviation.png"))
        zone, column, row = script.misread
        cell = f"#reading rect[data-zone={zone}][data-column='{column}'][data-row='{row}']"
        assert page.get_attribute(cell, "data-code") == "9Y"
        page.click(cell)
        page.wait_for_selector("#correct-dialog[open]")
        page.fill("#correct-code", "8X")
        page.click("#correct-ok")
        page.wait_for_function("document.getElementById('correct-error').textContent"
                               ".includes('unknown card code')")
        page.screenshot(path=str(ARTIFACTS / "dashboard-5-bad-code.png"))
        page.fill("#correct-code", script.truth.lower())
        page.click("#correct-ok")
        page.wait_for_selector("#correct-dialog:not([open])", state="attached")
        page.wait_for_selector("#verdict.ok")
        assert "after the correction" in (page.text_content("#verdict") or "")
        assert page.get_attribute(cell, "data-code") == script.truth
        page.screenshot(path=str(ARTIFACTS / "dashboard-6-corrected.png"))
        timeline = page.text_content("#timeline") or ""
        assert "shuffle done" in timeline and "9Y" in timeline
        assert pipeline.last_verdict is not None and pipeline.last_verdict["ok"] is True

        # a second tab shows the same state
        other = browser.new_page()  # type: ignore[attr-defined]
        other.goto(f"http://127.0.0.1:{port}/")
        other.wait_for_function(
            "document.getElementById('verdict').textContent.includes('after the correction')")
        assert other.text_content("#instruction") == page.text_content("#instruction")
        other.close()
        assert not errors, errors
    finally:
        pipeline.stop()
        server.should_exit = True  # type: ignore[attr-defined]


def test_page_reconnects_after_a_server_restart(script: Script, browser: object) -> None:
    pipeline, server, port = start(script)
    page = browser.new_page()  # type: ignore[attr-defined]
    page.goto(f"http://127.0.0.1:{port}/")
    page.wait_for_selector("#conn.up")
    pipeline.stop()
    server.should_exit = True  # type: ignore[attr-defined]
    page.wait_for_selector("#conn.down", timeout=10_000)
    import time

    for _ in range(50):  # the old server needs a moment to let go of the port
        try:
            pipeline2, server2, _ = start(script, port)
            break
        except OSError:
            time.sleep(0.1)
    else:
        pytest.fail("could not restart on the same port")
    try:
        page.wait_for_selector("#conn.up", timeout=15_000)
        page.wait_for_function("document.getElementById('instruction').textContent.length > 10")
        page.screenshot(path=str(ARTIFACTS / "dashboard-7-reconnected.png"))
    finally:
        pipeline2.stop()
        server2.should_exit = True  # type: ignore[attr-defined]


def test_a_replay_behind_the_video_says_so(browser: object) -> None:
    """The bundled demo paced at 20 times real time (no CPU keeps up): every frame is read
    late, and the page says how far behind the video it is rather than dropping frames."""
    from protocol_runner.commands.demo import DEMO
    from protocol_runner.pipeline import open_recording

    hub = Hub()
    pipeline = open_recording(DEMO, speed=20.0)
    pipeline.publish = hub.publish
    sock = bind_socket("127.0.0.1", 0)
    server = serve_in_thread(create_app(pipeline, hub), sock)
    pipeline.start()
    try:
        page = browser.new_page()  # type: ignore[attr-defined]
        page.goto(f"http://127.0.0.1:{sock.getsockname()[1]}/")
        page.wait_for_function("/frame \\d+ · \\d+\\.\\d s behind the video/"
                               ".test(document.getElementById('frame-info').textContent)",
                               timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "dashboard-8-behind.png"))
    finally:
        pipeline.stop()
        server.should_exit = True  # type: ignore[attr-defined]
