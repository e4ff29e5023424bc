"""The tile side of ``cardtable eval tiles``.

WHY here and not in the command module: ``eval`` is shared with the card pipeline; it hands
over to this function when tiles are asked for, so the card code path stays as it was.
"""

from __future__ import annotations

import sys


def eval_tiles(count: int, seed: int | None, as_json: bool) -> int:
    """Measure tile recognition on ``count`` rendered domino tables and print the report."""
    from vision.evaluate import report_json
    from vision.synth.tile_scenes import TILE_EVAL_SEED_BASE
    from vision.tile_evaluate import evaluate_tile_scenes, format_tile_report

    def progress(msg: str) -> None:
        print(f"cardtable eval: {msg}", file=sys.stderr)

    rep = evaluate_tile_scenes(count, TILE_EVAL_SEED_BASE if seed is None else seed,
                               progress=progress)
    print(report_json(rep) if as_json else format_tile_report(rep.summary()))
    return 0
