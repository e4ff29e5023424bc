"""The field-colour statistic alone on rendered photos, read on each card's true quad.

``python -m vision.colour_check --seeds 12424 12525 [--count 432] [--kinds near,webcam]
[--without-oval]`` prints, per seed, how many photos of each kind the statistic
(:func:`vision.card_colour.field_colour`) gives the card's colour: the coloured cards, the wild
cards as the renders draw them, and the wild cards as current decks print them (the same photos
under the ``wild`` printing, :func:`vision.synth.faces.current_wild_style`, whose coloured faces
are the bare kind's). ``--without-oval`` reads without :func:`vision.card_colour.oval_to_black`,
the statistic before the sixty-first session's RULE 61.

WHY on the true quad: it measures the statistic, not the locator; the whole reader's figures are
:mod:`vision.render_check`'s. The rules RULE 60 and RULE 61 decided on these tallies
(models/HISTORY.md, sixty-first session).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from vision.card_colour import COLOURS, code_colour, field_colour
from vision.render_check import DECISION_KINDS

GROUPS = ("coloured", "wild as drawn", "wild as printed")
"""The tallies' rows: coloured faces (counted once), the drawn look's wild cards, the current
look's."""


def tally(kind: str, seed: int, count: int, oval: bool = True) -> dict[str, tuple[int, int]]:
    """(right, photos) per group of :data:`GROUPS` for ``count`` photos of ``synthetic:kind`` at
    ``seed``; ``oval`` False reads without :func:`vision.card_colour.oval_to_black`."""
    from protocol_runner.cards import UNO_BLACK
    from vision.card_locator import rectify
    from vision.single_card import style_of, synthetic_photos

    out = dict.fromkeys(GROUPS, (0, 0))
    # the wild printing's coloured faces are the bare kind's pictures: only its wild cards
    for style, codes in ((None, None), (style_of("wild"), UNO_BLACK)):
        for code, img, quad in synthetic_photos(kind, count, seed, style, codes):
            truth = code_colour(code)
            group = GROUPS[0] if truth != "K" else GROUPS[1 if style is None else 2]
            read = COLOURS[int(np.argmax(field_colour(rectify(img, quad), oval)))]
            right, n = out[group]
            out[group] = (right + (read == truth), n + 1)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.colour_check", description=__doc__)
    ap.add_argument("--seeds", type=int, nargs="+", required=True, help="render seeds")
    ap.add_argument("--count", type=int, default=432, help="photos per kind and seed")
    ap.add_argument("--kinds", default=",".join(dict.fromkeys(k.split("@")[0]
                                                              for k in DECISION_KINDS)),
                    help="comma-separated bare synthetic kinds (default: the decision kinds')")
    ap.add_argument("--without-oval", action="store_true",
                    help="read without oval_to_black (the statistic before RULE 61)")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or any("@" in k for k in kinds):
        raise ValueError("--kinds: give bare synthetic kinds, e.g. near,webcam (the printings "
                         "are this command's own)")
    for seed in args.seeds:
        rows = {k: tally(k, seed, args.count, not args.without_oval) for k in kinds}
        print(f"seed {seed}: colour right / photos" + "".join(f"  {k}" for k in kinds) + "  sum")
        for group in GROUPS:
            cells = [rows[k][group] for k in kinds]
            print(f"  {group:16}" + "".join(f"  {r}/{n}" for r, n in cells)
                  + f"  {sum(r for r, _ in cells)}/{sum(n for _, n in cells)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
