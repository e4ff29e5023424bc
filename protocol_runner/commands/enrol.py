"""``cardtable enrol``: adapt recognition to the user's own deck.

From photos of single cards: ``cardtable enrol PHOTOS --out DECK.npz``, PHOTOS a folder of
photos named by card code (``7R.jpg``, ``+2B.png``, ``7R_2.jpg`` for a second photo) or a
``labels.csv`` with columns image,code; each photo shows one card. The profile then reads photos
of one UNO card of that deck (``cardtable detect`` or ``eval`` with ``--profile``).

On the mat: ``cardtable enrol --mat --order`` prints where each card goes (the work area's
columns of 4, left to right, each top to bottom, then one card face down); lay the deck out so,
photograph it (two photos for a whole UNO deck: 52 cards fit at once), and run ``cardtable
enrol --mat PHOTO1 PHOTO2 --out DECK.npz``. The profile then adapts the cards on the mat
(``serve``, ``replay``, ``detect`` and ``eval scenes`` with ``--profile``).

Either way the command prints how the plain models read each card (a mismatch is often a card
out of place or a mislabelled photo: check it) and writes a small deck profile. For an UNO deck
the profile also holds how the corner-index reader reads each card's corners.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.enrol import DeckProfile


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("enrol", help="enrol your own deck: photos of single cards, or "
                                            "the deck laid out on the mat (--mat)",
                              description=__doc__)
    p.add_argument("photos", type=Path, nargs="*",
                   help="folder of photos named by code, or labels.csv; with --mat: photos of "
                        "the deck on the mat, in laying order")
    p.add_argument("--mat", action="store_true",
                   help="the deck is laid out on the mat in the order --order prints")
    p.add_argument("--order", action="store_true",
                   help="with --mat: print where each card goes, and stop")
    p.add_argument("--deck", choices=("uno", "standard"), default="uno",
                   help="with --mat: which deck is laid out (default uno)")
    p.add_argument("--out", type=Path, default=Path("deck_profile.npz"), help="profile to write")
    p.add_argument("--model", type=Path, default=None, help="classifier ONNX (default: bundled)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.mat:
        return _on_mat(args)
    if args.order:
        raise ValueError("--order prints the laying order of --mat: give --mat too")
    if len(args.photos) != 1:
        raise ValueError("give one folder of card photos or one labels.csv (or --mat and the "
                         "photos of the deck laid out on the mat)")
    from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings
    from vision.corner_index import CornerFusion
    from vision.enrol import enrol, enrolment_photos
    from vision.synth.faces import UNO_FACE_CODES

    photos = enrolment_photos(args.photos[0])
    model = args.model or DEFAULT_MODEL
    clf = CardClassifier.load(model)
    uno = all(p.code in UNO_FACE_CODES for p in photos)
    corners = CornerFusion.load(clf.classes, UNO_FACE_CODES) if uno else None
    profile = enrol(photos, clf, corners, with_later_trainings(clf, model))
    return _written(profile, args.out, f"{len(photos)} photos",
                    f"its blend is {profile.blend:.3f}, what the plain models miss of these "
                    "photos (0 would change nothing); read photos of its cards with "
                    f"`cardtable detect --profile {args.out}`")


def _written(profile: DeckProfile, out: Path, source: str, then: str) -> int:
    """Print how the plain models read each enrolled card, save the profile, say what next."""
    agree = 0
    for ph in profile.photos:
        ok = ph.read_as == ph.code
        agree += ok
        print(f"{ph.code:5s} read as {ph.read_as:5s} {ph.confidence:.2f} "
              f"{'ok' if ok else 'DIFFERS'}  {ph.path}")
    profile.save(out)
    print(f"enrolled {len(profile.codes)} cards from {source} (the plain models agreed on "
          f"{agree}; corners of {len(profile.corner_codes)}); profile written to {out}; {then}")
    return 0


def _on_mat(args: argparse.Namespace) -> int:
    from vision.card_locator import SingleCardError, read_image
    from vision.enrol import MAT_ROWS, enrol_mat, mat_order, mat_photos
    from vision.recognise import TableReader

    if args.order:
        for n, chunk in enumerate(mat_photos(args.deck), start=1):
            print(f"photo {n}: the work area's columns, left to right, each top to bottom "
                  "(a BACK is a card face down)")
            for c in range(0, len(chunk), MAT_ROWS):
                print(f"  column {c // MAT_ROWS + 1:2d}: {' '.join(chunk[c:c + MAT_ROWS])}")
        return 0
    if not args.photos:
        raise ValueError("give the photos of the deck laid out on the mat (see --order)")
    photos = []
    for path in args.photos:
        try:
            photos.append((str(path), read_image(path)))
        except SingleCardError as exc:
            raise ValueError(f"{path}: {exc}") from exc
    reader = TableReader.load(args.model)
    return _written(enrol_mat(photos, mat_order(args.deck), reader), args.out,
                    f"{len(photos)} photos of the mat",
                    f"read the mat with it: `cardtable serve --profile {args.out}` (or replay, "
                    "detect, eval scenes)")
