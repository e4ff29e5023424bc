"""``cardtable serve`` on a live camera, end to end: the demo's recorded table served as a real
MJPEG stream over HTTP (what a phone's camera app serves), read by ``serve --camera URL`` in a
process of its own, its journal written from the camera's thread.

Until the seventy-sixth session the journal, opened by the thread that set the game up, refused
the camera's thread: ``serve --setup`` stopped at the first view it committed, and the page
said nothing of it."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.commands.demo import DEMO
from vision.stream_age import Camera

MODEL = Path(__file__).resolve().parents[1] / "models" / "card_classifier.onnx"
pytestmark = pytest.mark.skipif(not MODEL.is_file(), reason="no trained card classifier")


def _demo_frames(seconds: float) -> list[np.ndarray]:
    cap = cv2.VideoCapture(str(DEMO / "video.mp4"))
    fps = cap.get(cv2.CAP_PROP_FPS) or 5.0
    frames = []
    while len(frames) < seconds * fps and (read := cap.read())[0]:
        frames.append(read[1])
    cap.release()
    return frames


def _state(url: str) -> dict:
    with urllib.request.urlopen(url + "api/state", timeout=10) as answer:
        return json.load(answer)


def _ctrl_c_as_in_a_terminal() -> None:
    """Run in the server's process before it starts: Ctrl-C's default disposition. WHY: a shell
    that starts a job in the background without job control (``cmd &`` in a script, as some CI
    wrappers do) starts it with SIGINT ignored, and its children inherit that; the server then
    stops on SIGINT (uvicorn catches it) but cannot exit with Ctrl-C's code."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_serve_reads_a_live_stream_and_journals_from_the_camera_thread(tmp_path: Path) -> None:
    frames = _demo_frames(12.0)
    journal = tmp_path / "game.sqlite"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with Camera(fps=5.0, picture=lambda k: frames[min(k, len(frames) - 1)]) as camera:
        server = subprocess.Popen(
            [sys.executable, "-m", "protocol_runner.cli", "serve", "--camera", camera.url,
             "--port", "0", "--setup", str(DEMO / "game.jsonl"), "--journal", str(journal)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
            preexec_fn=_ctrl_c_as_in_a_terminal)
        try:
            url = None
            for line in server.stdout:  # type: ignore[union-attr]
                if found := re.search(r"(http://127\.0\.0\.1:\d+/)", line):
                    url = found.group(1)
                    break
            assert url, "serve printed no URL"
            deadline, state = time.monotonic() + 90, {}
            while time.monotonic() < deadline:
                state = _state(url)
                texts = [v.get("text", "") for v in state["timeline"]]
                if "H1 played +4" in texts or state["status"]["error"]:
                    break
                time.sleep(0.5)
            assert state["status"]["error"] is None, state["status"]["error"]
            assert state["status"]["mode"] == "live" and state["status"]["camera"]
            assert {"first card 1B", "H1 played +4"} <= set(texts), texts
            seen = state["status"]["frame"]
            time.sleep(1.5)
            assert _state(url)["status"]["frame"] > seen, "the camera is still read"
        finally:
            server.send_signal(signal.SIGINT)
            out = server.communicate(timeout=30)[0]
    assert server.returncode == 130, out  # Ctrl-C's code, after the summary
    assert "steps ✓" in out and "Traceback" not in out, out
    with sqlite3.connect(journal) as db:
        kinds = dict(db.execute("SELECT kind, count(*) FROM entries GROUP BY kind").fetchall())
    assert kinds.get("setup") == 1 and kinds.get("view", 0) >= 2, kinds
