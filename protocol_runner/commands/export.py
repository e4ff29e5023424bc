"""``cardtable export --journal DB -o TRANSCRIPT``: everything public, for anyone to audit.

The transcript is JSON Lines: a header, then every journal entry in order (inputs: the setup,
views, operator events; answers: instructions, verdicts). ``cardtable audit TRANSCRIPT``
re-checks it with no camera.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="write a game's public transcript from its journal",
                       description=__doc__)
    p.add_argument("--journal", type=Path, required=True, metavar="DB")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="TRANSCRIPT")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from protocol_runner.journal import Journal, export_transcript

    with Journal.open(args.journal) as journal:
        count = export_transcript(journal, args.output)
    print(f"wrote {count} entries to {args.output}")
    return 0
