"""``cardtable train``: rebuild the training renders and retrain the card classifier.

The committed ``models/card_classifier.onnx`` is the output of exactly ``cardtable train`` with
its defaults (see ``models/README.md``); ``--part card``, ``--part strip`` or ``--part pips``
rebuilds one of the three table-card models alone, with the same recipe; ``--part mask`` the
single-card locator's card mask (not part of ``all``: torch alone builds it). Intermediate runs go
to ``--runs`` (gitignored), never into ``models/``. ``--quick`` is a smoke test (tiny data, one
epoch) for CI and must not be committed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

FULL = {"per_class": {"train": 400, "val": 10, "calib": 20}, "epochs": 8}
QUICK = {"per_class": {"train": 6, "val": 2, "calib": 2}, "epochs": 1}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="regenerate training renders, retrain the card and corner-strip classifiers "
             "(needs .[train])",
    )
    p.add_argument("--out", type=Path, default=None,
                   help="where the ONNX model goes (default models/, with --quick RUNS/quick)")
    p.add_argument("--runs", type=Path, default=Path("runs"), help="scratch dir for data and runs")
    p.add_argument("--imgsz", type=int, default=96,
                   help="whole-card classifier input size (pixels; 96 since the eighth session)")
    p.add_argument("--epochs", type=int, default=None, help="override the number of epochs")
    p.add_argument("--workers", type=int, default=2, help="processes for rendering")
    p.add_argument("--quick", action="store_true", help="tiny smoke-test run (not for committing)")
    p.add_argument("--corners", action="store_true",
                   help="instead: train the photo reader of standard cards without the mat "
                        "(index spotter + corner classifier, vision/train/corners.py)")
    p.add_argument("--photos", type=Path, default=None,
                   help="--corners and --part mask: the CC BY photo set (default "
                        "../shared/datasets/playing-cards-photos-cc-by beside the repository)")
    p.add_argument("--part", choices=["all", "card", "strip", "pips", "mask", "reader", "spotter"],
                   default="all",
                   help="rebuild only the whole-card or the corner-strip classifier, or the "
                        "pip-suit reader of standard table cards (numpy, no .[train] needed), "
                        "or the single-card locator's card mask; "
                        "with --corners: only the index spotter or only the rank/suit reader")
    p.add_argument("--seed", type=int, default=0,
                   help="the training's seed: --part card (0 made card_classifier.onnx; "
                        "N > 0 writes card_classifier_seedN.onnx, whose renders also draw "
                        "recent printings' reverse symbol and footless 1, and from seed 3 on "
                        "are its own (0-2 share theirs), in three more typefaces (four from "
                        "seed 5 on; from seed 7 on close-ups are also cut at the card's sides "
                        "and corners); the single-card reader reads seeds 4, 7 and 8 beside 0), "
                        "or --part strip --wide (N > 0 writes strip_classifier_wide_seedN.onnx "
                        "from renders of its own; the single-card reader reads seed 1 beside 0), "
                        "or --corners for the rank/suit reader and the index spotter (0 made "
                        "the shipped ones), or --part mask (the same renders; the network's "
                        "initial weights, batch order and augmentation; 0 made the shipped "
                        "one); compare recipes over several")
    p.add_argument("--wide", action="store_true",
                   help="--part strip: train strip_classifier_wide.onnx instead, its training "
                        "printings half plain and half wide (heavy, outlined, other typefaces, "
                        "the curled reverse, a reverse index as large as printed, a 6 or 9 index "
                        "without its bar or over it); the single-card reader reads it and its "
                        "--seed 1 twin in place of the shipped strip")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.imgsz < 32 or args.imgsz > 256:
        raise ValueError(f"--imgsz {args.imgsz} out of range: use 32 to 256")
    if args.part in ("pips", "mask") and args.corners:
        raise ValueError(f"--part {args.part} is not a part of the corner models: drop --corners")
    if args.part in ("reader", "spotter") and not args.corners:
        raise ValueError(f"--part {args.part} is a part of the corner models: add --corners")
    if args.seed and not (args.corners
                          or not args.corners and args.part in ("card", "mask")
                          or args.wide and args.part == "strip"):
        raise ValueError("--seed is the whole-card classifier's (--part card) or the corner "
                         "models' (--corners), the wide corner network's (--part strip "
                         "--wide) or the card mask's (--part mask)")
    if args.wide and args.part != "strip":
        raise ValueError("--wide is the corner-strip network's: give --part strip")
    if args.part in ("card", "strip") and args.corners:
        raise ValueError(f"--part {args.part} is not a part of the corner models: with "
                         "--corners give --part all, spotter or reader")
    if args.part != "pips":  # the pip-suit reader is plain numpy
        # the corner models need torch and onnx (the reader's 8-bit step, checked before the
        # hours of training), not ultralytics: importing ultralytics (the classifiers' trainer)
        # would also cut torch to one thread (OMP_NUM_THREADS=1), halving training speed here
        need = ("torch", "onnx") if args.corners or args.part == "mask" else ("ultralytics",)
        if any(importlib.util.find_spec(name) is None for name in need):
            raise OSError("cardtable train needs the training extra: pip install -e '.[train]'")
    recipe = QUICK if args.quick else FULL
    out = args.out or (args.runs / "quick" if args.quick else Path("models"))
    out.mkdir(parents=True, exist_ok=True)
    args.runs.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(f"cardtable train: {message}", file=sys.stderr)

    if args.corners:
        from vision.train.corners import DEFAULT_PHOTOS, train_corners

        corner_meta = train_corners(
            out, (args.runs / "corners").resolve(), args.photos or DEFAULT_PHOTOS,
            quick=args.quick, epochs=args.epochs, log=log, part=args.part, seed=args.seed)
        if "val_found" in corner_meta:
            print(f"index spotter: validation groups {corner_meta['val_found']} of "
                  f"{corner_meta['val_labels']} indices found, {corner_meta['val_right']} read "
                  f"right, {corner_meta['val_false']} false")
        elif "val_top1" in corner_meta:
            print(f"corner classifier: validation top-1 {corner_meta['val_top1']} on "
                  f"{corner_meta['val_crops']} real crops, temperatures "
                  + ", ".join(f"{f['part']} {f['temperature']}"
                              for f in corner_meta["factors"]))
        return 0
    if args.part == "mask":
        from vision.train.corners import DEFAULT_PHOTOS
        from vision.train.mask import train_mask

        name = f"card_mask_seed{args.seed}.onnx" if args.seed else "card_mask.onnx"
        mask = train_mask(out / name, args.photos or DEFAULT_PHOTOS,
                          quick=args.quick, epochs=args.epochs, workers=args.workers, log=log,
                          seed=args.seed)
        print(f"card mask: validation mask IoU {mask['val_iou_mean']} "
              f"(>0.9 in {mask['val_iou_over_0.9']}) on {mask['val_card_photos']} renders of "
              f"a card; a blob in {mask['val_empty_with_blob']} of {mask['val_empty_photos']} "
              "renders of none")
        return 0
    if args.part in ("all", "pips"):
        from vision.train.pip_suits import train_pip_suits

        pip = train_pip_suits(out / "pip_suit.npz", *((4, 2) if args.quick else (240, 40)),
                              log=log)
        print(f"pip-suit reader: calibration top-1 {pip['calib_top1']:.4f}, "
              f"temperature {pip['temperature']:.3f}")
        if args.part == "pips":
            return 0
    if args.part in ("all", "card"):
        from vision.train.classifier import train_classifier

        meta = train_classifier(
            out, args.runs.resolve(), args.imgsz, recipe["per_class"],
            args.epochs or recipe["epochs"], workers=args.workers, log=log, seed=args.seed,
        )
        print(f"classes {len(meta['classes'])}, temperature {meta['temperature']}, "
              f"calibration top-1 {meta['calibration']['top1']}")
    if args.part == "card":
        return 0
    # The corner-strip reader of partly covered cards (fanned columns of the protocol matrix).
    from vision.train.strip import train_strip_classifier

    # the wide recipe (twice the printings) trains longer: at 14 epochs its held-out strips
    # were still rising (models/HISTORY.md, forty-fifth session)
    strip = ({"per_class": 6, "styles": 1, "epochs": 1} if args.quick
             else {"per_class": 320, "styles": 16, "epochs": 20 if args.wide else 14})
    model, work = (("strip_classifier_wide", "strip_wide") if args.wide
                   else ("strip_classifier", "strip"))
    if args.seed:
        model, work = f"{model}_seed{args.seed}", f"{work}_seed{args.seed}"
    from vision.strip_classifier import STRIP_SIZE, WIDE_STRIP_SIZE

    strip_meta = train_strip_classifier(out / f"{model}.onnx", args.runs.resolve() / work,
                                        workers=args.workers,
                                        wide=strip["styles"] if args.wide else 0,
                                        seed=args.seed,
                                        size=WIDE_STRIP_SIZE if args.wide else STRIP_SIZE,
                                        **strip)
    print(f"strip classifier: held-out top-1 {strip_meta['held_out_accuracy']}, "
          f"temperature {strip_meta['temperature']}")
    return 0
