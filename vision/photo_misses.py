"""Where the photo reader lost a labelled card, for each miss (``cardtable eval --misses``).

WHY: a missed card of :class:`vision.photo_detect.PhotoReader` is lost at one of its stages,
and each stage has its own cure: an index the spotter never found wants the spotter (or its
data), an index read as another code wants the reader, one read right but too unsure wants the
thresholds or a second witness. Sessions of work went to finding that out with throwaway
scripts; this names the stage for every missed label of a labelled set, so the figure that
decides what to work on comes from the command that prints the accuracy.

A label is explained by the spotted indices whose box holds its centre (the surest of them),
read as :meth:`PhotoReader.read_corners` reads them; the thresholds are the reader's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from protocol_runner.cards import BACK
from vision.photo_detect import NONE, PAIR_REACH, Corner, PhotoReader, _apart
from vision.photo_size import working_copy

FACE_DOWN = "face-down card not found"
NOT_SPOTTED = "index not spotted"
READ_NONE = "index read as no index"
MISREAD_RANK = "misread: rank"
MISREAD_SUIT = "misread: suit"
MISREAD_BOTH = "misread: rank and suit"
UNSURE_ALONE = "read right, unsure, no second index"
UNSURE_PAIR = "read right, unsure, second index too unsure"
STAGES = (FACE_DOWN, NOT_SPOTTED, READ_NONE, MISREAD_RANK, MISREAD_SUIT, MISREAD_BOTH,
          UNSURE_ALONE, UNSURE_PAIR)
"""Every stage a miss is put in, in the order of the reader's stages."""

Label = tuple[str, float, float]
"""(code, x, y): a labelled card and the centre of its labelled index box, in pixels."""


def miss_stage(code: str, x: float, y: float, corners: Sequence[Corner],
               classes: Sequence[str], pair_each: float) -> str:
    """The stage (one of :data:`STAGES`) at which the card ``code`` labelled at (x, y) was
    lost, given the spotter's read indices ``corners`` of its photo. A right reading counts as
    paired (:data:`UNSURE_PAIR`) when another index within :data:`PAIR_REACH` gives the code at
    least ``pair_each``, the bound each index of a pair must reach."""
    if code == BACK:
        return FACE_DOWN
    indices = [(c, c.probs) for c in corners if c.kind == "index" and c.probs is not None]
    near = [(c, p) for c, p in indices if c.box[0] <= x <= c.box[2] and c.box[1] <= y <= c.box[3]]
    if not near:
        return NOT_SPOTTED
    best, probs = max(near, key=lambda cp: cp[0].score)
    read = classes[int(np.argmax(probs))]
    if read == NONE:
        return READ_NONE
    if read != code:
        if "JK" in (code, read):  # a joker has no suit to misread
            return MISREAD_RANK
        rank, suit = read[:-1] != code[:-1], read[-1:] != code[-1:]
        return MISREAD_BOTH if rank and suit else MISREAD_RANK if rank else MISREAD_SUIT
    k = classes.index(code)
    second = any(c is not best and _apart(best.box, c.box) <= PAIR_REACH
                 and float(p[k]) >= pair_each for c, p in indices)
    return UNSURE_PAIR if second else UNSURE_ALONE


def miss_explainer(reader: PhotoReader
                   ) -> Callable[[np.ndarray, Sequence[Label]], list[str]]:
    """A function (photo, its missed labels) → their stages, with ``reader``'s spotter and
    corner reader; the photo is spotted and read again only when it has a miss, at the size
    the photo reader read it (:func:`vision.photo_size.working_copy`)."""

    def explain(image: np.ndarray, missed: Sequence[Label]) -> list[str]:
        if not missed:
            return []
        small, _ = working_copy(image)
        fx, fy = small.shape[1] / image.shape[1], small.shape[0] / image.shape[0]
        corners = reader.read_corners(small, [c for c in reader.spot(small)
                                              if c.kind == "index"])
        return [miss_stage(code, x * fx, y * fy, corners, reader.classes, reader.min_each)
                for code, x, y in missed]

    return explain
