"""``cardtable detect PATH... --json``: the cards in still images, as CONVENTIONS.md specifies."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "detect",
        help="find and read every card in images (files and/or folders)",
        description="Print one JSON line per image: its size and every card seen (code or BACK, "
        "confidence, box, quad). Images on the cardtable mat are read by zone; a photo without "
        "the mat is read as one UNO card when the card found is surely UNO, else every standard "
        "card in it is read by its corner indices; where there is none, the card found is the "
        "answer (a UNO face read with its corner indices).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders of images")
    p.add_argument("--json", action="store_true", help="JSON Lines output (the default format)")
    p.add_argument("--model", help="classifier .onnx (default: models/card_classifier.onnx)")
    p.add_argument("--corners", help="the mat's 4 image corners x,y,... clockwise from top-left "
                   "(instead of finding its markers)")
    p.add_argument("--fanned", action="store_true", help="columns overlap, corner indices showing")
    deck = p.add_mutually_exclusive_group()
    deck.add_argument("--photos", action="store_true",
                      help="images without the mat show standard cards: always read every card "
                           "by its corner indices (vision/photo_detect.py), never as one UNO card")
    deck.add_argument("--deck", choices=("any", "uno", "standard"), default="any",
                      help="the deck in play: uno = an image without the mat shows one UNO "
                           "card, read with its corner indices over the UNO faces; standard = "
                           "as --photos; any (default) = one UNO card when surely one, else "
                           "standard cards by their corner indices, else the one card found")
    p.add_argument("--profile", type=Path, default=None,
                   help="your own deck, enrolled by `cardtable enrol`: from photos of single "
                        "cards, a photo of one UNO card is read as that deck prints it; "
                        "enrolled on the mat (--mat), the cards on the mat are")
    p.add_argument("--tiles", action="store_true",
                   help="the images show domino tiles on the mat: codes D00..D66 or BACK")
    p.set_defaults(handler=run)


def _inputs(paths: list[str]) -> list[Path]:
    from vision.sources import list_images

    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        out.extend(list_images(path) if path.is_dir() else [path])
    return out


def run(args: argparse.Namespace) -> int:
    from vision.geometry import GeometryError, parse_corners
    from vision.sources import FrameSourceError, read_image

    corners = parse_corners(args.corners) if args.corners else None
    detect = _tile_detector(corners) if args.tiles else _card_detector(args, corners)
    readable = 0
    for path in _inputs(args.paths):
        try:
            image = read_image(path)
        except FrameSourceError as exc:
            print(json.dumps({"image": str(path), "error": str(exc)}), flush=True)
            continue
        readable += 1
        h, w = image.shape[:2]
        try:
            dets = detect(image)
        except GeometryError as exc:  # tiles: no mat in this image
            print(json.dumps({"image": str(path), "error": str(exc)}), flush=True)
            continue
        print(json.dumps({"image": str(path), "width": w, "height": h,
                          "detections": [d.to_json(w, h) for d in dets]}), flush=True)
    if readable == 0:
        print("cardtable: error: no image could be read", file=sys.stderr)
        return 1
    return 0


def _card_detector(args: argparse.Namespace, corners: Any) -> Callable[[Any], Sequence[Any]]:
    """Cards: the mat pipeline; in a photo without the mat, one UNO card or (``--photos``
    always) every standard card by its corner indices (:func:`detect_with_photo_fallback`)."""
    from vision.card_locator import build_lab_tables
    from vision.recognise import TableReader
    from vision.still_detect import still_detector

    build_lab_tables()  # while the models load
    reader = TableReader.load(args.model, profile=args.profile, corners=corners,
                              fanned=True if args.fanned else None)
    return still_detector(reader, "standard" if args.photos else args.deck)


def _tile_detector(corners: Any) -> Callable[[Any], Sequence[Any]]:
    """Domino tiles on the mat (``vision/tile_detect.py``); the mat must be in view."""
    from vision.geometry import TableGeometry
    from vision.tile_detect import detect_tiles

    geometry = TableGeometry.from_corners(corners) if corners is not None else None
    return lambda image: detect_tiles(image, geometry)
