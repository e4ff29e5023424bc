"""``cardtable eval``: measure recognition on a labelled set (YOLO folder, labels.csv, scenes)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from protocol_runner.commands import size_argument
from vision.photo_split import SPLITS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="measure card recognition on a labelled set",
        description="SET is a YOLO folder (data.yaml with card-code names, images/, labels/), a "
        "labels.csv (image,code), or 'scenes' (rendered 50-card tables from measurement seeds). "
        "Prints per-card and per-class accuracy, confusion pairs and, for scenes, the rate of "
        "layouts read with no error (with and without the protocol prior).",
    )
    p.add_argument("set", metavar="SET", help="folder, labels.csv, 'scenes', or 'tiles' "
                   "(rendered domino tables, seeds from 20000000)")
    p.add_argument("--model", help="classifier .onnx (default: models/card_classifier.onnx)")
    p.add_argument("--limit", type=int, help="use only the first N images")
    p.add_argument("--profile", type=Path, default=None,
                   help="the deck enrolled by `cardtable enrol` (measure enrolment): from "
                        "photos of single cards for a labels.csv of photos of one UNO card; "
                        "on the mat (--mat) for scenes")
    p.add_argument("--count", type=int, default=50, help="scenes: how many (default 50)")
    p.add_argument("--seed", type=int, default=None, help="scenes: first seed (default 10000000)")
    p.add_argument("--deck", choices=("uno", "standard", "mixed"), default=None,
                   help="scenes: which faces (default uno); labels.csv: the deck in play, as "
                        "`cardtable detect --deck` (default: any)")
    p.add_argument("--fanned", action="store_true", help="scenes: overlapping columns")
    p.add_argument("--printing", default=None, metavar="KIND:SEED",
                   help="scenes: every UNO face in one printing (plain:SEED, a drawn style; "
                        "thin:SEED, the same in a font no training render uses; classic, the "
                        "demo's deck), as a deck enrolled with `python -m "
                        "vision.synth.enrolment` is")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--photos", choices=("auto", "yes", "no"), default="auto",
                   help="YOLO folder: read photos without the mat by corner indices "
                        "(vision/photo_detect.py); auto = when its classes are standard cards. "
                        "labels.csv: auto = as `cardtable detect` (one UNO card when surely "
                        "one, else standard cards by their indices, else the one card found), "
                        "yes = as `detect "
                        "--photos`, no = the whole-card classifier's one card")
    p.add_argument("--misses", action="store_true",
                   help="YOLO folder read by corner indices: also count each missed label by "
                        "the stage that lost it (index not spotted, read as no index, misread "
                        "rank or suit, read right but too unsure alone or with a second "
                        "index, face-down card): what to work on next")
    p.add_argument("--resize", type=size_argument, default=None, metavar="WxH",
                   help="YOLO folder or labels.csv: read every photo resized to WxH first "
                        "(bicubic up, area down; labels are fractions of the photo): how the "
                        "readers do on photos of another size, e.g. a phone's 4032x3024")
    p.add_argument("--split", choices=SPLITS, default="all",
                   help="YOLO folder: only the photos of this split of vision/photo_split.py "
                        "(test = held out from `cardtable train --corners`; val = the "
                        "training split's validation groups, never trained on); with test or "
                        "val the labels are also counted by whether the readers trained on "
                        "their code in that kind of scene")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from vision.evaluate import (
        EVAL_SEED_BASE,
        EvalError,
        evaluate_csv,
        evaluate_scenes,
        evaluate_yolo,
        format_report,
        report_json,
    )
    from vision.recognise import TableReader

    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")
    if args.count < 1:
        raise ValueError("--count must be at least 1")
    if args.deck == "uno" and args.photos != "auto" and args.set != "scenes":
        raise ValueError(f"--photos {args.photos} cannot go with --deck uno, which reads each "
                         "photo as one UNO card")
    if args.misses and (args.set in ("scenes", "tiles") or not Path(args.set).is_dir()):
        raise EvalError(f"{args.set}: --misses needs a YOLO folder of standard cards (it "
                        "explains the misses of their reading by corner indices)")
    if args.resize is not None and args.set in ("scenes", "tiles"):
        raise EvalError(f"--resize reads labelled photos at another size; {args.set} are "
                        "rendered at their own")
    if args.set == "tiles":  # rendered domino tables: vision/tile_commands.py
        from vision.tile_commands import eval_tiles

        return eval_tiles(args.count, args.seed, args.json)
    reader = TableReader.load(args.model, profile=args.profile)
    if reader.profile is not None:
        reader.profile.check_source(on_mat=args.set == "scenes", path=args.profile)

    def progress(msg: str) -> None:
        print(f"cardtable eval: {msg}", file=sys.stderr)

    target = Path(args.set)
    if args.set == "scenes":
        rep = evaluate_scenes(reader, args.count, args.seed or EVAL_SEED_BASE, args.deck or "uno",
                              args.fanned, progress=progress, printing=args.printing)
    elif target.is_dir():
        from vision.evaluate import trained_codes
        from vision.photo_split import scene_kind, trained_on
        from vision.still_detect import photo_options

        detect, keep = photo_options(target, reader, args.photos, args.split)
        explain = None
        if args.misses:
            if detect is None:
                raise EvalError(f"{target}: --misses explains the misses of the reader of "
                                "standard cards by their corner indices; this set is not read "
                                "that way (give --photos yes for a set of standard cards)")
            from vision.photo_detect import PhotoReader
            from vision.photo_misses import miss_explainer

            explain = miss_explainer(PhotoReader.load(cards=reader.classifier))

        def kind_of(path: Path) -> str:
            return scene_kind(path.name)

        # held-out photos: also by whether the readers trained on the code in that kind of scene
        codes = trained_codes(target, kind_of, lambda path: trained_on(path.name)) \
            if args.split in ("test", "val") and detect is not None else None
        rep = evaluate_yolo(target, reader, args.limit, progress, detect, keep, explain,
                            args.resize, kind_of=kind_of, code_group=codes)
    elif target.is_file() and target.suffix.lower() == ".csv":
        from vision.still_detect import still_detector

        deck = {None: "any", "mixed": "any"}.get(args.deck, args.deck)
        detect = None if args.photos == "no" else \
            still_detector(reader, "standard" if args.photos == "yes" else deck)
        rep = evaluate_csv(target, reader, args.limit, detect, args.resize)
    else:
        raise EvalError(f"{target}: not a YOLO folder, a labels.csv or 'scenes'")
    print(report_json(rep) if args.json else format_report(rep.summary()))
    return 0
