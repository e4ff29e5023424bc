"""The index spotter: every printed corner index in a photo found by one small fully
convolutional network (trained by :mod:`vision.train.spotter`, run with onnxruntime).

At each cell of 1/8 of the photo the network says how likely an index's centre lies there (and
a face-down card's centre), how big it is and where in the cell. Peaks of the heat become
:class:`Spot` s, which :class:`vision.photo_detect.PhotoReader` reads with its corner classifier
and pairs into cards. The network also learned to read each index's rank and suit (a second
task that shapes its features); :class:`Spot` carries that reading, but the photo reader does
not use it: beside the corner classifier it added false cards (models/HISTORY.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.classifier import cpu_session

STRIDE = 8
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "JK")
SUITS = ("S", "H", "D", "C")
INDEX_HEAT, BACK_HEAT = 0, 1
SIZE = 2  # log size of an index (2) and of a face-down card (3), in cells
OFFSET = 4  # the centre's offset in its cell (x, y)
RANK = 6
SUIT = RANK + len(RANKS)
HEADS = SUIT + len(SUITS)

DEFAULT_SPOTTER = Path(__file__).resolve().parent.parent / "models" / "index_spotter.onnx"


class SpotterError(ValueError):
    """A spotter model that cannot be loaded (the message says how to build one)."""


@dataclass(frozen=True, slots=True)
class Spot:
    """One peak: ``kind`` ``index`` or ``back``, its box (x0, y0, x1, y1) in pixels of the
    photo (a square of the index's size √(w·h)), the peak's height, and for an index the
    network's own rank and suit probabilities (over :data:`RANKS` and :data:`SUITS`)."""

    kind: str
    box: np.ndarray
    score: float
    rank: np.ndarray | None = None
    suit: np.ndarray | None = None


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


@dataclass
class IndexSpotter:
    """The network and its description (``index_spotter.json``: the scale photos are read at,
    the recipe and what it found on the validation groups)."""

    session: Any
    meta: dict[str, Any]

    @classmethod
    def load(cls, path: str | Path | None = None, threads: int = 1) -> IndexSpotter:
        path = Path(path or DEFAULT_SPOTTER)
        if not path.is_file() or not path.with_suffix(".json").is_file():
            raise SpotterError(f"{path}: no index spotter here; build it with "
                               "`cardtable train --corners --part spotter` (needs the [train] "
                               "extra)")
        return cls(cpu_session(path, threads), json.loads(path.with_suffix(".json").read_text()))

    def maps(self, image: np.ndarray) -> tuple[np.ndarray, float]:
        """The network's raw maps (HEADS, gh, gw) for a BGR photo, read with its long side at
        the JSON's ``long_side`` px (padded to a multiple of 32), and the scale used."""
        h, w = image.shape[:2]
        scale = float(self.meta.get("long_side", 640)) / max(h, w)
        nh, nw = max(32, round(h * scale)), max(32, round(w * scale))
        ph, pw = -(-nh // 32) * 32, -(-nw // 32) * 32
        canvas = np.zeros((ph, pw, 3), np.uint8)
        interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        canvas[:nh, :nw] = cv2.resize(image, (nw, nh), interpolation=interp)
        x = cv2.cvtColor(canvas, cv2.COLOR_BGR2RGB).astype(np.float32).transpose(2, 0, 1)[None]
        out = self.session.run(None, {self.session.get_inputs()[0].name: x / 255})[0][0]
        return np.asarray(out, np.float32), scale

    def spots(self, image: np.ndarray, least: float = 0.1, most: int = 60) -> list[Spot]:
        """Peaks of both heat maps above ``least`` (at most ``most`` of each), highest first."""
        maps, scale = self.maps(image)
        heat = 1 / (1 + np.exp(-maps[:2]))
        peak = heat == np.stack([cv2.dilate(h, np.ones((3, 3), np.float32)) for h in heat])
        out = []
        for kind, k in (("index", INDEX_HEAT), ("back", BACK_HEAT)):
            ys, xs = np.nonzero(peak[k] & (heat[k] >= least))
            order = np.argsort(-heat[k, ys, xs], kind="stable")[:most]
            for y, x in zip(ys[order], xs[order], strict=True):
                cell = maps[:, y, x]
                cx = (x + 0.5 + cell[OFFSET]) * STRIDE / scale
                cy = (y + 0.5 + cell[OFFSET + 1]) * STRIDE / scale
                half = float(np.exp(cell[SIZE + k])) * STRIDE / scale / 2
                box = np.float32([cx - half, cy - half, cx + half, cy + half])
                rank = _softmax(cell[RANK:SUIT]) if kind == "index" else None
                suit = _softmax(cell[SUIT:HEADS]) if kind == "index" else None
                out.append(Spot(kind, box, float(heat[k, y, x]), rank, suit))
        out.sort(key=lambda s: -s.score)
        return out
