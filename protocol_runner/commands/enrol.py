"""``cardtable enrol PHOTOS --out PROFILE.npz``: adapt recognition to the user's own deck.

PHOTOS is a folder of photos named by card code (``7R.jpg``, ``+2B.png``, ``7R_2.jpg`` for a
second photo) or a ``labels.csv`` with columns image,code. Each photo shows one card. The command
prints how the plain classifier read each photo (a mismatch is often a mislabelled photo: check
it) and writes a small deck profile that recognition then blends in: give it to ``cardtable
detect`` or ``eval`` with ``--profile`` to read photos of one UNO card of that deck (not yet
cards on the mat: models/README.md, "Deck enrolment"). For an UNO deck the profile also holds how
the corner-index reader (``vision.corner_index``) reads each card's corners.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("enrol", help="enrol your own deck from one photo of each card")
    p.add_argument("photos", type=Path, help="folder of photos named by code, or labels.csv")
    p.add_argument("--out", type=Path, default=Path("deck_profile.npz"), help="profile to write")
    p.add_argument("--model", type=Path, default=None, help="classifier ONNX (default: bundled)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from vision.classifier import DEFAULT_MODEL, CardClassifier
    from vision.corner_index import CornerFusion
    from vision.enrol import enrol, enrolment_photos
    from vision.synth.faces import UNO_FACE_CODES

    photos = enrolment_photos(args.photos)
    clf = CardClassifier.load(args.model or DEFAULT_MODEL)
    uno = all(p.code in UNO_FACE_CODES for p in photos)
    corners = CornerFusion.load(clf.classes, UNO_FACE_CODES) if uno else None
    profile = enrol(photos, clf, corners)
    agree = 0
    for ph in profile.photos:
        ok = ph.read_as == ph.code
        agree += ok
        mark = "ok" if ok else "DIFFERS"
        print(f"{ph.code:5s} read as {ph.read_as:5s} {ph.confidence:.2f} {mark}  {ph.path}")
    profile.save(args.out)
    print(f"enrolled {len(profile.codes)} cards from {len(photos)} photos "
          f"(plain classifier agreed on {agree}; corners of {len(profile.corner_codes)}); "
          f"profile written to {args.out}; read photos of its cards with "
          f"`cardtable detect --profile {args.out}`")
    return 0
