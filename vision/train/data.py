"""Build the classifier's image-folder dataset from renders (``root/{train,val}/<code>/*.png``).

WHY pre-rendered files: ultralytics' classification trainer reads an image folder. Each sample is
an independent draw of printing style, table, lighting and camera (``vision.synth.crops``), so the
dataset's size is its augmentation budget. Seeds are per (split, class, index): the same command
rebuilds the same files, in any number of worker processes.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.synth.crops import training_crop
from vision.synth.faces import ALL_FACE_CODES, LATER_TYPEFACES, OTHER_TYPEFACES

SPLIT_SEED = {"train": 1, "val": 2, "calib": 3}


FIRST_STREAM_SEEDS = (0, 1, 2)
"""Seeds rendered as they were trained: the first stream of crops, shared by all three."""

LATER_TYPEFACES_FROM = 5
"""The first seed that also draws :data:`vision.synth.faces.LATER_TYPEFACES`."""

ANY_CUT_FROM = 7
"""The first seed whose close-ups also cut the card at its sides and corners
(:func:`vision.synth.crops.cut_view`; fifty-third session)."""


@dataclass(frozen=True)
class CardRecipe:
    """What the crops of one whole-card training draw beyond the first recipe.

    ``recent``: wide printings also draw recent printings' details
    (:func:`vision.synth.faces.widen_uno_style`); ``typefaces``: other font files for half the
    wide printings; ``stream``: appended to every crop's seed, so that the renders are
    independent of the first stream's; ``any_cut``: half the close-ups cut the card at any side,
    not only at its bottom.

    WHY decided by the seed alone (:meth:`for_seed`): each shipped training must stay the output
    of its command, ``cardtable train --part card --seed N``, so a detail added to the renders
    later is drawn only by the seeds trained after it."""

    recent: bool = False
    typefaces: tuple[str, ...] = ()
    stream: tuple[int, ...] = ()
    any_cut: bool = False

    @classmethod
    def for_seed(cls, seed: int) -> CardRecipe:
        """The recipe of ``cardtable train --part card --seed {seed}``.

        Seeds 1 and 2 draw seed 0's stream of crops (:data:`FIRST_STREAM_SEEDS`) with recent
        printings' details added: the same crops as each other, so they differ only in their
        weights' start and batch order. A later training read beside them brings data of its
        own to the average, not another look at the same crops, and its wide
        printings also draw other typefaces: :data:`~vision.synth.faces.OTHER_TYPEFACES`
        (forty-second session), and a fourth family from :data:`LATER_TYPEFACES_FROM` on
        (forty-third).

        Only seed 0 draws no recent details (the reverse symbol as a curled S, numerals whose 1
        has no foot). WHY: seed 0 is also the standard-photo reader's witness and the table
        reader's network, and retrained with the curl it moved the CC BY figures by a new
        training's luck (thirty-ninth session, models/HISTORY.md); the later trainings reach
        only the photos of one card (the single-card reader and, since RULE 49, plain
        ``cardtable detect``'s UNO check)."""
        stream = () if seed in FIRST_STREAM_SEEDS else (seed,)
        typefaces = (OTHER_TYPEFACES + (LATER_TYPEFACES if seed >= LATER_TYPEFACES_FROM else ())
                     if stream else ())
        return cls(recent=seed > 0, typefaces=typefaces, stream=stream,
                   any_cut=seed >= ANY_CUT_FROM)

    def crop(self, code: str, split: str, index: int, i: int, size: int) -> np.ndarray:
        """Crop ``i`` of the class at ``index`` in ``split``: the same pixels on every run."""
        rng = np.random.default_rng([SPLIT_SEED[split], index, i, *self.stream])
        return training_crop(code, rng, size, recent=self.recent, typefaces=self.typefaces,
                             any_cut=self.any_cut)


def _write_class(job: tuple[str, str, int, int, int, str, CardRecipe]) -> int:
    root, split, index, count, size, code, recipe = job
    folder = Path(root) / split / code
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        cv2.imwrite(str(folder / f"{i:05d}.png"), recipe.crop(code, split, index, i, size))
    return count


def build_dataset(root: Path, per_class: dict[str, int], size: int,
                  codes: tuple[str, ...] = ALL_FACE_CODES, workers: int = 2,
                  recipe: CardRecipe = CardRecipe()) -> int:
    """Render ``per_class[split]`` crops of every code into ``root`` by ``recipe``; returns the
    total count."""
    if root.exists():
        shutil.rmtree(root)
    jobs = [(str(root), split, idx, n, size, code, recipe)
            for split, n in per_class.items() for idx, code in enumerate(codes)]
    if workers <= 1:
        return sum(map(_write_class, jobs))
    with ProcessPoolExecutor(workers) as pool:
        return sum(pool.map(_write_class, jobs, chunksize=4))
