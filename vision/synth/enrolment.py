"""Rendered photos of a deck laid out on the mat for ``cardtable enrol --mat``.

WHY: mat enrolment is measured before and after on rendered tables of one printing
(``cardtable eval scenes --printing``); the user's photos of their deck on the mat are then
renders of that printing, laid out in the enrolment order (:func:`vision.enrol.mat_order`),
from their own seeds (``ENROL_SEED_BASE``+), never those of the measured tables.

    python -m vision.synth.enrolment --printing thin:1 --out /tmp/thin1
    cardtable enrol --mat /tmp/thin1/*.png --out /tmp/thin1.npz
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from vision.enrol import mat_photos
from vision.synth.faces import printing
from vision.synth.scenes import render_scene

ENROL_SEED_BASE = 30_000_000


def render_enrolment(spec: str, deck: str = "uno", seed: int = ENROL_SEED_BASE
                     ) -> list[np.ndarray]:
    """The photos (BGR) of the deck printed as ``spec`` laid out in enrolment order."""
    style = printing(spec)
    return [render_scene(seed + k, deck=deck, style=style, codes=codes).image
            for k, codes in enumerate(mat_photos(deck))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--printing", required=True, help="KIND:SEED, e.g. thin:1 or plain:7")
    ap.add_argument("--out", type=Path, required=True, help="folder to write the photos to")
    ap.add_argument("--deck", choices=("uno", "standard"), default="uno",
                    help="which deck is laid out (a standard deck's faces are not printed "
                         "in --printing's style)")
    ap.add_argument("--seed", type=int, default=ENROL_SEED_BASE, help="first scene seed")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for k, image in enumerate(render_enrolment(args.printing, args.deck, args.seed), start=1):
        path = args.out / f"enrol_{k}.png"
        cv2.imwrite(str(path), image)
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
