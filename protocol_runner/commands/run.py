"""``cardtable run --observations FILE [--journal DB] [--json]``: a whole game from a script.

FILE is JSON Lines in the observation format (``protocol_runner/README.md``); its first record
is the ``setup`` (the game: uno, old-maid, sevens, hearts or muggins; players, who starts,
helper deck). Every record goes through the runner; the instructions and verdicts are printed
(``--json``: one JSON object per line, ending with a summary). A malformed line is refused with
its line number and the game goes on; the exit code is then 1. With ``--journal`` every record
and answer is written to a new SQLite journal first.

``--simulate OUT`` writes such a script instead: a game (``--game``, default uno) on a simulated
table with a perfect camera (``--seed``, ``--humans``, ``--virtual``, ``--hand-size`` for UNO,
``--target`` for Hearts; ``--faults`` plants mistakes a real table makes, each followed by its
recovery), then runs nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from protocol_runner.instructions import Instruction, Output, Verdict
from protocol_runner.observations import GAMES, ObservationError, Record, read_lines


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="play a game from an observations file (script mode)",
                       description=__doc__)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--observations", type=Path, metavar="FILE",
                     help="JSON Lines: a setup record, then views and events")
    src.add_argument("--simulate", type=Path, metavar="OUT",
                     help="write the observations of a simulated game to OUT instead")
    p.add_argument("--game", choices=GAMES, default="uno", help="--simulate: which game")
    p.add_argument("--seed", type=int, default=0, help="--simulate: random seed (default 0)")
    p.add_argument("--humans", type=int, default=2, help="--simulate: human players")
    p.add_argument("--virtual", type=int, default=2, help="--simulate: virtual players")
    p.add_argument("--hand-size", type=int, default=7, help="--simulate: UNO cards dealt each")
    p.add_argument("--target", type=int, default=None,
                   help="--simulate: the score that ends a game of Hearts (default 100)")
    p.add_argument("--faults", default="", help="--simulate: comma-separated mistakes to "
                   "plant. UNO: step5_misread, step6_pair, step9_theta, and_reveal, "
                   "lottery_two_ones, invalid_play, wrong_hand, blind_view, out_of_order, undo; "
                   "the other games: om_6b, om_6c, om_6g, om_6g_pair, om_8, om_8_joker, "
                   "om_pairs, sel_5, sel_9, sel_and, sel_lottery, invalid_play, revoke, no_fit, "
                   "wrong_hand")
    p.add_argument("--journal", type=Path, default=None, metavar="DB",
                   help="write everything to this new SQLite journal (resume it after a crash)")
    add_output_options(p)
    p.set_defaults(handler=run)


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--quiet", action="store_true",
                   help="print only deviations, refusals and the summary")
    p.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                   help="wait this long between records (a live table's pace; default 0)")


def run(args: argparse.Namespace) -> int:
    from protocol_runner.journal import Journal
    from protocol_runner.runner import Session

    if args.simulate is not None:
        return simulate(args)
    journal = Journal.create(args.journal) if args.journal else None
    session = Session(journal)
    try:
        return play_file(session, args.observations, args)
    finally:
        if journal is not None:
            journal.close()


def simulate(args: argparse.Namespace) -> int:
    from protocol_runner.tablesim import TableSimulator, simulated_setup

    setup = simulated_setup(args.humans, args.virtual, args.hand_size)
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    if args.game != "uno":
        return simulate_checked(args, [(p.name, p.virtual) for p in setup.players], faults)
    if args.target is not None:
        raise ValueError("--target is for --game hearts")
    game = TableSimulator(setup, seed=args.seed, faults=faults).play()
    game.write(args.simulate)
    result = {"type": "simulated", "file": str(args.simulate), "records": len(game.records),
              "winner": game.winner, "virtual_turns": game.virtual_turns,
              "draw_then_play": game.draw_then_play, "wilds_by_virtual": game.wilds_by_virtual,
              "planted": game.planted}
    if args.json:
        emit(result, args)
    else:
        print(f"wrote {len(game.records)} records to {args.simulate}: winner {game.winner}; "
              f"{game.virtual_turns} virtual turns, {game.draw_then_play} draw-then-play, "
              f"{game.wilds_by_virtual} wilds by virtual players"
              + (f"; planted: {', '.join(game.planted)}" if game.planted else ""))
    return 0


def simulate_checked(args: argparse.Namespace, players: list[tuple[str, bool]],
                     faults: list[str]) -> int:
    """Old Maid, Sevens, Hearts or Muggins on a simulated table (``games/script.py``)."""
    from protocol_runner.games.script import ScriptTable

    if args.target is not None and args.game != "hearts":
        raise ValueError("--target is for --game hearts")
    script = ScriptTable(args.game, players, seed=args.seed, faults=faults,
                         hearts_target=args.target).play()
    script.write(args.simulate)
    result = {"type": "simulated", "file": str(args.simulate), "game": args.game,
              "records": len(script.records), "result": script.result,
              "protocol_runs": script.protocol_runs, "planted": script.planted}
    if args.json:
        emit(result, args)
    else:
        print(f"wrote {len(script.records)} records to {args.simulate}: {args.game}, "
              f"{script.result}; {script.protocol_runs} protocol runs"
              + (f"; planted: {', '.join(script.planted)}" if script.planted else ""))
    return 0


def play_file(session: Any, path: Path, args: argparse.Namespace, skip: int = 0,
              after_seq: int | None = None) -> int:
    """Feed FILE's records to ``session`` (skipping the first ``skip`` records, or those with
    ``seq <= after_seq``), print what the runner says, then a summary. Returns the exit code."""
    counts: Counter[str] = Counter()
    bad_lines = 0
    index = 0
    for number, item in read_lines(path):
        if isinstance(item, ObservationError):
            bad_lines += 1
            emit({"type": "error", "line": number, "message": str(item)}, args)
            continue
        index += 1
        if index <= skip or _already(item, after_seq):
            continue
        for out in session.feed(item):
            if isinstance(out, Verdict):
                counts[out.kind] += 1
            show(out, args)
        if args.pace:
            time.sleep(args.pace)
    summary = summarise(session, counts, bad_lines)
    emit(summary, args)
    return 1 if bad_lines else 0


def _already(record: Record, after_seq: int | None) -> bool:
    seq = getattr(record, "seq", None)
    return after_seq is not None and (record.kind == "setup" or (seq is not None
                                                                 and seq <= after_seq))


def show(out: Output, args: argparse.Namespace) -> None:
    if args.json:
        emit(out.to_json(), args)
        return
    if isinstance(out, Instruction):
        if not args.quiet:
            print(out.line())
    elif out.kind != "accepted" or not args.quiet:
        print(("  " if out.kind == "accepted" else "! ") + out.line())
    sys.stdout.flush()


def emit(obj: dict[str, Any], args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps(obj, ensure_ascii=False), flush=True)
    elif obj.get("type") == "error":
        print(f"! line {obj['line']}: refused: {obj['message']}", flush=True)
    elif obj.get("type") == "summary":
        counts = obj["verdicts"]
        print(f"summary: {obj['records']} records: " + ", ".join(
            f"{counts.get(k, 0)} {k}" for k in ("accepted", "deviation", "refused"))
            + (f", {obj['bad_lines']} malformed lines" if obj["bad_lines"] else "")
            + f"; {obj['game']}, phase: {obj['phase']}; turn {obj['turn_number']}"
            + (f"; {obj['result']}" if obj["result"] else
               f"; winner: {obj['winner']}" if obj["winner"] else ""), flush=True)


def summarise(session: Any, counts: Counter[str], bad_lines: int) -> dict[str, Any]:
    state = session.state()
    game = state.get("game") or {}
    setup = session.runner.setup
    return {"type": "summary", "game": setup.game if setup else None,
            "records": sum(counts.values()), "verdicts": dict(counts), "bad_lines": bad_lines,
            "phase": state["phase"], "turn_number": state["turn_number"],
            "winner": game.get("winner"), "result": game.get("result"),
            "hand_sizes": {p["name"]: p["hand_size"] for p in game.get("players", [])}}
