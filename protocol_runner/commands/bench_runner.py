"""``cardtable bench-runner``: the runner's own cost per observation, for a 107-column matrix.

A simulated table (perfect camera, :mod:`protocol_runner.tablesim`) plays a virtual player's
first turn with 2 humans and 2 virtual players of 7 cards: the card selection matrix then holds
every card but the top one, 107 columns. The records are fed again to fresh runners and each
``feed`` is timed (parsing the JSON line is timed apart). Prints median and p95 in ms.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("bench-runner", help="runner overhead per observation (107 columns)",
                       description=__doc__)
    p.add_argument("--repeat", type=int, default=5, help="times the turn is re-fed (default 5)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from protocol_runner.observations import dumps, parse_line
    from protocol_runner.runner import GameRunner
    from protocol_runner.tablesim import TableSimulator, simulated_setup

    if args.repeat < 1:
        raise ValueError("--repeat must be at least 1")
    setup = simulated_setup(2, 2, hand_size=7, start=1)  # V1 moves first: k = 107
    records = TableSimulator(setup, seed=args.seed).play(until_turn=1).records
    lines = [dumps(r) for r in records]
    widest = max(len(getattr(r, "work", ())) for r in records)
    feed_ms: list[float] = []
    wide_ms: list[float] = []
    parse_ms: list[float] = []
    for _ in range(args.repeat):
        runner = GameRunner()
        for line, record in zip(lines, records, strict=True):
            t0 = time.perf_counter()
            parse_line(line)
            t1 = time.perf_counter()
            runner.feed(record)
            t2 = time.perf_counter()
            parse_ms.append((t1 - t0) * 1e3)
            feed_ms.append((t2 - t1) * 1e3)
            if len(getattr(record, "work", ())) == widest:
                wide_ms.append((t2 - t1) * 1e3)

    def stats(values: list[float]) -> dict[str, float]:
        a = np.asarray(values)
        return {"median_ms": round(float(np.median(a)), 4),
                "p95_ms": round(float(np.percentile(a, 95)), 4), "n": int(a.size)}

    result = {"benchmark": "runner", "columns": widest, "records_per_turn": len(records),
              "feed": stats(feed_ms), f"feed_{widest}_columns": stats(wide_ms),
              "parse_json_line": stats(parse_ms)}
    if args.json:
        print(json.dumps(result))
    else:
        f, w, p = result["feed"], result[f"feed_{widest}_columns"], result["parse_json_line"]
        print(f"runner overhead per observation ({len(records)} records of a virtual turn, "
              f"{widest}-column matrix, x{args.repeat}):")
        print(f"  all records:          median {f['median_ms']:.3f} ms, p95 {f['p95_ms']:.3f} ms")
        print(f"  {widest}-column views:     median {w['median_ms']:.3f} ms, "
              f"p95 {w['p95_ms']:.3f} ms (n={w['n']})")
        print(f"  JSON line parsing:    median {p['median_ms']:.3f} ms, p95 {p['p95_ms']:.3f} ms")
    return 0
