"""What ``cardtable detect`` does with one still image, and ``cardtable eval`` measures: the mat's
zones when the mat is seen; without it, one UNO card when the located card surely is one,
else standard cards by their corner indices (:class:`vision.photo_detect.PhotoReader`), else the
one card the single-card locator finds (:mod:`vision.card_locator`).

WHY a module of its own: the photo reader reads standard cards; choosing between it, the UNO
reading of one card and the mat is a decision about the photo, made here once for every
command that reads a still image.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from protocol_runner.cards import BACK, uno_faces
from vision.photo_detect import CORNER_CLASSES, NONE, PhotoReader

UNO_CODES = frozenset(c.code for c in uno_faces())
"""The 54 UNO faces: what P(UNO) sums (:func:`_uno_share`), and the top codes of the located
card that plain detect reads with its corners (:func:`detect_with_photo_fallback`)."""


def is_standard_set(names: Sequence[str]) -> bool:
    """Whether a labelled set's class names are all standard-deck codes (faces, ``JK``,
    ``BACK``): a set the corner reader is made for."""
    known = set(CORNER_CLASSES) - {NONE} | {"JK", BACK}
    return bool(names) and all(n.upper() in known for n in names)


UNO_SURE = 0.9
"""In a photo without the mat, the one card the single-card path finds stands for the photo when
the whole-card networks give the UNO faces at least this probability together; otherwise the
photo reader's cards do (when it finds any). WHY: the photo reader knows standard cards only and
names one in 6-17% of rendered UNO photos (seeds 7), while the single-card path reads one card
and, on photos of standard cards, often a wall or a face. Chosen on renders and the CC BY
training split: the located card's P(UNO) is ≥ 0.5 in 211 of 216 rendered UNO photos (table,
held, webcam, close-up), and ≥ 0.9 in only 1 in 20 of the CC BY training photos (95th
percentile 0.895), so 0.9 keeps the single UNO card wherever it is sure and hands a photo of
standard cards to the photo reader. Since the fifty-fourth session (RULE 49) the located card is
read by the single-card reader's networks (:func:`vision.recognise.single_card_networks`), the
threshold unchanged: 4 of the 557 CC BY training photos reach it, against 18 with the first
network alone."""


def detect_with_photo_fallback(image: np.ndarray, reader: Any,
                               photo: PhotoReader | Callable[[], PhotoReader],
                               auto: bool = False) -> tuple[Any, ...]:
    """All cards of a still image: by the mat pipeline when the mat is seen (``reader``, a
    :class:`vision.recognise.TableReader`), else by their corner indices (``photo``, or a
    function that loads it when it is first needed); where those find no card, the one card
    the single-card locator finds, when it reads as a card outline does
    (:meth:`PhotoReader.located`). With ``auto``, a photo whose one located card is surely a
    UNO face (:data:`UNO_SURE`) is that card, read with its corner indices over the UNO faces
    (:func:`vision.recognise.uno_card_detection`), and a photo in which neither reading of
    standard cards finds a card is its one located card
    (:func:`vision.recognise.single_card_detection`), read with its corner indices over the
    UNO faces too where the whole-card networks name a UNO face. A photo without the mat is
    read at most :data:`vision.photo_size.PHOTO_SIDE` px on its longer side
    (:func:`vision.recognise.on_mat_or_off`).

    WHY the photo reader runs in a second thread beside the UNO check, and is stopped when the
    check finds a UNO card: ``cardtable detect`` has a second core, and onnxruntime and OpenCV
    release the GIL while they work; run one after the other, the two readings made a photo of
    standard cards the slowest case of ``detect`` (README.md, ``bench-vision --detect``). The
    models are shared: an onnxruntime session may run from two threads at once.

    WHY a UNO face the networks are unsure of is read with its corners (fifty-fifth session,
    RULE 50): a photo with no standard card in it whose located card the networks read as a
    UNO face is answered with a UNO face either way, and the corners fused with the networks
    read it as ``--deck uno`` does, far better than the networks alone (rendered UNO photos,
    tuning seeds 7 and 123: 682 → 704 and 689 → 709 of 756, most of it cards held close). The
    test is the networks' top code, not their P(UNO): a card they read as ``BACK`` stays a
    back. Which photos of standard cards are answered with a UNO card does not change (12 of
    the CC BY training split's 557), only which UNO code. Decided on fresh seeds (+25 and +19);
    the real UNO photos without ``--deck``, measured once after: 854 → 924 of 972, 0 false."""
    from vision.recognise import on_mat_or_off

    return on_mat_or_off(image, reader,
                         partial(_without_mat, reader=reader, photo=photo, auto=auto))


def _without_mat(image: np.ndarray, reader: Any, photo: PhotoReader | Callable[[], PhotoReader],
                 auto: bool) -> tuple[Any, ...]:
    """:func:`detect_with_photo_fallback` of a photo in which the mat is not seen."""
    from vision.card_locator import SingleCardError, candidates
    from vision.recognise import (
        single_card_detection,
        single_card_networks,
        uno_card_detection,
    )

    if not auto:
        found, corners = _photo_reader(photo).cards_and_indices(image)
        if found:
            return tuple(found)
        try:
            return _photo_reader(photo).located(image, candidates(image), corners)
        except SingleCardError:
            return ()
    stop = threading.Event()
    with ThreadPoolExecutor(1, thread_name_prefix="photo-reader") as pool:
        pending = pool.submit(lambda: _photo_reader(photo).cards_and_indices(image, stop))
        try:
            try:
                cands = candidates(image)
            except SingleCardError:
                cands = []
            single = single_card_detection(image, reader, cands, single_card_networks(reader))
            sure = bool(single) and _uno_share(single[0], reader) >= UNO_SURE
            if sure:
                stop.set()  # the photo reader's core is the fused reading's now
            elif (read := pending.result())[0]:
                return tuple(read[0])
            elif located := _photo_reader(photo).located(image, cands, read[1]):
                return located
            if not single or not (sure or single[0].code in UNO_CODES):
                return single
            return (uno_card_detection(image, reader, cands) or single[0],)
        finally:
            stop.set()  # a UNO card (or an error): the photo reader stops at its next stage


STILL_DECKS = ("any", "standard", "uno")


def still_detector(reader: Any, deck: str = "any") -> Callable[[np.ndarray], tuple[Any, ...]]:
    """What ``cardtable detect`` does with one still image; ``cardtable eval`` on a
    ``labels.csv`` measures the same function. A photo on the mat is read by zones; without the
    mat, by ``deck``: ``any`` (:func:`detect_with_photo_fallback` with ``auto``: one UNO card
    when surely one, else standard cards by their indices, else the one card found),
    ``standard`` (standard cards by their indices, the photo reader loaded when first needed)
    or ``uno`` (one UNO card, read with its corner indices over the UNO faces:
    :func:`vision.recognise.uno_card_detection`).

    WHY a deck: the game knows its deck (the protocol is the truth), and a photo the whole-card
    classifier is unsure of is then still read as a card of that deck."""
    if deck not in STILL_DECKS:
        raise ValueError(f"unknown deck {deck!r}: use one of {', '.join(STILL_DECKS)}")
    if deck == "uno":
        return partial(_uno_still, reader=reader)
    photo = cache(lambda: PhotoReader.load(cards=reader.classifier))
    return lambda image: detect_with_photo_fallback(image, reader, photo, auto=deck == "any")


def _uno_still(image: np.ndarray, reader: Any) -> tuple[Any, ...]:
    from vision.recognise import on_mat_or_off

    return on_mat_or_off(image, reader, partial(_one_uno_card, reader=reader))


def _one_uno_card(photo: np.ndarray, reader: Any) -> tuple[Any, ...]:
    """A photo without the mat read as one UNO card (``--deck uno``)."""
    from vision.recognise import single_card_detection, uno_card_detection

    found = uno_card_detection(photo, reader)
    return (found,) if found is not None else single_card_detection(photo, reader)


def _photo_reader(photo: PhotoReader | Callable[[], PhotoReader]) -> PhotoReader:
    return photo if isinstance(photo, PhotoReader) else photo()


def _uno_share(detection: Any, reader: Any) -> float:
    """The probability the reader's classifier gives the UNO faces together for ``detection``."""
    if detection.probs is None:
        return 0.0
    return float(sum(p for c, p in zip(reader.classes, detection.probs, strict=True)
                     if c in UNO_CODES))


def photo_options(root: Path, reader: Any, photos: str = "auto", split: str = "all"
                  ) -> tuple[Any, Any]:
    """For ``cardtable eval`` on a YOLO folder: (detect function or None, image filter or None).

    ``photos``: ``yes`` reads every image by :func:`detect_with_photo_fallback`, ``no`` leaves
    the default (mat, else one card per photo), ``auto`` is ``yes`` for a set of standard cards.
    ``split`` keeps only that part of :mod:`vision.photo_split`."""
    from vision.evaluate import read_names
    from vision.photo_split import in_split

    in_split("x", split)  # an unknown split is refused before any image is read
    use = photos == "yes" or (photos == "auto" and is_standard_set(read_names(root / "data.yaml")))
    detect = partial(detect_with_photo_fallback, reader=reader,
                     photo=PhotoReader.load(cards=reader.classifier)) if use else None
    keep = None if split == "all" else (lambda path: in_split(path.name, split))
    return detect, keep
