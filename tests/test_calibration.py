"""Reliability tables (`vision.calibration`): groups, the expected calibration error, bad input,
and the line `cardtable eval` and `python -m vision.single_card` print."""

from __future__ import annotations

import math

import pytest

from vision.calibration import EDGES, Bin, Reliability, reliability
from vision.evaluate import Report, format_report
from vision.single_card import SingleCardReport


@pytest.mark.parametrize(("conf", "right", "ece", "over", "groups"), [
    # every reading right at 1.0: calibrated
    ([1.0, 1.0, 1.0], [True, True, True], 0.0, 0.0, [(0.99, 1.0, 3, 1.0, 1.0)]),
    # half right at 0.6 and at 0.7 mean 0.65 in one group: gap 0.15
    ([0.6, 0.7, 0.6, 0.7], [True, False, False, True], 0.15, 0.15, [(0.5, 0.8, 4, 0.65, 0.5)]),
    # overconfident: read at 0.995, right 1 in 2
    ([0.995, 0.995], [True, False], 0.495, 0.495, [(0.99, 1.0, 2, 0.995, 0.5)]),
    # two groups: 0.2 right (gap 0.8, under-confident), 0.85 wrong (gap 0.85, over-confident)
    ([0.2, 0.85], [True, False], 0.825, 0.425, [(0.0, 0.5, 1, 0.2, 1.0), (0.8, 0.9, 1, 0.85, 0.0)]),
    # float32 rounding just past 1 counts as 1
    ([1.0000001192092896], [True], 0.0, 0.0, [(0.99, 1.0, 1, 1.0, 1.0)]),
    # the edges: 0 falls in the first group, 0.9 in [0.9, 0.95), 1 in the last
    ([0.0, 0.9, 1.0], [False, True, True], 0.0333, 0.0, [(0.0, 0.5, 1, 0.0, 0.0),
                                                    (0.9, 0.95, 1, 0.9, 1.0),
                                                    (0.99, 1.0, 1, 1.0, 1.0)]),
])
def test_reliability_groups_and_error(conf: list[float], right: list[bool], ece: float,
                                      over: float,
                                      groups: list[tuple[float, float, int, float, float]]
                                      ) -> None:
    r = reliability(conf, right)
    assert r.count == len(conf)
    assert r.ece == pytest.approx(ece, abs=1e-4)
    assert r.over_confidence == pytest.approx(over, abs=1e-4)
    assert [(b.low, b.high, b.count) for b in r.bins] == [g[:3] for g in groups]
    for b, (*_, mean, acc) in zip(r.bins, groups, strict=True):
        assert b.confidence == pytest.approx(mean) and b.accuracy == pytest.approx(acc)


def test_no_readings_give_no_error_figure() -> None:
    r = reliability([], [])
    assert r.count == 0 and r.ece is None and r.over_confidence is None and r.bins == ()
    assert r.text() == "no readings with a confidence"
    assert r.to_json() == {"count": 0, "ece": None, "bins": []}


@pytest.mark.parametrize(("conf", "right", "edges", "message"), [
    ([0.5, 0.6], [True], EDGES, "2 confidences but 1 outcomes"),
    ([1.2], [True], EDGES, r"in \[0, 1\]"),
    ([1.00001], [True], EDGES, r"in \[0, 1\]"),
    ([-0.1], [True], EDGES, r"in \[0, 1\]"),
    ([math.nan], [True], EDGES, r"in \[0, 1\]"),
    ([0.5], [True], (0.0, 0.5), "rise from 0 to 1"),
    ([0.5], [True], (0.0, 0.7, 0.5, 1.0), "rise from 0 to 1"),
    ([0.5], [True], (1.0,), "rise from 0 to 1"),
])
def test_bad_input_is_refused(conf: list[float], right: list[bool], edges: tuple[float, ...],
                              message: str) -> None:
    with pytest.raises(ValueError, match=message):
        reliability(conf, right, edges)


def test_text_names_each_group_and_the_error() -> None:
    text = reliability([0.995, 0.995, 0.6], [True, False, True]).text()
    assert text.startswith("ECE ") and "over 3" in text
    assert "[0.5, 0.8) 1 at 0.600 -> 100.0%" in text and "[0.99, 1] 2 at 0.995 -> 50.0%" in text


def test_eval_report_prints_calibration_only_when_detections_were_scored() -> None:
    plain = Report("t", pairs=[("7R", "7R")], images=1, detections=1).summary()
    assert "calibration" not in plain and "calibration" not in format_report(plain)
    s = Report("t", pairs=[("7R", "7R"), ("AS", "KS")], images=1, detections=2, false_cards=1,
               scored=[(0.99, True), (0.97, False)]).summary()
    assert s["calibration"]["count"] == 2
    assert s["calibration"]["bins"][0] == {"low": 0.95, "high": 0.99, "count": 1,
                                           "confidence": 0.97, "accuracy": 0.0}
    assert "calibration (" in format_report(s) and "ECE 0.4900 over 2" in format_report(s)
    back = Reliability.from_json(s["calibration"])
    assert back.count == 2 and back.bins[1] == Bin(0.99, 1.0, 1, 0.99, 1.0)


def test_single_card_report_leaves_unlocated_photos_out_of_calibration() -> None:
    rep = SingleCardReport((("a.jpg", "7R", "7R", 0.9, "g"), ("b.jpg", "SY", "?", 0.0, "g"),
                            ("c.jpg", "1B", "7B", 0.8, "g")))
    r = rep.reliability()
    assert r.count == 2 and [b.count for b in r.bins] == [1, 1]
    assert "calibration (confidence group" in rep.text() and "over 2" in rep.text()
