"""The colour statistic's own check on renders: its tallies and its refusals."""

from __future__ import annotations

import pytest

from vision.colour_check import GROUPS, main, tally


def test_tally_counts_each_group_once() -> None:
    """54 photos show each face once: 52 coloured ones, and each wild card in both looks."""
    got = tally("table", 7, 54)
    assert list(got) == list(GROUPS)
    assert [n for _, n in got.values()] == [52, 2, 2]
    assert all(0 <= right <= n for right, n in got.values())


def test_the_oval_share_keeps_wild_cards_black_that_the_old_statistic_misses() -> None:
    """Held-up cards, wild cards as current decks print them (a RULE 61 decision seed): the
    old statistic reads 1 of the 4 black, the shipped one all 4; the coloured cards stay."""
    new, old = tally("held", 12525, 108), tally("held", 12525, 108, oval=False)
    assert new["coloured"] == old["coloured"] == (104, 104)
    assert (old["wild as printed"], new["wild as printed"]) == ((1, 4), (4, 4))


@pytest.mark.parametrize(("argv", "message"), [
    (["--seeds", "7", "--kinds", "shown-gripped@thin"], "bare synthetic kinds"),
    (["--seeds", "7", "--kinds", ","], "bare synthetic kinds"),
    (["--seeds", "7", "--kinds", "nowhere"], "nowhere"),
])
def test_bad_kinds_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        main(argv)


def test_main_prints_a_row_per_group(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seeds", "7", "--kinds", "table", "--count", "54"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("seed 7:") and len(out) == 1 + len(GROUPS)
    assert out[1].split()[-1].endswith("/52")
