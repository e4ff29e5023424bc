"""The UNO single-card reading split by expert: the per-photo readings, the report, the command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.classifier import DEFAULT_MODEL, CardClassifier, with_later_trainings
from vision.corner_index import CornerFusion, index_in_photo
from vision.expert_eval import ExpertReading, main, read_experts, report
from vision.single_card import read_single_card, read_single_card_probs, synthetic_photos
from vision.synth.faces import UNO_FACE_CODES


def _reading(truth: str, fused: str, card: str | None, top_left: str | None,
             bottom_right: str | None, group: str = "g") -> ExpertReading:
    return ExpertReading("x.jpg", group, truth, fused, card, top_left, bottom_right, True)


@pytest.mark.parametrize(("readings", "lines"), [
    # all right
    ([_reading("2G", "2G", "2G", "2G", "2G")],
     ["photos 1  fused right 1", "card 1/1 read, top-left 1/1 read, bottom-right 1/1 read",
      "fused errors 0"]),
    # the whole card right, both corners read reverse: the corners outvote it
    ([_reading("2G", "RG", "2G", "RG", "RG"), _reading("7Y", "7Y", "7Y", None, "7Y")],
     ["photos 2  fused right 1", "top-left 0/1 read, bottom-right 1/2 read",
      "fused errors 1, by the experts that had the truth on top: card 1",
      "confusions of top-left (truth->read x n): 2G->RG x1"]),
    # no expert right; a corner not read counts as not read, not as wrong
    ([_reading("5R", "8R", "8R", "8R", None, "webcam")],
     ["fused errors 1, by the experts that had the truth on top: none 1",
      "fused errors per group: webcam 1", "bottom-right 0/0 read"]),
])
def test_report(readings, lines):
    text = report(readings)
    for line in lines:
        assert line in text
    assert "top-left index" not in text  # real photos: where the card's index lies is unknown


def test_report_splits_rendered_corners_by_whether_the_index_is_in_the_photo():
    seen = [("2G", "2G"), ("5R", "6R"), ("7Y", None)]
    readings = [replace(_reading(t, t, t, tl, None), index_in_view=True) for t, tl in seen]
    readings += [replace(_reading("9B", "9B", "9B", "6B", None), index_in_view=False)]
    text = report(readings)
    assert "top-left index in the photo: 3, its corner read right 1, wrong 1, unread 1" in text
    assert "top-left index out of the photo: 1, its corner read right 0, wrong 1, unread 0" in text


@pytest.fixture(scope="module")
def rendered():
    return [(f"held-{i}", "held", code, image)
            for i, (code, image, _) in enumerate(synthetic_photos("held", 4, 7))]


def test_the_fused_reading_is_the_readers_own(rendered):
    """The split reads each photo exactly as ``--deck uno`` does: its fused code is
    :func:`read_single_card`'s, and asking for the parts changes nothing."""
    clf = CardClassifier.load(DEFAULT_MODEL)
    corners = CornerFusion.load(clf.classes, UNO_FACE_CODES)
    both = with_later_trainings(clf, DEFAULT_MODEL)
    readings = list(read_experts(rendered))
    for (_, _, truth, image), r in zip(rendered, readings, strict=True):
        _, code, _ = read_single_card(image, both, UNO_FACE_CODES, corners=corners)
        parts: dict[str, np.ndarray] = {}
        _, again, _, probs, codes = read_single_card_probs(image, both, UNO_FACE_CODES,
                                                           corners=corners, parts=parts)
        assert r.truth == truth and r.fused == code == again
        assert parts["card"].shape == (len(codes),) and parts["corners"].shape == (2, len(codes))
        assert np.isclose(parts["card"].sum(), 1.0) and np.isclose(probs.sum(), 1.0)


def test_a_photo_that_cannot_be_read_is_scored_as_unread():
    (r,) = read_experts([("empty", "g", "2G", np.zeros((0, 0, 3), np.uint8))])
    assert (r.fused, r.card, r.top_left, r.bottom_right, r.colour_right) == (
        "?", None, None, None, None)


def test_the_command_reads_a_labels_file_and_writes_json(tmp_path: Path, rendered, capsys):
    rows = ["image,code,group"]
    for name, group, code, image in rendered[:2]:
        cv2.imwrite(str(tmp_path / f"{name}.png"), image)
        rows.append(f"{name}.png,{code},{group}")
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "experts.json"
    assert main([str(tmp_path / "labels.csv"), "--json", str(out)]) == 0
    assert "photos 2" in capsys.readouterr().out
    assert [r["truth"] for r in json.loads(out.read_text())] == [c for _, _, c, _ in rendered[:2]]


@pytest.mark.parametrize(("argv", "message"), [
    (["synthetic:nope"], "no synthetic set"),
    (["labels.csv", "--group", "nothing-starts-so"], "no photos to read"),
    (["labels.csv", "--printing", "thin:1"], "give synthetic:KIND"),
    (["synthetic:held", "--printing", "nope:1"], "printing"),
    (["synthetic:held", "--codes", "W,7Q"], "no UNO face 7Q"),
    (["labels.csv", "--codes", "W"], "give synthetic:KIND"),
])
def test_bad_input_is_a_clear_error(tmp_path: Path, rendered, argv, message):
    name, group, code, image = rendered[0]
    cv2.imwrite(str(tmp_path / "a.png"), image)
    (tmp_path / "labels.csv").write_text(f"image,code,group\na.png,{code},{group}\n")
    argv = [str(tmp_path / a) if a == "labels.csv" else a for a in argv]
    with pytest.raises(ValueError, match=message):
        main(argv)


def test_a_printing_draws_every_rendered_face_in_it(capsys):
    """``--printing`` renders the kind's photos with every face in that printing (the photos
    of ``synthetic_photos(..., style=...)``), and the command reads them."""
    from vision.expert_eval import _rendered
    from vision.single_card import style_of

    thin = [img for _, _, _, img, _ in _rendered("held", 2, 7, style_of("thin:1"))]
    drawn = [img for _, _, _, img, _ in _rendered("held", 2, 7)]
    want = [img for _, img, _ in synthetic_photos("held", 2, 7, style=style_of("thin:1"))]
    assert all(np.array_equal(a, b) for a, b in zip(thin, want, strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(thin, drawn, strict=True))
    assert main(["synthetic:held", "--count", "2", "--seed", "7", "--printing", "thin:1"]) == 0
    assert "photos 2" in capsys.readouterr().out


def test_codes_read_a_subset_of_the_same_photos():
    """``--codes`` renders only those faces' photos of a set: the same pictures under the same
    names as in the whole set (photo i shows face i mod 54), so a wild-card tally can be read
    from many more photos than a whole set would render."""
    from vision.expert_eval import _rendered

    whole = list(_rendered("held", 110, 7))
    wild = list(_rendered("held", 110, 7, codes=frozenset({"W", "+4"})))
    assert [r[2] for r in wild] == ["W", "+4", "W", "+4"]
    by_name = {name: image for name, _, _, image, _ in whole}
    for name, _, _, image, _ in wild:
        assert np.array_equal(image, by_name[name])


def test_a_rendered_photo_records_whether_its_index_is_in_view():
    """Given the true card's quad (rendered photos), each reading says whether its top-left
    index lies in the photo; without one (a real photo) it says nothing."""
    photos = [(f"handheld-{i}", "handheld", code, image, quad)
              for i, (code, image, quad) in enumerate(synthetic_photos("handheld", 3, 7))]
    readings = list(read_experts(photos + [("real", "g", *photos[0][2:4])]))
    # the first of these runs off the photo at its top-left index, the second shows it
    assert [r.index_in_view for r in readings] == [False, True, False, None]
    for (*_, image, quad), r in zip(photos, readings, strict=False):
        assert r.index_in_view is index_in_photo(quad, image.shape[:2])
