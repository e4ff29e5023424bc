"""Stability filter: flicker, hands and blind frames never reach the runner."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from protocol_runner.observations import Cell, View
from vision.recognise import TableView
from vision.tracking import StableCommitter, signature


def _view(*codes: str | None, conf: float = 0.9) -> View:
    return View(work=tuple((Cell(c, conf) if c else Cell(None),) for c in codes))


def _tv(i: int, view: View | None, hand: bool = False, blind: bool = False) -> TableView:
    obs = (np.array([0, 0, 50, 50], np.float32),) if hand else ()
    return TableView(i, observation=view, obstructions=obs, blind=blind)


def _run(seq: list[TableView], frames: int = 3) -> list[tuple[int, View]]:
    sc = StableCommitter(frames)
    return [(tv.index, v) for tv in seq if (v := sc.update(tv)) is not None]


A, B = _view("1R", "2G"), _view("1R", "7R")


@pytest.mark.parametrize(
    ("pattern", "commits"),
    [
        ("AAA", [2]),  # stable for 3 frames: committed once
        ("AAAAAA", [2]),  # and never again while unchanged
        ("AABAA", []),  # flicker breaks the run
        ("AAABBB", [2, 5]),  # a real change is committed after its own run
        ("AAABAAA", [2]),  # back to the committed reading: nothing new
        ("AAhAAA", [5]),  # a hand in view resets the run
        ("AAbAAA", [5]),  # a blind frame resets the run
        ("AAxAAA", [5]),  # an unreadable frame resets the run
    ],
)
def test_commit_pattern(pattern: str, commits: list[int]) -> None:
    seq = []
    for i, ch in enumerate(pattern):
        if ch == "h":
            seq.append(_tv(i, A, hand=True))
        elif ch == "b":
            seq.append(_tv(i, None, blind=True))
        elif ch == "x":
            seq.append(TableView(i, error="markers not found"))
        else:
            seq.append(_tv(i, A if ch == "A" else B))
    assert [i for i, _ in _run(seq)] == commits


def test_committed_confidence_is_the_lowest_in_the_window() -> None:
    seq = [_tv(0, _view("1R", conf=0.9)), _tv(1, _view("1R", conf=0.6)),
           _tv(2, _view("1R", conf=0.8))]
    ((_, v),) = _run(seq)
    assert v.work[0][0].confidence == pytest.approx(0.6)


def test_signature_ignores_confidence_and_trailing_empties() -> None:
    a = View(work=((Cell("1R", 0.5), Cell(None)),))
    b = View(work=((Cell("1R", 0.99),),))
    assert signature(a) == signature(b)


def test_frames_must_be_positive() -> None:
    with pytest.raises(ValueError):
        StableCommitter(0)


def test_blind_frames_are_dropped_unprocessed() -> None:
    """During a blind window the reader returns at once: no geometry, no pixels looked at."""
    from vision.geometry import DEFAULT_MAT
    from vision.mat import render_mat
    from vision.recognise import TableReader

    reader = TableReader(classifier=None, blind=True)
    not_an_image = np.empty((0, 0, 3), np.uint8)  # would fail any processing
    tv = reader.read(not_an_image)
    assert tv.blind and tv.detections == () and reader.geometry is None
    reader.blind = False
    empty_mat = cv2.resize(render_mat(DEFAULT_MAT, 1.5), (1280, 720))
    tv = reader.read(empty_mat)
    assert not tv.blind and tv.error is None and tv.detections == ()
    assert reader.geometry is not None
