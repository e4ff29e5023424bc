"""``cardtable demo``: the bundled recording of a game, replayed on the dashboard in real time.

No arguments and nothing to download: the recording (``datasets/demo/``) was made by the table
renderer (``cardtable render-video``) from a scripted game, and goes through the same camera
checks as a live table. The URL is printed; the page shows the game until its end.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from protocol_runner.commands.serve import run_dashboard

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="replay the bundled demo game on the dashboard",
                       description=__doc__)
    p.add_argument("--port", type=int, default=8000, help="dashboard port (default 8000; the "
                   "next free one is taken if it is busy)")
    p.add_argument("--fast", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--exit", action="store_true", help="stop when the recording ends")
    p.set_defaults(handler=run, lan=False, journal=None, record=None)


def run(args: argparse.Namespace) -> int:
    from protocol_runner.pipeline import Pipeline, open_recording
    from protocol_runner.server import PortInUseError, bind_socket

    if not (DEMO / "video.mp4").is_file():
        raise FileNotFoundError(f"the demo recording is missing from {DEMO}: reinstall cardtable "
                                "from its source tree (pip install -e .)")
    for port in range(args.port, args.port + 20):
        try:
            bind_socket("127.0.0.1", port).close()
        except PortInUseError:
            continue
        args.port = port
        break
    def build() -> Pipeline:
        pipeline = open_recording(DEMO, speed=None if args.fast else 1.0)
        pipeline.mode = "demo"
        return pipeline

    return run_dashboard(build, args, exit_at_end=args.exit)
