"""``cardtable simulate``: JSON per CONVENTIONS.md, statistics on 20,000 runs, bad input."""

import argparse
import json
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from protocol_runner.cli import main

FIELDS = ["protocol", "runs", "seed", "shuffles", "helper_cards", "outcomes"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["simulate", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def chi2_critical(df: int, z: float = 3.09) -> float:
    """Upper 0.1% point of chi-square (Wilson–Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def chi2_uniform(counts: list[int]) -> float:
    expected = sum(counts) / len(counts)
    return sum((c - expected) ** 2 / expected for c in counts)


def test_six_card_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "six-card-and", "--x", "1", "--y", "0")
    assert list(data) == [*FIELDS, "runs_per_second"]
    assert data["protocol"] == "six-card-and" and data["runs"] == 1000 and data["seed"] == 1
    assert data["shuffles"] == {"pile_scramble": 1, "random_bisection_cut": 0}
    assert data["helper_cards"] == 2
    assert data["outcomes"] == {"x&y=0 ~x&y=0": 1000}


def test_uno_select_20000_runs_uniform_never_invalid(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "uno-select", "--top", "2R", "--hand", "7R,SY,2G,W,3B,4B,5Y",
                    "--others", "7,7", "--runs", "20000", "--seed", "7")
    assert data["shuffles"]["pile_scramble"] == 7 + 4
    assert data["helper_cards"] == 3 * 107 + 4
    assert set(data["outcomes"]) == {"7R", "2G", "W"}
    counts = list(data["outcomes"].values())
    assert sum(counts) == 20000
    assert chi2_uniform(counts) < chi2_critical(len(counts) - 1)
    assert data["runs_per_second"] > 0


def test_uno_select_v1_counts_one_more_shuffle(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "uno-select", "--top", "2R", "--hand", "7R,SY,2G,W",
                    "--others", "7,7", "--variant", "v1", "--runs", "200")
    assert data["shuffles"]["pile_scramble"] == 4 + 5
    assert data["helper_cards"] == 3 * 107 + 4


def test_lottery_transcripts_same_for_any_valid_vectors(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Two-sample chi-square on the transcript histograms of two validity vectors."""
    a = run_json(capsys, "covert-lottery", "--valid", "1,0,1,1", "--transcripts",
                 "--runs", "20000", "--seed", "1")["transcripts"]
    b = run_json(capsys, "covert-lottery", "--valid", "0,0,0,1", "--transcripts",
                 "--runs", "20000", "--seed", "2")["transcripts"]
    assert set(a) == set(b) and len(a) == 2 ** 4 * 4
    stat = sum((a[k] - b[k]) ** 2 / (a[k] + b[k]) for k in a)
    assert stat < chi2_critical(len(a) - 1)
    none = run_json(capsys, "covert-lottery", "--valid", "0,0,0,0", "--transcripts",
                    "--runs", "2000")
    assert none["outcomes"] == {"none": 2000}
    assert not set(none["transcripts"]) & set(a)  # "none" is public: its transcripts differ


def test_lottery_outcomes_uniform(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "covert-lottery", "--valid", "1,1,0,1,1", "--original",
                    "--runs", "20000")
    assert (data["protocol"], data["variant"]) == ("covert-lottery", "original")
    assert set(data["outcomes"]) == {"0", "1", "3", "4"}
    assert chi2_uniform(list(data["outcomes"].values())) < chi2_critical(3)


def test_transcripts_only_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert "transcripts" not in run_json(capsys, "wild-colour")
    data = run_json(capsys, "wild-colour", "--transcripts", "--runs", "4000")
    assert set(data["transcripts"]) == {"0R", "0Y", "0G", "0B"}
    assert set(data["outcomes"]) == {"R", "Y", "G", "B"}


def test_same_seed_same_result(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("uno-select", "--top", "W", "--colour", "G", "--hand", "7R,2G,+4,5G", "--runs", "300",
            "--seed", "11")
    first, second = run_json(capsys, *args), run_json(capsys, *args)
    first.pop("runs_per_second"), second.pop("runs_per_second")
    assert first == second and set(first["outcomes"]) == {"2G", "+4", "5G"}


def test_exact_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "covert-lottery", "--valid", "1,0,1", "--exact", "--json",
                 "--transcripts"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcomes"] == {"0": "1/2", "2": "1/2"}
    assert sum(Fraction(v) for v in data["transcripts"].values()) == 1


def test_second_copy_of_the_top_card(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "uno-select", "--top", "7R", "--hand", "7R,2G", "--allow-top-copy",
                    "--runs", "100")
    assert set(data["outcomes"]) == {"7R"}


def test_human_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "uno-select", "--top", "2R", "--hand", "7R,SY", "--runs", "100"]) == 0
    out = capsys.readouterr().out
    assert "uno-select: 100 runs" in out and "pile-scramble" in out and "7R" in out
    assert "cards to prepare" in out


def test_helper_deck_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "deck.json"
    good.write_text(json.dumps({"alpha": "0R", "beta": "0G", "theta1": "0B", "theta2": "0Y",
                                "theta3": "9R"}))
    data = run_json(capsys, "uno-select", "--top", "2R", "--hand", "7R,SY", "--others", "7",
                    "--helper-deck", str(good), "--runs", "50", "--transcripts")
    assert all(t.split("/")[1].count("0B") == 2 for t in data["transcripts"])


BAD = [
    (["uno-select", "--top", "2X", "--hand", "7R"], "unknown card code"),
    (["uno-select", "--top", "2R", "--hand", "7R,BACK"], "BACK"),
    (["uno-select", "--top", "7R", "--hand", "7R,2G"], "contains 7R, the card on top"),
    (["uno-select", "--top", "0R", "--hand", "0R,7R", "--allow-top-copy"], "only 1"),
    (["uno-select", "--top", "2R", "--hand", "5B", "--drawn", "2R"], "contains 2R"),
    (["uno-select", "--top", "2R", "--hand", "W,W,W,W,W"], "W"),
    (["uno-select", "--top", "2R", "--hand", "7R", "--others", "60,60"], "only 106"),
    (["uno-select", "--top", "2R", "--hand", "7R", "--others", "a,b"], "--others"),
    (["uno-select", "--top", "2R", "--hand", "7R", "--others", "-3"], "negative"),
    (["uno-select", "--top", "W", "--hand", "7R"], "--colour"),
    (["uno-select", "--top", "2R", "--hand", "7R", "--colour", "G"], "colour card"),
    (["uno-select", "--top", "2R", "--hand", ""], "at least one card"),
    (["uno-select", "--top", "AS", "--hand", "7R"], "not a UNO card"),
    (["uno-select", "--top", "2R", "--hand", "7R", "--runs", "0"], "--runs"),
    (["six-card-and", "--x", "1", "--y", "0", "--runs", "10000000"], "200,000"),
    (["uno-select", "--top", "2R", "--hand", "7R", "--helper-decks", "2"], "only 4 are"),
    (["covert-lottery", "--valid", "1,2,0"], "0 and 1"),
    (["covert-lottery", "--valid", "yes"], "0 and 1"),
    (["covert-lottery", "--valid", ""], "0 and 1"),
    (["covert-lottery", "--valid", "1,0,1,1,1,1,1", "--exact"], "at most 6"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_one_clear_message(argv: list[str], message: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cardtable: error: ") and message in err
    assert "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("mapping", "message"),
    [({"alpha": "1R", "beta": "1R"}, "maps both"),
     ({"alpha": "1R", "beta": "2G", "theta1": "1B"}, "no face for θ2"),
     ({"alpha": "1X"}, "unknown card code"),
     (["1R"], "expected an object")],
)
def test_bad_helper_deck(tmp_path: Path, mapping: object, message: str,
                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(mapping))
    assert main(["simulate", "uno-select", "--top", "2R", "--hand", "7R", "--others", "7",
                 "--helper-deck", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_missing_helper_deck_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "uno-select", "--top", "2R", "--hand", "7R",
                 "--helper-deck", "/nonexistent/deck.json"]) == 2
    assert "No such file" in capsys.readouterr().err


def test_console_script() -> None:
    exe = shutil.which("cardtable")
    assert exe is not None, "pip install -e . provides the cardtable script"
    done = subprocess.run([exe, "simulate", "six-card-and", "--x", "1", "--y", "1", "--json",
                           "--runs", "100"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outcomes"] == {"x&y=1 ~x&y=0": 100}
    bad = subprocess.run([exe, "simulate", "covert-lottery", "--valid", "x"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_simulator_agrees_with_the_exact_distribution(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Goodness of fit of 20,000 simulated transcripts to the exact enumeration."""
    from protocol_runner.exact import lottery_branches
    from protocol_runner.simulate import bit_helper_deck

    exact = lottery_branches((0, 1, 1), False).transcripts(bit_helper_deck())
    runs = 20000
    seen = run_json(capsys, "covert-lottery", "--valid", "0,1,1", "--transcripts",
                    "--runs", str(runs), "--seed", "5")["transcripts"]
    assert set(seen) == set(exact)
    stat = sum((seen[k] - runs * p) ** 2 / (runs * p) for k, p in exact.items())
    assert stat < chi2_critical(len(exact) - 1)


@pytest.mark.parametrize(
    ("command", "registered"),
    [
        ("detect", ["detect"]),
        ("bench-vision", ["bench-vision"]),
        ("simulate", ["simulate"]),
        (None, None),  # `cardtable --help`: every command
        ("detec", None),  # a typo: every command, so argparse can list them
    ],
)
def test_parser_registers_only_the_command_run(command: str | None,
                                               registered: list[str] | None) -> None:
    from protocol_runner.cli import COMMAND_MODULES, build_parser

    sub = next(a for a in build_parser(command)._actions
               if isinstance(a, argparse._SubParsersAction))
    every = [m.replace("_", "-") for m in COMMAND_MODULES]
    assert list(sub.choices) == (registered or every)


def test_a_mistyped_command_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["detec", "x.jpg"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "invalid choice: 'detec'" in err and "'detect'" in err
