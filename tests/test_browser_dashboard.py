"""The dashboard in a real browser (Debian's chromium, headless, driven by Playwright): it loads
during a replay, shows the instruction, takes "shuffle done", corrects a card, survives a server
restart. Screenshots go to test-artifacts/ (gitignored) for a human to look at."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol_runner.observations import Event
from protocol_runner.pipeline import Pipeline, make_game, records_timeline
from protocol_runner.server import Hub, bind_socket, create_app, serve_in_thread

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium")


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated game's records up to (not including) the first "shuffle done": the replay
    ends inside a blind window, so the test's own click is the one that ends it."""
    from protocol_runner.tablesim import TableSimulator, simulated_setup

    game = TableSimulator(simulated_setup(2, 2, hand_size=2), seed=0).play()
    records = game.records
    first = next(i for i, r in enumerate(records)
                 if isinstance(r, Event) and r.event == "shuffle_done")
    path = tmp_path_factory.mktemp("browser") / "until-shuffle.jsonl"
    from protocol_runner.pipeline import dump_records

    path.write_text(dump_records(records[:first]))
    return path


def start(script: Path, port: int = 0) -> tuple[Pipeline, object, int]:
    hub = Hub()
    pipeline = Pipeline(records_timeline(script, interval=0.15), make_game(None),
                        source=script.name, speed=1.0, publish=hub.publish)
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


def test_dashboard_replay_shuffle_done_and_correction(script: Path, browser: object) -> None:
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
        assert "shuffle done" in (page.text_content("#verdict") or "")
        page.screenshot(path=str(ARTIFACTS / "dashboard-3-after-shuffle.png"))

        # correct a card: click the first cell the camera (here: the script) read
        page.click("#reading rect >> nth=0")
        page.wait_for_selector("#correct-dialog[open]")
        page.fill("#correct-code", "8X")
        page.click("#correct-ok")
        page.wait_for_function("document.getElementById('correct-error').textContent"
                               ".includes('unknown card code')")
        page.screenshot(path=str(ARTIFACTS / "dashboard-4-bad-code.png"))
        page.fill("#correct-code", "7r")
        page.click("#correct-ok")
        page.wait_for_selector("#correct-dialog:not([open])", state="attached")
        page.wait_for_function("document.getElementById('verdict').textContent.length > 3")
        page.screenshot(path=str(ARTIFACTS / "dashboard-5-corrected.png"))
        timeline = page.text_content("#timeline") or ""
        assert "shuffle done" in timeline
        # the runner saw the correction: a 7R where a face-down card was expected is a deviation
        assert pipeline.last_verdict is not None and pipeline.last_verdict["ok"] is False
        assert "after the correction" in (page.text_content("#verdict") or "")
        assert page.get_attribute("#reading rect >> nth=0", "data-code") == "7R"

        # a second tab shows the same state
        other = browser.new_page()  # type: ignore[attr-defined]
        other.goto(f"http://127.0.0.1:{port}/")
        other.wait_for_function(
            "document.getElementById('verdict').textContent.includes('after the correction')")
        other.close()
        assert not errors, errors
    finally:
        pipeline.stop()
        server.should_exit = True  # type: ignore[attr-defined]


def test_page_reconnects_after_a_server_restart(script: Path, browser: object) -> None:
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
        page.screenshot(path=str(ARTIFACTS / "dashboard-6-reconnected.png"))
    finally:
        pipeline2.stop()
        server2.should_exit = True  # type: ignore[attr-defined]


def teardown_module() -> None:
    shutil.rmtree(ARTIFACTS / "tmp", ignore_errors=True)
