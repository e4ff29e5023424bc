"""Real frames of one card, as backdrops for rendered cards and as a measure of the locator.

WHY: the card mask (:mod:`vision.card_mask`) learned cards held up to a webcam from drawn rooms
(:func:`vision.synth.photos.webcam_card_photo`: flat walls, an ellipse for a head), and on real
webcam frames it marks the player and the room as card. The CC BY photo set holds real frames
of a hand holding one standard card up to a webcam, in an office with windows and a person in
it. Its two labelled index boxes place that card: a rendered card laid over it is held by a
real hand in a real room, and with the card painted out the frame is a real room with no card.

Only the training split of :mod:`vision.photo_split` is used: its held-out split measures the
single-card locator on real frames (``models/README.md``). The frames are 640 × 640, stretched
from 4:3 webcam frames; they are squeezed back to 4:3. The set's phone photos of one card lying
on a table, floor or sofa (:data:`SOURCES` ``phone``, 3:4 portrait photos stretched to a square)
are read the same way: the card mask's table renders are drawn on the training split's
(:func:`vision.synth.photos.lying_in_room`), and the held-out split measures the locator on real
surfaces. A joker's two boxes are its printed word, not its indices, so no frame of a joker is
used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import cv2
import numpy as np

from vision.photo_cards import INDEX_CENTRE
from vision.photo_split import split_of
from vision.synth.scenes import CARD_MM


@dataclass(frozen=True)
class Source:
    """One kind of real frame of the CC BY set: its folder and the (W, H) its 640 × 640 images
    are squeezed back to."""

    folder: str
    frame: tuple[int, int]


SOURCES = {
    "webcam": Source("webcam_hand_held_UUID", (640, 480)),
    "phone": Source("phone_IMG", (480, 640)),
}
CARD_RATIO = CARD_MM["standard"][1] / CARD_MM["standard"][0]  # a poker card's height / width
LIGHT_PERCENTILE = 90.0
"""The level of the held card's pixels taken for its white (most of a card is its white face;
the print, the fingers on it and the room at its inferred sides lie below)."""


@dataclass(frozen=True)
class RoomFrame:
    """A real frame (BGR, squeezed back to its source's shape, :data:`SOURCES`) and the quad of
    the card in it, clockwise from its top-left corner (as far as two index corners say: the
    card's sides are inferred)."""

    image: np.ndarray
    card: np.ndarray

    @cached_property
    def light(self) -> np.ndarray:
        """The held card's white in this frame, per BGR channel as a share of 255 (computed
        once per frame: :func:`load_room` keeps its frames).

        WHY: a card is a white reference lit by the room's own light; a rendered card laid
        over it must be lit alike, or a dim room's card is the one bright thing in the frame
        (the mask trained so covered less than a fifth of the held card in 22 training frames,
        all dim)."""
        inside = np.zeros(self.image.shape[:2], np.uint8)
        cv2.fillPoly(inside, [np.round(self.card).astype(np.int32)], 1)
        pixels = self.image[inside > 0]
        if not len(pixels):
            return np.ones(3)
        return np.percentile(pixels, LIGHT_PERCENTILE, axis=0) / 255.0


def card_from_indices(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The quad of the card whose two index centres (top-left and bottom-right, either order)
    are ``a`` and ``b``: the rectangle of a card's shape whose inset diagonal runs between them.

    WHY it is determined: a standard card prints its index at those two corners, inset by
    :data:`vision.photo_cards.INDEX_CENTRE` (measured on the labelled training photos); the
    segment between them fixes the card's size and, since the inset rectangle's diagonal leaves
    its sides at a known angle, its turn (up to 180°, which is the same rectangle)."""
    span_w, span_h = 1 - 2 * INDEX_CENTRE[0], (1 - 2 * INDEX_CENTRE[1]) * CARD_RATIO
    v = np.asarray(b, np.float64) - np.asarray(a, np.float64)
    width = float(np.hypot(*v)) / float(np.hypot(span_w, span_h))
    turn = float(np.arctan2(v[1], v[0])) - float(np.arctan2(span_h, span_w))
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    hw, hh = width / 2, width * CARD_RATIO / 2
    corners = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]) @ rot.T
    return (corners + (np.asarray(a) + np.asarray(b)) / 2).astype(np.float32)


def _boxes(root: Path, image: Path) -> np.ndarray:
    """The labelled boxes of ``image`` as an (N, 5) array (:func:`vision.train.corners.
    yolo_boxes`: class, centre x, centre y, width, height)."""
    from vision.train.corners import yolo_boxes

    return np.array(yolo_boxes(root, image), np.float64).reshape(-1, 5)


def room_frames(root: Path, split: str = "train", source: str = "webcam") -> tuple[Path, ...]:
    """The frames of ``source`` (:data:`SOURCES`) in ``root`` (the CC BY set) in ``split`` whose
    label file holds exactly two index boxes of one card, sorted (so a seed draws the same
    frame anywhere)."""
    kind = SOURCES[source]
    joker = _joker_class(root)
    out = []
    for image in sorted((root / "images" / kind.folder).glob("*.jpg")):
        if split_of(image.name) != split:
            continue
        boxes = _boxes(root, image)
        # a joker's boxes are its printed word, not indices at INDEX_CENTRE: no card from them
        if len(boxes) == 2 and boxes[0, 0] == boxes[1, 0] and boxes[0, 0] != joker:
            out.append(image)
    return tuple(out)


def _joker_class(root: Path) -> int | None:
    """The label class of the joker in the set at ``root`` (None without a ``data.yaml``)."""
    from vision.evaluate import read_names

    if not (root / "data.yaml").exists():
        return None
    names = read_names(root / "data.yaml")
    return names.index("JK") if "JK" in names else None


@cache
def load_room(path: Path) -> RoomFrame:
    """The frame at ``path`` squeezed to its source's frame (:data:`SOURCES`, by its folder),
    with its card's quad."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise OSError(f"cannot read the room frame {path}")
    frame = next((k.frame for k in SOURCES.values() if k.folder == path.parent.name), None)
    if frame is None:
        raise ValueError(f"the room frame {path} is in none of the folders "
                         f"{', '.join(k.folder for k in SOURCES.values())}")
    w, h = frame
    boxes = _boxes(path.parents[2], path)
    if len(boxes) != 2:
        raise ValueError(f"the room frame {path} needs two labelled index boxes, not "
                         f"{len(boxes)}")
    centres = boxes[:, 1:3] * (w, h)
    return RoomFrame(cv2.resize(image, frame, interpolation=cv2.INTER_AREA),
                     card_from_indices(centres[0], centres[1]))


def painted_out(room: RoomFrame, grow: float = 1.2) -> np.ndarray:
    """The frame with its card (its quad grown by ``grow`` about its centre) filled in from
    the surroundings (OpenCV's Telea inpainting at half size): a room with no card in it."""
    h, w = room.image.shape[:2]
    centre = room.card.mean(0)
    quad = centre + (room.card - centre) * grow
    small = cv2.resize(room.image, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    hole = np.zeros(small.shape[:2], np.uint8)
    cv2.fillPoly(hole, [np.round(quad / 2).astype(np.int32)], 255)
    filled = cv2.resize(cv2.inpaint(small, hole, 5, cv2.INPAINT_TELEA), (w, h))
    big_hole = cv2.resize(hole, (w, h), interpolation=cv2.INTER_NEAREST)[..., None] > 0
    return np.where(big_hole, filled, room.image)

