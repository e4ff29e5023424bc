"""``cardtable game``: Old Maid, Sevens, Hearts or Muggins from an observations file.

``cardtable game --observations FILE [--json]`` feeds every record of FILE (JSON Lines; the
first record is a ``setup`` whose ``game`` is old-maid, sevens, hearts or muggins) to the
checked game (:mod:`protocol_runner.games.checked`) and prints each verdict that is not a plain
acceptance, then a summary. Exit code 0 when the game reached its end, 1 otherwise.

``cardtable game --simulate OUT --game G --players Ann,v:Vic,Bob`` writes such a file instead:
a game on a simulated table with a perfect camera (``v:`` marks a virtual player); ``--faults``
plants mistakes a real table makes, each followed by its recovery (see
:data:`protocol_runner.games.script.FAULTS`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

GAMES = ("old-maid", "sevens", "hearts", "muggins")


def register(sub: Any) -> None:
    p = sub.add_parser("game", help="Old Maid, Sevens, Hearts or Muggins from observations",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--observations", type=Path, metavar="FILE",
                     help="JSON Lines: a setup record, then views and events")
    src.add_argument("--simulate", type=Path, metavar="OUT",
                     help="write the observations of a simulated game to OUT instead")
    p.add_argument("--game", choices=GAMES, help="--simulate: which game")
    p.add_argument("--players", default="Ann,v:Vic,Bob",
                   help="--simulate: names in seat order, v: before a virtual player's name")
    p.add_argument("--seed", type=int, default=0, help="--simulate: random seed (default 0)")
    p.add_argument("--faults", default="", help="--simulate: comma-separated mistakes to plant")
    p.add_argument("--hearts-target", type=int, default=100,
                   help="the score that ends a game of Hearts (default 100, the rules)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.simulate is not None:
        return simulate(args)
    from protocol_runner.games.checked import CheckedGame
    from protocol_runner.observations import read_records

    game = CheckedGame(args.hearts_target)
    counts = {"accepted": 0, "deviation": 0, "refused": 0}
    for number, record in read_records(args.observations):
        verdict = game.feed(record)
        counts[verdict.kind] += 1
        if verdict.kind != "accepted" or args.json:
            out = verdict.to_json() | {"line": number}
            print(json.dumps(out, ensure_ascii=False) if args.json else
                  f"line {number}: {verdict.kind}: {verdict.message}"
                  + "".join(f"\n    {p.message}" for p in verdict.problems)
                  + (f"\n    recover: {verdict.recover}" if verdict.recover else ""))
    summary = {"type": "summary", "game": game.game, "over": game.over,
               "result": game.result(), **counts}
    print(json.dumps(summary, ensure_ascii=False) if args.json else
          f"{game.game}: {game.result()} ({counts['accepted']} accepted, "
          f"{counts['deviation']} deviations, {counts['refused']} refused)")
    return 0 if game.over else 1


def simulate(args: argparse.Namespace) -> int:
    from protocol_runner.games.script import ScriptTable

    if args.game is None:
        raise ValueError("--simulate needs --game (old-maid, sevens, hearts or muggins)")
    players = []
    for name in (n.strip() for n in args.players.split(",") if n.strip()):
        virtual = name.lower().startswith("v:")
        players.append((name[2:] if virtual else name, virtual))
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    script = ScriptTable(args.game, players, seed=args.seed, faults=faults,
                         hearts_target=args.hearts_target).play()
    script.write(args.simulate)
    result = {"type": "simulated", "file": str(args.simulate), "records": len(script.records),
              "result": script.result, "protocol_runs": script.protocol_runs,
              "planted": script.planted}
    print(json.dumps(result, ensure_ascii=False) if args.json else
          f"wrote {len(script.records)} records to {args.simulate}: {script.result}; "
          f"{script.protocol_runs} protocol runs; planted: {', '.join(script.planted) or 'none'}")
    return 0
