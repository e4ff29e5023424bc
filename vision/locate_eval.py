"""How often the single-card locator outlines a real card held up to a webcam or lying down.

``python -m vision.locate_eval [PHOTOS] [--split test] [--source webcam|phone]``: on the CC BY
set's webcam frames (:mod:`vision.synth.real_rooms`: a hand holding one standard card, its two
index corners labelled) or its phone photos of one card on a table, floor or sofa, the card's
quad is inferred from those two corners (:func:`vision.synth.real_rooms.card_from_indices`)
and compared with the proposals of
:func:`vision.card_locator.candidates`: the best-scored one, the best of those within
:data:`vision.single_card.FUSED_MARGIN` of it (the ones the UNO reader read with corners until
RULE 81 widened its range to :data:`vision.single_card.CHOICE_MARGIN`), and
the best of all. A proposal fits when its IoU with the inferred card is at least
:data:`FITS`.

WHY: the real UNO photos are for measurement only, and every render is a drawing; these frames
are real rooms, players and hands, and their held-out split was never trained on (the card
mask draws rendered cards into the training split's frames). A standard card is white where a
UNO card is coloured, so this measures where the locator looks, not what it reads. The
phone photos are seen at a slant, which the inferred rectangle ignores, so there a fit is a
rougher measure.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.card_locator import candidates, iou_in_photo
from vision.single_card import FUSED_MARGIN
from vision.synth.real_rooms import SOURCES, load_room, room_frames

FITS = 0.7
DIM = 0.45
"""A frame is dim when its held card's white (:attr:`vision.synth.real_rooms.RoomFrame.light`,
the mean of its channels) lies below this share of full scale. WHY a line of its own: the
thirty-sixth session's mask covered less than a fifth of the held card (IoU below 0.2) in 22
of the training frames, all of them dim (their cards' white at 31-107 of 255; 208 at the median
where it worked)."""


@dataclass(frozen=True)
class LocateReport:
    """Per frame: the IoU of the best-scored proposal, the best within ``FUSED_MARGIN`` and
    the best of all with the inferred card, and the held card's white (0 to 1)."""

    top: np.ndarray
    near: np.ndarray
    best: np.ndarray
    light: np.ndarray

    def text(self) -> str:
        n = len(self.top)
        dim = self.light < DIM
        return (f"frames {n}  fits (IoU >= {FITS}): best-scored {int((self.top >= FITS).sum())}, "
                f"within the margin {int((self.near >= FITS).sum())}, any proposal "
                f"{int((self.best >= FITS).sum())}  mean IoU of the best-scored "
                f"{float(self.top.mean()) if n else 0.0:.3f}\n"
                f"dim frames (card white below {DIM:.2f} of full scale): {int(dim.sum())}, "
                f"best-scored fits {int((self.top[dim] >= FITS).sum())}; the others "
                f"{int((~dim).sum())}, best-scored fits {int((self.top[~dim] >= FITS).sum())}")


def evaluate_locator(photos: Path, split: str = "test", source: str = "webcam"
                     ) -> LocateReport:
    """:class:`LocateReport` over the frames of ``source`` (webcam frames or phone photos,
    :data:`vision.synth.real_rooms.SOURCES`) of ``photos`` in ``split``."""
    frames = room_frames(photos, split, source)
    if not frames:
        raise FileNotFoundError(f"no labelled {source} frames of the CC BY set under {photos} "
                                f"(split {split})")
    rows = []
    for path in frames:
        room = load_room(path)
        cands = [c for c in candidates(room.image) if c[2] > -0.5]
        ious = [iou_in_photo(q, room.card, room.image.shape) for _, q, _ in cands] or [0.0]
        near = [v for v, c in zip(ious, cands, strict=False) if c[2] >= cands[0][2] - FUSED_MARGIN]
        rows.append((ious[0], max(near, default=0.0), max(ious), float(room.light.mean())))
    top, near, best, light = (np.array(col) for col in zip(*rows, strict=True))
    return LocateReport(top, near, best, light)


def main(argv: list[str] | None = None) -> int:
    from vision.train.corners import DEFAULT_PHOTOS

    ap = argparse.ArgumentParser(prog="python -m vision.locate_eval", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("photos", type=Path, nargs="?", default=DEFAULT_PHOTOS,
                    help="the CC BY photo set (default ../shared/datasets/"
                         "playing-cards-photos-cc-by beside the repository)")
    ap.add_argument("--split", choices=["train", "test"], default="test")
    ap.add_argument("--source", choices=sorted(SOURCES), default="webcam",
                    help="webcam frames of a card held up (default), or phone photos of one "
                         "card lying on a surface")
    args = ap.parse_args(argv)
    print(evaluate_locator(args.photos, args.split, args.source).text())
    return 0


if __name__ == "__main__":
    from vision.module_main import run_module

    run_module("vision.locate_eval")
