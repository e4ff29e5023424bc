"""``cardtable audit TRANSCRIPT``: re-check a game's transcript, no camera needed.

Every recorded input is fed to a fresh runner; every answer (instruction, verdict) must equal
the recorded one. Exit code 0: the same verdicts; 1: the differences are listed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("audit", help="re-check an exported transcript (same verdicts?)",
                       description=__doc__)
    p.add_argument("transcript", type=Path)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from collections import Counter

    from protocol_runner.journal import read_transcript
    from protocol_runner.runner import replay

    records = list(read_transcript(args.transcript))
    runner, differences = replay(records)
    verdicts = Counter(o["verdict"] for _, outs in records for o in outs
                       if o.get("type") == "verdict")
    game = runner.state().get("game") or {}
    result = {"transcript": str(args.transcript), "inputs": len(records),
              "verdicts": dict(verdicts), "same": not differences,
              "differences": differences[:50], "winner": game.get("winner"),
              "result": game.get("result")}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(verdicts.items()))
        print(f"audit {args.transcript}: {len(records)} inputs re-checked ({counts}); "
              + ("same verdicts" if not differences else f"{len(differences)} differ")
              + (f"; {result['result']}" if result["result"] else
                 f"; winner: {result['winner']}" if result["winner"] else ""))
        for line in differences[:50]:
            print(f"  differs: {line}")
    return 0 if not differences else 1
