"""``cardtable render-video SCRIPT OUT``: the table renderer — a scripted game as a camera video.

SCRIPT is an observations file (setup, views, events: what ``cardtable run`` reads). OUT receives
``video.mp4``, ``events.jsonl`` (what ``--record`` would have kept) and ``script.jsonl`` (each
view and the time from which it lies still). ``--simulate SEED`` plays the game on the runner's
simulated table first (it also writes ``game.jsonl``): that is how ``datasets/demo`` was made.
``cardtable replay OUT`` then plays it back through the camera checks.
``--mistake VIEW:COLUMN:ROW:CODE`` plants a table mistake: the VIEW-th view is first shown with
that work cell wrong, then put right.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("render-video", help="render a scripted game as a realistic table video",
                       description=__doc__)
    p.add_argument("script", type=Path, nargs="?", default=None,
                   help="observations file (JSON Lines); or use --simulate")
    p.add_argument("out", type=Path, help="output folder")
    p.add_argument("--simulate", type=int, default=None, metavar="SEED",
                   help="instead of a script, play a game on the runner's simulated table "
                        "(2 humans, 2 virtual players, 2 cards each) with this seed")
    p.add_argument("--fps", type=float, default=10.0, help="frames per second (default 10)")
    p.add_argument("--seed", type=int, default=0, help="hands, light and card jitter")
    p.add_argument("--hold", type=float, default=1.6,
                   help="seconds each view lies still (default 1.6)")
    p.add_argument("--mistake", default=None, metavar="VIEW:COLUMN:ROW:CODE",
                   help="plant a wrong card before the VIEW-th view")
    p.set_defaults(handler=run)


def parse_mistake(text: str) -> tuple[int, int, int, str]:
    parts = text.split(":")
    try:
        view, column, row = (int(x) for x in parts[:3])
        code = parts[3]
    except (ValueError, IndexError):
        raise ValueError(f"--mistake {text!r}: expected VIEW:COLUMN:ROW:CODE, e.g. 4:2:3:2G") \
            from None
    return view, column, row, code


def run(args: argparse.Namespace) -> int:
    from vision.synth.video import load_script, plant_mistake, render_script

    if args.fps <= 0 or args.fps > 60:
        raise ValueError("--fps must be in (0, 60]")
    if (args.script is None) == (args.simulate is None):
        raise ValueError("give either an observations SCRIPT or --simulate SEED")
    if args.simulate is not None:
        from protocol_runner.tablesim import TableSimulator, simulated_setup

        game = TableSimulator(simulated_setup(2, 2, hand_size=2), seed=args.simulate).play()
        records = game.records
        args.out.mkdir(parents=True, exist_ok=True)
        game.write(args.out / "game.jsonl")
        print(f"simulated game: {len(records)} records, {game.virtual_turns} virtual turns, "
              f"winner {game.winner}")
    else:
        records = load_script(args.script)
    if args.mistake:
        view, column, row, code = parse_mistake(args.mistake)
        records = plant_mistake(records, view, column, row, code)
    out = render_script(records, args.out, fps=args.fps, seed=args.seed, hold=args.hold)
    size = (out.folder / "video.mp4").stat().st_size
    print(f"{out.folder / 'video.mp4'}: {out.frames} frames, {out.seconds:.1f} s, "
          f"{out.views} views, {size / 1e6:.1f} MB")
    return 0
