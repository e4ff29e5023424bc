"""``cardtable bench-vision``: how fast the camera pipeline reads a 50-card table on this CPU."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from protocol_runner.commands import size_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench-vision",
        help="time the vision pipeline on rendered 1280x720 frames with 50 cards",
        description="Prints the median milliseconds per 1280x720 frame with 50 cards in view, end "
        "to end (mat markers, localisation, recognition with reuse of unchanged cards, layout): "
        "for a still table (the whole view reused) and with the table localised again every "
        "frame; with every card read as new (no reuse: a standard table also pays for its "
        "pips' suit reader here, also timed alone); the cold first frame; single-image detect "
        "time including model load; and the machine's load average, since a shared CPU slows "
        "every figure.",
    )
    p.add_argument("--model", help="classifier .onnx (default: models/card_classifier.onnx)")
    p.add_argument("--frames", type=int, default=30, help="frames to time (default 30)")
    p.add_argument("--seed", type=int, default=10_000_000, help="scene seed")
    p.add_argument("--deck", choices=("uno", "standard"), default="uno",
                   help="the faces on the table (default uno; standard also pays for the "
                   "pip-suit reader of every new card)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--detect", nargs="+", metavar="PATH",
                   help="instead: time `cardtable detect IMAGE --json` as a fresh process (what "
                   "a user waits for, interpreter and model load included) on up to --count "
                   "images of these files or folders, evenly spaced, --repeat times each, "
                   "after one untimed run (which writes Python's bytecode caches, as a "
                   "user's first run does)")
    p.add_argument("--count", type=int, default=12, help="images for --detect (default 12)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs per image for --detect; its median counts (default 3)")
    p.add_argument("--resize", type=size_argument, metavar="WxH",
                   help="--detect: each image first saved at this size as a JPEG (quality "
                   "92) in a temporary folder, e.g. 4032x3024 for a phone's full-size photo")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.resize and not args.detect:
        raise ValueError("--resize sizes the images of --detect; give --detect PATH too")
    if args.detect:
        return _report(_detect_wall(args.detect, args.count, args.repeat, args.resize),
                       args.json)
    import numpy as np

    from vision.pip_suits import standard_mass
    from vision.recognise import PIP_GATE, TableReader, detect_still
    from vision.synth.scenes import render_scene

    if args.frames < 2:
        raise ValueError("--frames must be at least 2")
    scene = render_scene(args.seed, 50, deck=args.deck)
    rng = np.random.default_rng(0)
    frames = [np.clip(scene.image.astype(np.int16) + rng.integers(-3, 4, scene.image.shape),
                      0, 255).astype(np.uint8) for _ in range(args.frames)]

    t0 = time.perf_counter()
    reader = TableReader.load(args.model)
    dets = detect_still(scene.image, reader)
    single_ms = (time.perf_counter() - t0) * 1000

    def timed(reader: TableReader) -> tuple[list[float], list[int], list[int]]:
        times, cards, reused = [], [], []
        for frame in frames:
            t = time.perf_counter()
            view = reader.read(frame)
            times.append((time.perf_counter() - t) * 1000)
            cards.append(len(view.detections))
            reused.append(view.reused)
        return times, cards, reused

    # a still table (sensor noise only): the frame-difference test reuses the whole view
    times, cards, reused = timed(TableReader.load(args.model))
    # every frame localised again (as if something moved), unchanged cards' readings reused
    relocate = TableReader.load(args.model)
    relocate_times, relocate_cpu = [], []
    for frame in frames:
        relocate._last_small = None
        t, c = time.perf_counter(), time.process_time()
        relocate.read(frame)
        relocate_times.append((time.perf_counter() - t) * 1000)
        relocate_cpu.append((time.process_time() - c) * 1000)
    # every frame read as if every card were new (no reuse at all): what a table of new cards
    # costs, the pip-suit reader of a standard table included
    fresh = TableReader.load(args.model, reuse=False)
    fresh_times, fresh_cpu, pip_times = [], [], []
    for frame in frames:
        t, c = time.perf_counter(), time.process_time()
        view = fresh.read(frame)
        fresh_times.append((time.perf_counter() - t) * 1000)
        fresh_cpu.append((time.process_time() - c) * 1000)
        if fresh.pips is not None:  # its pip-suit reader alone, on the cards it reads pips of
            std = [d.quad for d in view.detections
                   if standard_mass(d.probs, fresh.classes) >= PIP_GATE]
            t = time.perf_counter()
            fresh.pips.card_suits(frame, std)
            pip_times.append((time.perf_counter() - t) * 1000)
    out = {
        "deck": args.deck,
        "frame_size": [int(scene.image.shape[1]), int(scene.image.shape[0])],
        "cards_in_view": len(scene.cards),
        "cards_found_median": int(np.median(cards)),
        "median_ms_per_frame": round(float(np.median(times[1:])), 1),
        "p90_ms_per_frame": round(float(np.percentile(times[1:], 90)), 1),
        "first_frame_ms": round(times[0], 1),
        "median_ms_relocalising_every_frame": round(float(np.median(relocate_times[1:])), 1),
        "median_cpu_ms_relocalising_every_frame": round(float(np.median(relocate_cpu[1:])), 1),
        "median_ms_every_card_new": round(float(np.median(fresh_times[1:])), 1),
        "median_cpu_ms_every_card_new": round(float(np.median(fresh_cpu[1:])), 1),
        "median_ms_pip_suits_every_card_new": round(float(np.median(pip_times[1:])), 1)
        if pip_times else None,
        "reused_median": int(np.median(reused[1:])),
        "single_image_detect_ms_incl_model_load": round(single_ms, 1),
        "single_image_cards": len(dets),
        "frames": args.frames,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
    return _report(out, args.json)


def _report(out: dict, as_json: bool) -> int:
    if as_json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    sys.stdout.flush()
    return 0


def _detect_wall(paths: list[str], count: int, repeat: int,
                 size: tuple[int, int] | None = None) -> dict:
    """Wall seconds of ``cardtable detect IMAGE --json`` run as its own process, per image the
    median of ``repeat`` runs; with ``size`` (w, h) each image is first saved at that size
    in a temporary folder. WHY a process each time: the single-image target counts what a
    user waits for at the shell, the interpreter, the imports and the model loads included;
    WHY files at another size: a phone's photo is larger than every photo of the shared sets,
    and its decoding is part of the wait."""
    import tempfile

    from vision.sources import list_images

    if count < 1 or repeat < 1:
        raise ValueError("--count and --repeat must be at least 1")
    images = [i for p in map(Path, paths) for i in (list_images(p) if p.is_dir() else [p])]
    if not images:
        raise ValueError(f"no image in {' '.join(paths)}")
    step = max(1, len(images) // count)
    images = images[::step][:count]
    with tempfile.TemporaryDirectory(prefix="cardtable-bench-") as folder:
        if size is not None:
            images = [_resized_copy(image, size, Path(folder) / f"{k}.jpg")
                      for k, image in enumerate(images)]
        out = _timed_detects(images, repeat)
    if size is not None:
        out["size"] = f"{size[0]}x{size[1]}"
    return out | {"load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}


def _resized_copy(image: Path, size: tuple[int, int], out: Path) -> Path:
    import cv2

    from vision.photo_size import resized
    from vision.sources import read_image

    cv2.imwrite(str(out), resized(read_image(image), size), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return out


def _timed_detects(images: list[Path], repeat: int) -> dict:
    import math
    import statistics
    import subprocess

    # Python keeps each module it compiles (__pycache__) unless told not to, and a user's every
    # run after the first reads them: the untimed first run writes them, and the runs here may,
    # whatever PYTHONDONTWRITEBYTECODE says (this machine's environment sets it, under which
    # every run compiled the changed modules again: 0.12-0.16 s a run, sixty-eighth session).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "protocol_runner.cli", "detect"]
    subprocess.run([*command, str(images[0]), "--json"], env=env, capture_output=True)
    walls, cards = [], []
    for image in images:
        runs = []
        for _ in range(repeat):
            t = time.perf_counter()
            done = subprocess.run([*command, str(image), "--json"], env=env,
                                  capture_output=True, text=True)
            runs.append(time.perf_counter() - t)
            if done.returncode != 0:
                raise ValueError(f"cardtable detect {image} failed: {done.stderr.strip()}")
        walls.append(statistics.median(runs))
        cards.append(len(json.loads(done.stdout).get("detections", [])))
    return {
        "images": len(images),
        "runs_per_image": repeat,
        "untimed_first_runs": 1,
        "median_s_per_image": round(statistics.median(walls), 3),
        "p90_s_per_image": round(sorted(walls)[math.ceil(0.9 * len(walls)) - 1], 3),
        "max_s_per_image": round(max(walls), 3),
        "min_s_per_image": round(min(walls), 3),
        "cards_found": sum(cards),
    }
