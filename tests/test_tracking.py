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
        ("AABAA", []),  # flicker on a small table breaks the run
        ("AAABBB", [2, 5]),  # a real change is committed after its own run
        ("AAABAAA", [2]),  # back to the committed reading: nothing new
        ("AAlAAA", [5]),  # a card more (another layout) starts a new run
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
        elif ch == "l":
            seq.append(_tv(i, _view("1R", "2G", "7R")))
        else:
            seq.append(_tv(i, A if ch == "A" else B))
    assert [i for i, _ in _run(seq)] == commits


@pytest.mark.parametrize(
    ("pattern", "commits"),
    [
        ("AAABBB", [2]),  # the prior's reading changed, the camera's own did not: no commit
        ("AAAhBBB", [2, 6]),  # a hand touched the table: the new reading is committed
        ("AAAbBBB", [2, 6]),  # a blind window: anything may have changed under it
        ("AAABBBCCC", [2, 8]),  # the camera's own reading changed (C): committed
        ("AAAhAAABBB", [2, 9]),  # touched and put back: the evidence stands until a commit
    ],
)
def test_a_still_table_is_committed_again_only_with_evidence(pattern: str,
                                                             commits: list[int]) -> None:
    """The runner's prior re-reads a still table after each accepted step; without a hand,
    a blind window or a change in the camera's own reading, nothing physical happened."""
    c = _view("2G", "7R")
    own = {"A": A, "B": A, "C": c}  # B: A's table read differently under the next prior
    seen = {"A": A, "B": B, "C": c}
    sc = StableCommitter(3)
    got = []
    for i, ch in enumerate(pattern):
        if ch == "h":
            tv = _tv(i, A, hand=True)
        elif ch == "b":
            tv = _tv(i, None, blind=True)
        else:
            tv = _tv(i, seen[ch])
        read = own.get(ch, A)
        if sc.update(tv, [c.code for col in read.work for c in col if c.code]) is not None:
            got.append(i)
    assert got == commits


@pytest.mark.parametrize(("codes", "code", "confidence"), [
    (("1R", "1R", "1R"), "1R", 0.6),  # the lowest confidence the window read it with
    (("1R", "7R", "1R"), "1R", 0.8 * 2 / 3),  # read two ways: less sure, by the share
    (("7R", "1R", "1R"), "1R", 0.6 * 2 / 3),
    (("1R", "7R", "2G"), "2G", 0.8 / 3),  # no majority: the latest reading
])
def test_committed_code_is_voted_and_its_confidence_the_lowest(
        codes: tuple[str, ...], code: str, confidence: float) -> None:
    """A matrix of 100 cards, the first read as ``codes`` in three frames: one card in 50 may
    flicker on a still table."""
    seq = [_tv(i, _view(c, *["2G"] * 99, conf=conf))
           for i, (c, conf) in enumerate(zip(codes, (0.9, 0.6, 0.8), strict=True))]
    ((_, v),) = _run(seq)
    assert v.work[0][0].code == code
    assert v.work[0][0].confidence == pytest.approx(confidence)


@pytest.mark.parametrize(("changed", "commits"), [(2, [2]), (3, [])])
def test_more_than_flicker_is_a_change(changed: int, commits: list[int]) -> None:
    """Frames of 100 cards alternating in ``changed`` cards: two may flicker, three is a table
    that moves (the run starts again at each frame)."""
    a = _view(*["2G"] * 100)
    b = _view(*["7R"] * changed, *["2G"] * (100 - changed))
    assert [i for i, _ in _run([_tv(0, a), _tv(1, b), _tv(2, a)])] == commits


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


@pytest.mark.parametrize(("pattern", "commits"), [
    ("AAA|AAA", [2]),  # corrected, the table still: nothing new to commit
    ("AAA|hAAA", [2, 7]),  # corrected, then touched: the same reading is committed again
])
def test_after_a_correction_a_touched_table_is_committed_again(pattern: str,
                                                               commits: list[int]) -> None:
    """A card the camera read as A was corrected; the table then puts the right card there,
    which the camera also reads as A: the runner must see that view."""
    sc = StableCommitter(3)
    got = []
    for i, ch in enumerate(pattern):
        if ch == "|":
            sc.forget_commit()
        elif sc.update(_tv(i, A, hand=ch == "h")) is not None:
            got.append(i)
    assert got == commits
