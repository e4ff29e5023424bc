"""``cardtable replay VIDEO [--fast]``: a recorded table through the same checks and dashboard.

VIDEO is a recording folder (``video.mp4`` + ``events.jsonl``, as ``--record`` or
``cardtable render-video`` write them), a video file (its events from ``--events`` or an
``events.jsonl`` beside it), or an observations file (``.jsonl``: no camera, the records as they
are). ``--fast`` runs as fast as the CPU allows instead of in real time.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from protocol_runner.commands.serve import add_server_options, run_dashboard


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="replay a recording (video + events) on the dashboard",
                       description=__doc__)
    p.add_argument("video", type=Path, help="recording folder, video file or observations file")
    p.add_argument("--events", type=Path, default=None,
                   help="the recording's events.jsonl (default: beside the video)")
    p.add_argument("--fast", action="store_true", help="as fast as possible, not in real time")
    p.add_argument("--exit", action="store_true",
                   help="stop serving when the replay ends (default: keep the page up)")
    add_server_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from protocol_runner.pipeline import Pipeline, open_recording

    def build() -> Pipeline:
        return open_recording(args.video, events=args.events,
                              speed=None if args.fast else 1.0, journal=args.journal,
                              record=args.record, profile=args.profile)

    return run_dashboard(build, args, exit_at_end=args.exit)
