"""The deterministic train / held-out split of the CC BY card photos, by scene.

WHY by scene and not by file: the phone photos were taken in bursts (``IMG_20220921_193915``,
``..._193925``: the same cards a few seconds apart) and the webcam photos are runs of one card
held in a hand (``10c-<uuid>``, four of each). A file-level split would put near-duplicates of
every test photo into training and measure memory, not recognition. So every photo gets a
*group* (the minute of a timestamped burst, ten consecutive numbers of a numbered series, the card
of a webcam run) and the group's SHA-1 decides: one group in five is held out.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

HELD_OUT_EVERY = 5
SPLITS = ("train", "test", "val", "all")

_BURST = re.compile(r"^IMG_(\d{8})_(\d{4})\d{2}")
_NUMBERED = re.compile(r"^IMG_(\d+)_JPG")
_WEBCAM = re.compile(r"^([0-9a-z]+)-[0-9a-f]{8}-", re.IGNORECASE)


def group_of(name: str) -> str:
    """The scene group of a photo file name (see the module docstring)."""
    stem = Path(name).name
    if m := _BURST.match(stem):
        return f"burst-{m.group(1)}-{m.group(2)}"
    if m := _NUMBERED.match(stem):
        return f"series-{int(m.group(1)) // 10}"
    if m := _WEBCAM.match(stem):
        return f"webcam-{m.group(1).lower()}"
    return "file-" + stem.split(".rf.")[0]


def scene_kind(name: str) -> str:
    """The kind of scene of a photo file name: ``burst`` (timestamped phone bursts), ``series``
    (numbered phone photos), ``webcam`` (a card held to a webcam) or ``file`` (any other name).
    WHY: the kinds fail differently (a hand-held card's blur, a slanted table's small indices),
    so ``cardtable eval`` reports found and false cards by kind as well as in all."""
    return group_of(name).split("-", 1)[0]


def split_of(name: str) -> str:
    """``"test"`` for one scene group in :data:`HELD_OUT_EVERY`, else ``"train"``."""
    digest = hashlib.sha1(group_of(name).encode()).digest()
    return "test" if int.from_bytes(digest[:4], "big") % HELD_OUT_EVERY == 0 else "train"


def in_validation(name: str) -> bool:
    """Whether the training photo ``name`` lies in the validation groups of the training split
    (a tenth of its scene groups, by SHA-1): never trained on by the corner models, they fit
    their temperatures and choose their thresholds."""
    return hashlib.sha1(("val" + group_of(name)).encode()).digest()[0] % 10 == 0


def trained_on(name: str) -> bool:
    """Whether the corner networks train on the photo ``name``: the training split less its
    validation groups (:mod:`vision.train.corners`)."""
    return split_of(name) == "train" and not in_validation(name)


def left_out_webcam(name: str) -> bool:
    """Whether the photo ``name`` lies in a webcam run that the leave-codes-out screen of the
    corner reader's recipe (:mod:`vision.train.leave_out`) leaves out of training: about half
    the webcam runs the readers train on (:func:`trained_on`), by SHA-1 of the group.

    WHY: a webcam run is one card, so every held-out webcam label is a code the readers never
    saw held to the webcam; leaving half the trained runs out makes the same gap on photos
    that recipes may be judged on, where the held-out split may not be used."""
    return (scene_kind(name) == "webcam" and trained_on(name)
            and hashlib.sha1(("leave" + group_of(name)).encode()).digest()[0] % 2 == 0)


def in_split(name: str, split: str) -> bool:
    """Whether the photo ``name`` belongs to ``split`` (``train``, ``test``, ``val``: the training
    split's validation groups, where the model card's rules measure, or ``all``)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}")
    if split == "val":
        return split_of(name) == "train" and in_validation(name)
    return split == "all" or split_of(name) == split
