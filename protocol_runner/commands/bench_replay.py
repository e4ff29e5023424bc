"""``cardtable bench-replay``: how fast the main job runs, in figures anyone can rerun.

1. The demo recording (or any recording) replayed as fast as possible: video seconds per wall
   second (must be > 1 on this 2-core CPU for a live table to keep up).
2. Real time with the dashboard served and a WebSocket client attached, as a browser would be:
   the time from reading the frame on which a view was committed to the new instruction
   arriving at the client (target < 300 ms), and from the moment the rendered video shows the
   view lying still (``script.jsonl``) to the same arrival, which includes the tracker's wait for
   a stable picture.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("bench-replay", help="benchmark: replay speed and reveal→page latency",
                       description=__doc__)
    p.add_argument("recording", type=Path, nargs="?", default=None,
                   help="recording folder (default: the bundled demo)")
    p.add_argument("--seconds", type=float, default=60.0,
                   help="video seconds of the real-time latency part (default 60)")
    p.set_defaults(handler=run)


def _figures(values: list[float]) -> str:
    if not values:
        return "no samples"
    ms = sorted(v * 1000 for v in values)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return (f"median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, max {ms[-1]:.0f} ms "
            f"({len(ms)} reveals)")


def run(args: argparse.Namespace) -> int:
    from protocol_runner.commands.demo import DEMO
    from protocol_runner.pipeline import open_recording, video_fps

    folder = args.recording or DEMO
    fps = video_fps(folder / "video.mp4")

    pipeline = open_recording(folder, speed=None)
    start = time.perf_counter()
    pipeline.run()
    wall = time.perf_counter() - start
    video_s = pipeline.frames_seen / fps
    print(f"full speed: {pipeline.frames_seen} frames = {video_s:.1f} s of video in {wall:.1f} s "
          f"wall: {video_s / wall:.2f}× real time, {pipeline.frames_seen / wall:.1f} frames/s "
          f"({pipeline.frames_processed} recognised, {pipeline.frames_dropped} dropped in blind "
          f"windows)")
    print(f"  {pipeline.summary()}")
    arrivals, commits, started, lag_max = _real_time(folder, args.seconds)
    frame_lat = []
    for _, read_at, version in commits:
        later = [a for a, v in arrivals if v >= version]
        if later:
            frame_lat.append(later[0] - read_at)
    print(f"real time, {args.seconds:.0f} s of video (every frame read; at most {lag_max:.1f} s "
          f"behind the video's clock):")
    print(f"  frame on which a view is committed (read from the video) → the runner's answer "
          f"at the page's WebSocket: {_figures(frame_lat)}")
    script = folder / "script.jsonl"
    if script.is_file():
        still = [json.loads(line)["t"] for line in script.read_text().splitlines()]
        still = [t for t in still if t <= args.seconds]
        lat = []
        for k, ts in enumerate(still):
            until = still[k + 1] if k + 1 < len(still) else float("inf")
            commit = next((c for c in commits if ts - 1e-6 <= c[0] < until), None)
            if commit is None:
                continue  # never committed (misread): no latency to speak of
            later = [a for a, v in arrivals if v >= commit[2]]
            if later:
                lat.append(later[0] - (started + ts))
        print(f"  first frame on which the view lies still (hand gone) → the page: "
              f"{_figures(lat)} (includes the tracker's wait for a stable picture)")
    return 0


def _real_time(folder: Path, seconds: float
               ) -> tuple[list[tuple[float, int]], list[tuple[float, float, int]], float, float]:
    """Serve the dashboard, attach a WebSocket client, replay ``seconds`` in real time."""
    from websockets.sync.client import connect

    from protocol_runner.pipeline import open_recording
    from protocol_runner.server import Hub, bind_socket, create_app, serve_in_thread

    pipeline = open_recording(folder, speed=1.0)
    hub = Hub()
    pipeline.publish = hub.publish
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = serve_in_thread(create_app(pipeline, hub), sock)
    arrivals: list[tuple[float, int]] = []
    done = threading.Event()

    def client() -> None:
        with connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
            ready.set()
            while not done.is_set():
                try:
                    message = ws.recv(timeout=0.5)
                except TimeoutError:
                    continue
                if isinstance(message, str):
                    arrivals.append((time.perf_counter(), json.loads(message)["state"]["version"]))

    ready = threading.Event()
    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    ready.wait(10)
    pipeline.start()
    pipeline.join(timeout=seconds)
    pipeline.stop()
    done.set()
    thread.join(5)
    server.should_exit = True
    return arrivals, list(pipeline.commits), pipeline.started_at, pipeline.lag_max
