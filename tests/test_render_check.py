"""The rules' rendered check (`python -m vision.render_check`): its table from readings, a real
run of the shipped reader on rendered photos, and bad arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.card_locator import SingleCardError
from vision.render_check import Reading, main, summary


def _r(kind: str, seed: int, index: int, read: str, p: float, code: str = "5R") -> Reading:
    return Reading(kind, seed, index, code, read, p, "upright")


READINGS = [
    # seed 1: near 1 of 2 right (a wrong one at 0.97), table 2 of 2
    _r("near", 1, 0, "5R", 0.99), _r("near", 1, 1, "6R", 0.97),
    _r("table", 1, 0, "5R", 1.0), _r("table", 1, 1, "5R", 0.6),
    # seed 2: near 2 of 2, table 1 of 2 (wrong at 0.3: under the sure line)
    _r("near", 2, 0, "5R", 0.9), _r("near", 2, 1, "5R", 0.99),
    _r("table", 2, 0, "5R", 1.0), _r("table", 2, 1, "SR", 0.3),
]


@pytest.mark.parametrize(("line", "expected"), [
    (0, "top-1 of 2 renders per kind   near  table     sum  mean ECE"),
    # near: 0.99 right, 0.97 wrong: ECE 0.49; table: 1.0 right, 0.6 right: 0.2 -> mean 0.345
    (1, "seed 1                           1      2       3  0.3450"),
    # near: 0.9 and 0.99 right: (0.1 + 0.01) / 2; table: 1.0 right, 0.3 wrong: 0.15 -> 0.1025
    (2, "seed 2                           2      1       3  0.1025"),
    (3, "seeds merged, per kind: over-confident ECE / ECE"),
    # near merged: 0.9 right (under), [0.95, 0.99) 0.97 wrong (over 0.97), 0.99 x2 right
    (4, "  near   0.2425 / 0.2725 (4 photos)"),
    (5, "  table  0.0750 / 0.1750 (4 photos)"),
    (6, "readings at 0.95 or more wrong: seed 1 1 of 3, seed 2 0 of 2"),
])
def test_summary_is_the_rules_table(line: int, expected: str) -> None:
    assert summary(READINGS).splitlines()[line] == expected


def test_a_real_run_reads_rendered_table_photos_and_keeps_every_reading(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "readings.jsonl"
    assert main(["--seeds", "7", "--kinds", "table", "--count", "2", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # photo i shows UNO face i: 0R and 1R, a card lying on a table, read right and surely
    assert [(r["kind"], r["seed"], r["index"], r["code"]) for r in rows] == [
        ("table", 7, 0, "0R"), ("table", 7, 1, "1R")]
    assert all(r["read"] == r["code"] and r["confidence"] > 0.5 for r in rows)
    assert "seed 7" in capsys.readouterr().out


def test_a_kind_read_in_one_printing_is_those_renders_read(tmp_path: Path) -> None:
    """``KIND@PRINTING`` reads ``synthetic_photos(KIND, ..., style)`` of that printing (a font no
    render uses), each photo as ``--deck uno`` reads it, and labels its rows so."""
    from vision.render_check import shipped_uno_reader
    from vision.single_card import read_single_card, style_of, synthetic_photos
    from vision.synth.faces import UNO_FACE_CODES

    out = tmp_path / "readings.jsonl"
    assert main(["--seeds", "7", "--kinds", "shown@thin:1", "--count", "2",
                 "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    networks, corners = shipped_uno_reader()
    for row, (code, image, _) in zip(rows, synthetic_photos("shown", 2, 7, style_of("thin:1")),
                                     strict=True):
        _, read, p = read_single_card(image, networks, UNO_FACE_CODES, None, corners)
        assert (row["kind"], row["code"], row["read"]) == ("shown@thin:1", code, read)
        assert row["confidence"] == pytest.approx(p, abs=1e-6)


def test_thin_draws_a_printing_per_face_in_the_unseen_font() -> None:
    """``@thin`` (no seed): each photo's face in a printing of its own, drawn from the photo's
    generator, its numerals in the font no training render uses; ``@thin:SEED`` is one."""
    import numpy as np

    from vision.render_check import split_kind
    from vision.synth.faces import FONTS, UNSEEN_FONTS, printing

    kind, style = split_kind("shown-gripped@thin")
    assert kind == "shown-gripped" and callable(style)
    drawn = [style(np.random.default_rng([7, i])) for i in range(4)]
    assert {FONTS[s.font] for s in drawn} == set(UNSEEN_FONTS)
    assert len({s.symbol_scale for s in drawn}) == 4
    assert split_kind("shown@thin:1") == ("shown", printing("thin:1"))
    assert split_kind("table") == ("table", None)


def test_wild_prints_the_wild_cards_as_current_decks_and_keeps_the_coloured_faces() -> None:
    """``@wild``: each face in the printing the bare kind draws for it, its wild cards in the
    current look; a coloured face's photo is the bare kind's, pixel for pixel."""
    import numpy as np

    from vision.render_check import split_kind
    from vision.single_card import synthetic_photos

    kind, style = split_kind("shown@wild")
    assert kind == "shown" and callable(style)
    assert style(np.random.default_rng(3)).current_wild
    bare = list(synthetic_photos("shown", 54, 7))
    wild = list(synthetic_photos("shown", 54, 7, style))
    for (code, a, _), (_, b, _) in zip(bare, wild, strict=True):
        assert bool(np.any(a != b)) == (code in ("W", "+4")), code
    only = list(synthetic_photos("shown", 54, 7, style, codes=("W", "+4")))
    assert [code for code, _, _ in only] == ["W", "+4"]
    assert all(np.array_equal(a, b) for (_, a, _), (_, b, _) in zip(only, wild[52:], strict=True))


def test_a_deck_is_enrolled_in_one_printing() -> None:
    from vision.single_card import evaluate_synthetic

    with pytest.raises(SingleCardError, match="thin:1"):
        evaluate_synthetic("table", 1, object(), seed=7, enrol_style="thin")


def test_deck_any_answers_as_plain_detect_does(tmp_path: Path) -> None:
    """`--deck any` scores plain `cardtable detect`'s surest detection, the table of RULE 49 and
    RULE 50; each reading is what `still_detector(reader, "any")` answers for that photo."""
    import numpy as np

    from vision.render_check import plain_detector
    from vision.single_card import synthetic_photos

    out = tmp_path / "readings.jsonl"
    assert main(["--seeds", "7", "--kinds", "webcam", "--count", "2", "--deck", "any",
                 "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row, (code, image, _) in zip(rows, synthetic_photos("webcam", 2, 7), strict=True):
        best = max(plain_detector()(image), key=lambda d: d.confidence)
        assert (row["code"], row["read"]) == (code, best.code)
        assert row["confidence"] == pytest.approx(best.confidence, abs=1e-6)
    assert np.mean([r["read"] == r["code"] for r in rows]) == 1.0


@pytest.mark.parametrize(("argv", "error", "message"), [
    (["--seeds", "7", "--kinds", "nosuch"], SingleCardError, "synthetic:handheld"),
    (["--seeds", "7", "--kinds", ","], ValueError, "names no kind"),
    (["--seeds", "7", "--kinds", "table@"], ValueError, "names no printing"),
    (["--seeds", "7", "--kinds", "table@nosuch:1"], SingleCardError, "thin:7"),
    (["--seeds", "7", "--kinds", "nosuch@thin:1"], SingleCardError, "synthetic:shown"),
    (["--seeds", "7", "--count", "0"], ValueError, "at least 1"),
    (["--seeds", "7", "--jobs", "0"], ValueError, "at least 1"),
])
def test_bad_arguments_say_what_to_give(argv: list[str], error: type[Exception],
                                        message: str) -> None:
    with pytest.raises(error, match=message):
        main(argv)


def test_an_unknown_deck_names_the_decks() -> None:
    from vision.render_check import check

    with pytest.raises(ValueError, match="uno, any"):
        check(["table"], [7], 1, deck="standard")
