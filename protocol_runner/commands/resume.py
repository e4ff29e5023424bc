"""``cardtable resume --journal DB [--observations FILE]``: continue a game where it stopped.

The journal's inputs are replayed through the runner (it is deterministic), which rebuilds the
game exactly as it was when the process died; the current instruction is printed. With
``--observations`` the script goes on: if FILE starts with the journal's own setup it is the same
script, and the records already journaled are skipped; otherwise records whose ``seq`` is not
above the journal's last one are skipped.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from protocol_runner.commands.run import add_output_options, emit, play_file, show


def register(sub: Any) -> None:
    p = sub.add_parser("resume", help="continue a game from its journal after a crash",
                       description=__doc__)
    p.add_argument("--journal", type=Path, required=True, metavar="DB")
    p.add_argument("--observations", type=Path, default=None, metavar="FILE",
                   help="go on with this script (records already journaled are skipped)")
    add_output_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from protocol_runner.observations import read_lines
    from protocol_runner.runner import Session

    session = Session.resume(args.journal)
    try:
        journal = session.journal
        inputs = sum(1 for _ in journal.inputs())
        emit({"type": "resumed", "journal": str(args.journal), "inputs": inputs,
              "mismatches": session.replay_mismatches}, args)
        if not args.json:
            state = session.state()
            print(f"resumed {args.journal}: {inputs} journaled inputs replayed "
                  f"({session.replay_mismatches} answers differ); phase: {state['phase']}, "
                  f"turn {state['turn_number']}")
        if session.runner.instruction is not None:
            show(session.runner.instruction, args)
        if args.observations is None:
            return 0
        first = next((item for _, item in read_lines(args.observations)), None)
        same = first is not None and first == session.runner.setup
        return play_file(session, args.observations, args, skip=inputs if same else 0,
                         after_seq=None if same else journal.last_seq())
    finally:
        session.journal.close()
