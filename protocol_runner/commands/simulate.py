"""``cardtable simulate``: run a protocol on simulated tables (CONVENTIONS.md), or ``--exact``:
enumerate every shuffle outcome and print exact probabilities instead of counts."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


class SimulateUsageError(ValueError):
    """A ``cardtable simulate`` option that makes no sense."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "simulate", help="run a protocol on simulated tables and count outcomes",
        description="Run a protocol of the papers on simulated tables: true cards, seeded "
                    "shuffles. Prints shuffles and helper cards per run, how often each outcome "
                    "came out and (--transcripts) every run's public view.")
    sub = parser.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--runs", type=int, default=1000, help="runs to simulate (default 1000)")
        p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.add_argument("--transcripts", action="store_true",
                       help="also count every run's transcript (all cards turned face up)")
        p.set_defaults(handler=handle)

    p = sub.add_parser("six-card-and", help="six-card AND of two committed bits")
    p.add_argument("--x", type=int, required=True, choices=(0, 1))
    p.add_argument("--y", type=int, required=True, choices=(0, 1))
    p.add_argument("--exact", action="store_true",
                   help="enumerate every shuffle outcome (exact probabilities)")
    common(p)

    p = sub.add_parser("covert-lottery", help="covert lottery over m cards")
    p.add_argument("--valid", required=True, help="validity of each card, e.g. 1,0,1,1")
    p.add_argument("--original", action="store_true",
                   help="the original lottery (always selects; m−1 ANDs)")
    p.add_argument("--exact", action="store_true",
                   help="enumerate every shuffle outcome (exact probabilities; m ≤ 6)")
    common(p)

    p = sub.add_parser("uno-select", help="UNO card selection for a virtual player P1")
    p.add_argument("--top", required=True, help="the discard pile's top card, e.g. 2R")
    p.add_argument("--hand", required=True, help="P1's hand, e.g. 7R,SY,2G,W")
    p.add_argument("--others", default="7",
                   help="hand sizes of the other players, e.g. 7,7 (default 7); their cards "
                        "are dealt at random (seeded) from the rest of the deck, the remainder "
                        "is the unplayed deck")
    p.add_argument("--variant", default="v2", choices=("v1", "v2"),
                   help="v2: 12 steps, k1+4 shuffles (default); v1: 15 steps, k1+5")
    p.add_argument("--colour", help="colour in force when the top card is W or +4 (R/Y/G/B)")
    p.add_argument("--drawn", metavar="CODE",
                   help="draw-then-play: P1 just drew this card; only it may be played")
    p.add_argument("--discard", default="", metavar="CODES",
                   help="cards under the top card of the discard pile")
    p.add_argument("--hide-remaining", action="store_true",
                   help="treat the discard pile (under the top) as one more owner group, so "
                        "that Step 5 does not show the remaining cards (NOTES.md item 4)")
    p.add_argument("--allow-top-copy", action="store_true",
                   help="P1 holds a second copy of the top card's face (e.g. the other 7R)")
    p.add_argument("--helper-deck", type=Path, metavar="FILE.json",
                   help='role → face mapping, e.g. {"alpha": "1R", "beta": "2G", '
                        '"theta1": "1B", ...} (default: α 1R, β 2G, θ on blue numbers)')
    p.add_argument("--helper-decks", type=int, metavar="N",
                   help="check that N full UNO decks supply the helper cards needed")
    common(p)

    p = sub.add_parser("wild-colour", help="choose a wild's colour: shuffle four, take one")
    common(p)

    from protocol_runner.protocols.old_maid import add_simulate_parser  # games issue

    add_simulate_parser(sub)


def handle(args: argparse.Namespace) -> int:
    from protocol_runner import simulate as sim

    if getattr(args, "exact", False):
        return _exact(args)
    if args.protocol == "six-card-and":
        result = sim.simulate_and(args.x, args.y, args.runs, args.seed, args.transcripts)
    elif args.protocol == "covert-lottery":
        result = sim.simulate_lottery(sim.parse_valid(args.valid), args.original, args.runs,
                                      args.seed, args.transcripts)
    elif args.protocol == "uno-select":
        result = _uno(args)
    else:
        result = sim.simulate_wild_colour(args.runs, args.seed, args.transcripts)
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(result.summary())
    return 0


def _uno(args: argparse.Namespace) -> Any:
    import numpy as np

    from protocol_runner import simulate as sim
    from protocol_runner.helpers import HelperDeck

    others = _sizes(args.others)
    helper_deck = None
    if args.helper_deck is not None:
        try:
            mapping = json.loads(args.helper_deck.read_text())
        except json.JSONDecodeError as exc:
            raise SimulateUsageError(f"{args.helper_deck}: not JSON ({exc})") from None
        if not isinstance(mapping, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
            raise SimulateUsageError(f"{args.helper_deck}: expected an object of role → code, "
                                     'e.g. {"alpha": "1R", "beta": "2G"}')
        helper_deck = HelperDeck.from_mapping(mapping)
    rng = np.random.default_rng(args.seed)
    deal = sim.deal_uno(args.top, [c for c in args.hand.split(",") if c.strip()], others,
                        args.colour, args.drawn,
                        [c for c in args.discard.split(",") if c.strip()], args.hide_remaining,
                        rng=rng, allow_top_copy=args.allow_top_copy)
    result = sim.simulate_uno(deal, args.variant, args.runs, args.seed, args.transcripts,
                              helper_deck, rng=rng)
    if args.helper_decks is not None:
        sim.check_helper_supply(result, args.helper_decks)
    return result


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise SimulateUsageError(f"--others takes hand sizes like 7,7, got {text!r}") from None
    if any(n < 0 for n in sizes):
        raise SimulateUsageError(f"--others: hand sizes cannot be negative, got {text!r}")
    return sizes


def _exact(args: argparse.Namespace) -> int:
    from protocol_runner import exact
    from protocol_runner.simulate import bit_helper_deck, parse_valid

    if args.protocol == "six-card-and":
        branches = exact.enumerate_branches(*exact.and_input(args.x, args.y))
        outcome = exact.and_outcomes(branches)
    else:
        valid = parse_valid(args.valid)
        if len(valid) > 6:
            raise SimulateUsageError("--exact enumerates every shuffle: at most 6 cards")
        branches = exact.lottery_branches(valid, args.original)
        outcome = exact.lottery_outcomes(branches, len(valid))
    out: dict[str, Any] = {
        "protocol": args.protocol,
        **({"variant": "original" if args.original else "modified"}
           if args.protocol == "covert-lottery" else {}),
        "exact": True,
        "shuffles": {"pile_scramble": branches.table.costs.pile_scramble,
                     "random_bisection_cut": branches.table.costs.random_bisection_cut},
        "branches": branches.table.runs,
        "outcomes": {k: str(v) for k, v in sorted(outcome.items())},
    }
    if args.transcripts:
        out["transcripts"] = {k: str(v) for k, v in
                              sorted(branches.transcripts(bit_helper_deck()).items())}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['protocol']}: exact, {out['branches']} branches")
        for k, v in out["outcomes"].items():
            print(f"  {k:>14}  {v}")
        for k, v in out.get("transcripts", {}).items():
            print(f"  transcript {k}: {v}")
    return 0
