"""A leave-codes-out screen of the corner reader's recipe, on the CC BY photos' training split.

WHY: a webcam run of the CC BY photos is one card held to the webcam, and the split holds out
whole runs, so every held-out webcam label is a code the readers never saw held to the webcam
(35 of 53 found, against 244 of 290 on the training split's webcam frames). No figure of the
training split shows that gap, and the validation groups hold only two such runs (14 labels).
This screen trains the reader of this tree's recipe (:func:`vision.train.corners.build_crops`,
:func:`~vision.train.corners.train_reader`) with about half the trained webcam runs left out
(:func:`vision.photo_split.left_out_webcam`) and reads their labelled index crops, so a recipe
change can be judged on that gap without the held-out split. Compare recipes by running it in
each tree at the same ``--seed`` and ``--epochs`` (and over seeds: one seed moves the figures).
It reads the float network, not the 8-bit copy that ships, and writes nothing into models/.

usage: ``python -m vision.train.leave_out --out DIR [--epochs 10] [--seed 0]
[--precision bfloat16] [--quick]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.evaluate import read_names
from vision.photo_detect import CornerClassifier, corner_crop
from vision.photo_split import left_out_webcam
from vision.train.corners import (
    DEFAULT_PHOTOS,
    FULL,
    PRECISIONS,
    QUICK,
    READER_SIZE,
    Log,
    build_crops,
    calibrate_classifier,
    train_images,
    train_reader,
    write_description,
    yolo_boxes,
)

DIM = 150
"""A crop is *dim* when the 95th percentile of its brightest channel is below this: the frames
of a run taken in a dim room (about one or two a run), which the shipped reader reads worst."""


def left_out_crops(root: Path) -> list[tuple[str, np.ndarray]]:
    """(code, crop) of every labelled index (not ``BACK``) of the left-out webcam runs, cut as
    the detector's box would be (:func:`vision.photo_detect.corner_crop`), unjittered."""
    names = read_names(root / "data.yaml")
    out = []
    for path in train_images(root):
        if not left_out_webcam(path.name):
            continue
        image = cv2.imread(str(path))
        if image is None:
            continue
        h, w = image.shape[:2]
        for k, cx, cy, bw, bh in yolo_boxes(root, path):
            if names[k] != "BACK":
                box = ((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)
                out.append((names[k], corner_crop(image, box)))
    return out


def is_dim(crop: np.ndarray) -> bool:
    """Whether ``crop`` is dim (:data:`DIM`)."""
    return float(np.percentile(crop.max(2), 95)) < DIM


def read_left_out(meta_path: Path, crops: list[tuple[str, np.ndarray]]) -> dict[str, list[int]]:
    """[right, all] of the left-out crops as the reader at ``meta_path`` reads them (top-1 of
    its four-turn reading), in all, dim and bright."""
    clf = CornerClassifier.load(meta_path)
    probs = clf.classify([c for _, c in crops])
    hit = np.array([clf.classes[int(i)] == code for i, (code, _) in zip(probs.argmax(1), crops,
                                                                         strict=True)], bool)
    dim = np.array([is_dim(c) for _, c in crops], bool)
    return {part: [int(hit[sel].sum()), int(sel.sum())]
            for part, sel in (("all", np.ones_like(dim)), ("dim", dim), ("bright", ~dim))}


def screen(out: Path, photos: Path = DEFAULT_PHOTOS, epochs: int = 10, seed: int = 0,
           quick: bool = False, log: Log = print, precision: str = "float32") -> dict:
    """Train the reader without the left-out runs into ``out`` (``corner_reader.onnx``, float,
    and ``corner_classifier.json``, calibrated on the validation groups as the real command
    does), read the left-out crops, and write the figures into the JSON under ``left_out``.
    ``precision`` is the training's (:func:`~vision.train.corners.train_reader`)."""
    if not (photos / "data.yaml").is_file():
        raise OSError(f"{photos}: no data.yaml; the screen needs the CC BY photos (--photos)")
    left = left_out_crops(photos)
    if not left:
        raise ValueError(f"{photos}: no labelled webcam index is left out; is this the CC BY set?")
    if any(importlib.util.find_spec(name) is None for name in ("torch", "onnx")):
        raise OSError("the screen trains a network: pip install -e '.[train]'")
    recipe = QUICK if quick else FULL
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    sets = build_crops(photos, int(recipe["per_label"]), int(recipe["per_quad"]),
                       int(recipe["rendered"]), int(recipe["negatives"]), log=log,
                       skip=left_out_webcam)
    meta_path = out / "corner_classifier.json"
    write_description(meta_path, train_reader(sets, out, READER_SIZE, epochs, log, seed, precision),
                      seed)
    meta = calibrate_classifier(meta_path, sets["val"])
    meta["left_out"] = read_left_out(meta_path, left)
    meta["left_out_recipe"] = {"epochs": epochs, "seed": seed, "quick": quick,
                               "precision": precision, "seconds": round(time.time() - t0)}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def summary(meta: dict) -> str:
    """One line of the screen's figures."""
    lo = meta["left_out"]
    parts = ", ".join(f"{k} {right}/{n}" for k, (right, n) in lo.items())
    return (f"left-out webcam index crops read right: {parts}; validation groups' crops "
            f"{meta['val_top1']} (indices {meta['val_top1_indices']}); "
            f"seed {meta['seed']}, {meta['left_out_recipe']['epochs']} epochs, "
            f"{meta['left_out_recipe'].get('precision', 'float32')}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.train.leave_out", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="where the screened reader goes")
    ap.add_argument("--photos", type=Path, default=DEFAULT_PHOTOS, help="the CC BY photo set")
    ap.add_argument("--epochs", type=int, default=10,
                    help="the reader's epochs (10: a fair screen in 20 minutes of this CPU; the "
                         "shipped reader trains 30)")
    ap.add_argument("--seed", type=int, default=0, help="the training's seed")
    ap.add_argument("--precision", choices=PRECISIONS, default="float32",
                    help="what the training computes in (bfloat16: about 2.7 times faster on a "
                         "CPU with AMX; compare screens only within one precision)")
    ap.add_argument("--quick", action="store_true", help="tiny data (a smoke test)")
    args = ap.parse_args(argv)
    if args.epochs < 1:
        ap.error("--epochs must be at least 1")
    if args.out.resolve() == (Path(__file__).resolve().parents[2] / "models"):
        ap.error("--out models/ would replace the shipped reader: give a scratch folder")
    try:
        meta = screen(args.out, args.photos, args.epochs, args.seed, args.quick,
                      log=lambda m: print(m, file=sys.stderr), precision=args.precision)
    except (OSError, ValueError) as exc:
        print(f"leave_out: {exc}", file=sys.stderr)
        return 2
    print(summary(meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
