"""Build the classifier's image-folder dataset from renders (``root/{train,val}/<code>/*.png``).

WHY pre-rendered files: ultralytics' classification trainer reads an image folder. Each sample is
an independent draw of printing style, table, lighting and camera (``vision.synth.crops``), so the
dataset's size is its augmentation budget. Seeds are per (split, class, index): the same command
rebuilds the same files, in any number of worker processes.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from vision.synth.crops import training_crop
from vision.synth.faces import ALL_FACE_CODES

SPLIT_SEED = {"train": 1, "val": 2, "calib": 3}


def _write_class(job: tuple[str, str, int, int, int, str, bool, tuple[str, ...], tuple[int, ...],
                             bool]) -> int:
    root, split, index, count, size, code, recent, typefaces, stream, any_cut = job
    folder = Path(root) / split / code
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        rng = np.random.default_rng([SPLIT_SEED[split], index, i, *stream])
        cv2.imwrite(str(folder / f"{i:05d}.png"), training_crop(code, rng, size, recent=recent,
                                                                 typefaces=typefaces,
                                                                 any_cut=any_cut))
    return count


def build_dataset(root: Path, per_class: dict[str, int], size: int,
                  codes: tuple[str, ...] = ALL_FACE_CODES, workers: int = 2,
                  recent: bool = False, typefaces: tuple[str, ...] = (),
                  stream: tuple[int, ...] = (), any_cut: bool = False) -> int:
    """Render ``per_class[split]`` crops of every code into ``root``; returns the total count.
    ``recent``: wide printings also draw recent printings' details, ``typefaces`` other
    font files (:func:`training_crop`).
    ``stream``: appended to every crop's seed, for renders independent of the first stream's;
    ``any_cut``: close-ups cut at any side (:func:`vision.synth.crops.cut_view`)."""
    if root.exists():
        shutil.rmtree(root)
    jobs = [(str(root), split, idx, n, size, code, recent, typefaces, stream, any_cut)
            for split, n in per_class.items() for idx, code in enumerate(codes)]
    if workers <= 1:
        return sum(map(_write_class, jobs))
    with ProcessPoolExecutor(workers) as pool:
        return sum(pool.map(_write_class, jobs, chunksize=4))
