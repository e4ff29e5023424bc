"""``cardtable serve --camera 0``: the live table — camera → vision → runner → dashboard.

The other dashboard commands (``replay``, ``demo``) start the same way and share
:func:`add_server_options` and :func:`run_dashboard`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def add_server_options(parser: argparse.ArgumentParser, default_port: int = 8000) -> None:
    parser.add_argument("--port", type=int, default=default_port,
                        help=f"dashboard port (default {default_port})")
    parser.add_argument("--lan", action="store_true",
                        help="serve the local network too (then an access token is required; "
                             "the URL printed carries it)")
    parser.add_argument("--journal", type=Path, default=None,
                        help="SQLite journal of the game (serve's default: a new file under "
                             "~/.cache/cardtable/; replay: none)")
    parser.add_argument("--record", type=Path, default=None, metavar="DIR",
                        help="keep the video (never a blind-window frame) and the events in DIR, "
                             "to replay later")
    parser.add_argument("--profile", type=Path, default=None,
                        help="your own deck, enrolled on the mat by `cardtable enrol --mat`: "
                             "the table is read as that deck prints its cards")


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="live table: camera → checks → dashboard in the browser",
                       description=__doc__)
    p.add_argument("--camera", default="0",
                   help="camera index (0), stream URL, video file or folder of images")
    p.add_argument("--setup", type=Path, default=None,
                   help="an observations file whose first line is the game's setup record "
                        "(else set the game up from the page)")
    add_server_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from protocol_runner.observations import Setup, read_records
    from protocol_runner.pipeline import (
        Pipeline,
        Recorder,
        deck_label,
        default_journal,
        live_timeline,
        make_game,
        vision_stage,
    )
    from vision.sources import open_source

    setup = None
    if args.setup is not None:
        setup = next((r for _, r in read_records(args.setup) if isinstance(r, Setup)), None)
        if setup is None:
            raise ValueError(f"{args.setup} holds no setup record")

    def build() -> Pipeline:
        holder: list[Pipeline] = []

        def report(message: str) -> None:  # camera lost / back: shown on the page
            if holder:
                holder[0].notice(message)

        frames = first_frame_checked(open_source(args.camera, on_event=report))
        journal = args.journal or default_journal()
        recorder = Recorder(args.record, fps=10.0) if args.record else None
        pipeline = Pipeline(live_timeline(frames), make_game(journal),
                            vision=vision_stage(args.profile), mode="live",
                            source=f"camera {args.camera}" + deck_label(args.profile),
                            speed=None, recorder=recorder)
        holder.append(pipeline)
        print(f"journal: {journal}", flush=True)
        return pipeline

    return run_dashboard(build, args, initial=setup)


def first_frame_checked(frames: Iterator[Any]) -> Iterator[Any]:
    """Read the first frame now, so that a missing camera or an unreadable source is a clear
    error before the dashboard starts, not a message on a page nobody has opened yet."""
    try:
        import cv2

        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    except AttributeError:  # an OpenCV build without the logging utilities
        pass
    try:
        first = next(frames)
    except StopIteration:
        raise OSError("the camera source gave no frame at all") from None

    from vision.sources import close_source

    def then_the_rest() -> Iterator[Any]:  # closing it closes the source
        try:
            yield first
            yield from frames
        finally:
            close_source(frames)

    return then_the_rest()


def run_dashboard(build: Callable[[], Any], args: argparse.Namespace, initial: Any = None,
                  exit_at_end: bool = False) -> int:
    """Bind the port first (a taken port is a clear error before any camera opens), build and
    start the pipeline, print the URL, serve until Ctrl-C."""
    import threading

    from protocol_runner.server import Hub, Listen, bind_socket, create_app, make_server

    listen = Listen.choose(args.lan, args.port)
    sock = bind_socket(listen.host, listen.port)
    port = sock.getsockname()[1]
    try:
        pipeline = build()
    except BaseException:
        sock.close()
        raise
    hub = Hub()
    pipeline.publish = hub.publish
    if initial is not None:
        pipeline.feed_record(initial)
    server = make_server(create_app(pipeline, hub, listen.token))
    print(f"cardtable dashboard: {listen.url(port)}", flush=True)
    if listen.token:
        print("  (shared on the local network; the token in the URL is required)", flush=True)
    print("  press Ctrl-C to stop", file=sys.stderr, flush=True)
    pipeline.start()
    if exit_at_end:
        def stop_when_done() -> None:
            pipeline.join()
            server.should_exit = True

        threading.Thread(target=stop_when_done, daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        pipeline.stop()
        print(pipeline.summary(), flush=True)
    return 0
