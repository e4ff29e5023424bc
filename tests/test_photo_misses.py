"""Where the photo reader lost a labelled card (:mod:`vision.photo_misses`, ``eval --misses``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from protocol_runner.cli import main
from tests.test_photo_detect import FAR, LOW, SURE, UNSURE, A, B, _index
from vision.evaluate import Report, format_report
from vision.index_spotter import DEFAULT_SPOTTER
from vision.photo_detect import CORNER_CLASSES, NONE, PAIR_EACH, Corner
from vision.photo_misses import (
    FACE_DOWN,
    MISREAD_BOTH,
    MISREAD_RANK,
    MISREAD_SUIT,
    NOT_SPOTTED,
    READ_NONE,
    STAGES,
    UNSURE_ALONE,
    UNSURE_PAIR,
    miss_stage,
)
from vision.synth.index_crops import table_photo

AT_A = (10.0, 15.0)
"""A label's centre inside box ``A``."""


def _back(box: tuple[float, float, float, float]) -> Corner:
    return Corner(np.array(box, float), 0.9, "back")


@pytest.mark.parametrize(("code", "corners", "stage"), [
    ("BACK", [_index(A, "7H", SURE)], FACE_DOWN),
    ("7H", [], NOT_SPOTTED),
    ("7H", [_index(FAR, "7H", SURE)], NOT_SPOTTED),  # an index elsewhere is not this one
    ("7H", [_back(A)], NOT_SPOTTED),  # a face-down peak is no index
    ("7H", [_index(A, NONE, SURE)], READ_NONE),
    ("7H", [_index(A, "7D", UNSURE)], MISREAD_SUIT),
    ("7H", [_index(A, "8H", UNSURE)], MISREAD_RANK),
    ("7H", [_index(A, "8D", UNSURE)], MISREAD_BOTH),
    ("10S", [_index(A, "10C", UNSURE)], MISREAD_SUIT),  # a two-digit rank is one rank
    ("JK", [_index(A, "JS", UNSURE)], MISREAD_RANK),  # a joker has no suit to misread
    ("7H", [_index(A, "7H", UNSURE)], UNSURE_ALONE),
    ("7H", [_index(A, "7H", UNSURE), _index(B, "7H", UNSURE)], UNSURE_PAIR),
    # a second index that gives the code too little to pair, or lies out of reach: alone
    ("7H", [_index(A, "7H", UNSURE), _index(B, "7D", 0.6, ("7H", LOW))], UNSURE_ALONE),
    ("7H", [_index(A, "7H", UNSURE), _index(FAR, "7H", SURE)], UNSURE_ALONE),
    # where two spotted boxes hold the label, the surer peak's reading decides
    ("7H", [replace(_index(A, "7H", UNSURE), score=0.5), _index(A, "7D", UNSURE)], MISREAD_SUIT),
])
def test_each_miss_gets_the_stage_that_lost_it(code: str, corners: list[Corner],
                                               stage: str) -> None:
    assert miss_stage(code, *AT_A, corners, CORNER_CLASSES, PAIR_EACH) == stage


def test_the_report_counts_misses_by_stage() -> None:
    rep = Report("yolo x", pairs=[("7H", "missed"), ("8S", "missed"), ("9D", "9D")])
    rep.misses.update([NOT_SPOTTED, MISREAD_RANK])
    summary = rep.summary()
    assert summary["missed_by_stage"] == {NOT_SPOTTED: 1, MISREAD_RANK: 1}
    assert f"missed labels by stage: {NOT_SPOTTED} 1, {MISREAD_RANK} 1" in format_report(summary)
    assert "missed_by_stage" not in Report("yolo x", pairs=[("7H", "missed")]).summary()


@pytest.mark.parametrize("target", ["scenes", "tiles", "labels.csv"])
def test_misses_are_refused_where_no_corner_reader_reads(target: str,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(["eval", target, "--misses"]) == 2
    assert "--misses needs a YOLO folder of standard cards" in capsys.readouterr().err


def _rendered_set(root: Path, photos: int) -> None:
    """A YOLO folder of rendered photos of standard cards, labelled as the CC BY set is."""
    from protocol_runner.cards import RANKS, SUITS

    names = [f"{r}{s}" for s in SUITS for r in RANKS] + ["BACK"]
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "data.yaml").write_text(f"names: {json.dumps(names)}\n")
    for k in range(photos):
        image, labels = table_photo(np.random.default_rng([11, k]), cards=4)
        h, w = image.shape[:2]
        cv2.imwrite(str(root / "images" / f"r{k}.png"), image)
        rows = [f"{names.index(code)} {(x0 + x1) / 2 / w} {(y0 + y1) / 2 / h} "
                f"{(x1 - x0) / w} {(y1 - y0) / h}" for code, (x0, y0, x1, y1) in labels]
        (root / "labels" / f"r{k}.txt").write_text("\n".join(rows) + "\n")


@pytest.mark.skipif(not DEFAULT_SPOTTER.is_file(), reason="no trained spotter in models/")
def test_every_missed_label_of_a_set_gets_one_stage(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _rendered_set(tmp_path, 6)
    assert main(["eval", str(tmp_path), "--photos", "yes", "--misses", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["missed"] > 0  # these small rendered cards are missed at several stages
    stages = out["missed_by_stage"]
    assert set(stages) <= set(STAGES) and len(stages) >= 2
    assert sum(stages.values()) == out["missed"]
