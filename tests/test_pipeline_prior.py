"""The protocol as a prior in the main job: the runner's expectation shapes what the camera reads.

Rendered frames of a card selection layout go through :class:`CameraVision` (the real reader,
classifiers and committer); the runner's hint says how many columns, how tall, and which codes
may show.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from protocol_runner.observations import from_json
from protocol_runner.pipeline import CameraVision
from vision.recognise import TableReader
from vision.synth.video import Camera, render_world


@pytest.mark.parametrize(("hint", "work", "may_show"), [
    (None, [], Counter()),
    ({"work": []}, [], Counter()),
    ({"work": [["BACK", "1B"], ["BACK", None]]}, [["BACK", "1B"], ["BACK", ""]], Counter()),
    ({"work": [["?", "BACK"]], "may_show": {"7R": 1, "+4": 2}}, [["?", "BACK"]],
     Counter({"7R": 1, "+4": 2})),
])
def test_the_hint_is_kept_per_cell(hint, work, may_show, reader):
    vision = CameraVision(reader)
    vision.expect(hint)
    assert vision.expected_work == work
    assert vision.may_show == may_show
    assert reader.columns == (len(work) or None)


def _layout(seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    faces = ["7R", "+4", "SG", "0Y", "RB", "W", "9G", "+2Y", "5B", "3G"]
    return [[str(rng.choice(faces)), "BACK", "2G", "1R"] for _ in range(105)]


def _frames(work: list[list[str]], n: int = 5) -> list[np.ndarray]:
    view = from_json({"v": 1, "kind": "view", "work": work, "discard": "8B"})
    return [Camera().shoot(render_world(view, seed=9))] * n


def _commit(vision: CameraVision, frames: list[np.ndarray]):
    for frame in frames:
        view, cards = vision.process(frame, 0.0)
        if view is not None:
            return view, cards
    raise AssertionError("no view committed")


@pytest.fixture(scope="module")
def reader() -> TableReader:
    return TableReader.load()


def test_the_hint_sets_the_layout_and_the_prior_reads_the_reveal(reader):
    work = _layout(1)
    vision = CameraVision(reader)
    vision.expect({"work": [["?", "BACK", "2G", "1R"]] * 105,
                   "may_show": dict(Counter(col[0] for col in work))})
    assert reader.columns == 105 and reader.rows_per_column == 4
    view, cards = _commit(vision, _frames(work))
    assert len(view.work) == 105
    read = [[cell.code for cell in col] for col in view.work]
    right = sum(a == b for ra, rb in zip(read, work, strict=True)
                for a, b in zip(ra, rb, strict=True))
    assert right >= 0.95 * 420, f"{right}/420"
    assert {c["column"] for c in cards if c["zone"] == "work"} == set(range(1, 106))


@pytest.mark.parametrize(("column", "row", "planted"), [
    (40, 1, "7R"),  # a face where a face-down card belongs
    (40, 2, "1R"),  # β where α belongs (θ/α/β swaps are the likely table mistakes)
    # Not yet: a planted W read from its corner as BACK (both black), and a 2G at (77, 3)
    # read as the expected 1R, both at 0.997: the strip classifier's limits, see the report.
])
def test_a_planted_card_is_never_passed_off_as_a_confident_legal_one(reader, column, row,
                                                                     planted):
    """A card the protocol does not expect there is read as itself (the runner reports a
    deviation) or, when its corner reads less than surely, as the expected code with a near-zero
    confidence (drawn as unsure on the page): never as a confident legal reading."""
    work = _layout(2)
    wrong = [list(col) for col in work]
    wrong[column][row] = planted
    vision = CameraVision(reader)
    vision.expect({"work": work})
    view, _ = _commit(vision, _frames(wrong))
    cell = view.work[column][row]
    assert cell.code == planted or cell.confidence < 0.01, cell
