"""``cardtable prove``: the exact checks (every shuffle outcome, fractions, no sampling) of the
six-card AND, both covert lotteries (m ≤ 5, every validity vector) and the UNO card selection
(k ≤ 6, every deal, v1 and v2): correctness, uniformity, security."""

from __future__ import annotations

import argparse
import json
import time


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "prove", help="check the protocols exactly (every shuffle outcome)",
        description="Enumerate every shuffle outcome of small instances with exact fractions "
                    "and check correctness, uniformity and security (equal transcript "
                    "distributions for equal public information). Exit 1 if a check fails.")
    parser.add_argument("--json", action="store_true", help="one JSON object per check")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from protocol_runner.exact import all_proofs

    failed = 0
    start = time.perf_counter()
    for proof in all_proofs():
        failed += not proof.ok
        if args.json:
            print(json.dumps({"check": proof.name, "inputs": proof.inputs,
                              "final_states": proof.branches, "correct": proof.correct,
                              "uniform": proof.uniform, "secure": proof.secure}))
        else:
            print(proof.line(), flush=True)
    if not args.json:
        print(f"{'all checks hold' if not failed else f'{failed} checks FAILED'} "
              f"({time.perf_counter() - start:.1f} s)")
    return 1 if failed else 0
