"""Old Maid, Sevens, Hearts and Muggins through the same runner, journal and commands as UNO:
each game's script plays to its end through ``cardtable run``; a mistake planted in each
protocol step that reveals something (and in a human's move) is caught by ``cardtable run`` at
the step where it shows, and the game goes on; a killed game resumes; a transcript audits."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from protocol_runner.cli import main
from protocol_runner.games.checked import CheckedGame
from protocol_runner.games.script import ScriptTable
from protocol_runner.journal import Journal
from protocol_runner.observations import (
    Cell,
    Event,
    ObservationError,
    PlayerSpec,
    Setup,
    View,
    read_records,
)
from protocol_runner.runner import Session


def cardtable(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    """``cardtable ARGV --json`` in this process: the exit code and the printed objects."""
    capsys.readouterr()
    code = main([*argv, "--json"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


# ------------------------------------------------------------------------- whole games

WHOLE = [  # game, humans, virtual, seed, extra --simulate options, a protocol the game runs
    ("old-maid", 2, 1, 3, [], "Old Maid removal"),
    ("old-maid", 0, 2, 4, [], "Old Maid removal"),
    ("sevens", 3, 1, 2, [], "sevens card selection"),
    ("hearts", 3, 1, 2, ["--target", "20"], "hearts card selection (original lottery)"),
    ("muggins", 1, 1, 1, [], "muggins card selection"),
    ("muggins", 1, 2, 2, [], "muggins card selection"),
]


@pytest.mark.parametrize(("game", "humans", "virtual", "seed", "extra", "protocol"), WHOLE)
def test_whole_game_through_cardtable_run(game: str, humans: int, virtual: int, seed: int,
                                          extra: list[str], protocol: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{game}.jsonl"
    code, out = cardtable(["run", "--simulate", str(path), "--game", game, "--humans",
                           str(humans), "--virtual", str(virtual), "--seed", str(seed), *extra],
                          capsys)
    assert code == 0 and out[0]["protocol_runs"] >= 1
    simulated = out[0]["result"]
    code, out = cardtable(["run", "--observations", str(path)], capsys)
    assert code == 0
    verdicts = [o for o in out if o["type"] == "verdict"]
    assert verdicts and all(v["verdict"] == "accepted" for v in verdicts)
    summary = out[-1]
    assert summary["type"] == "summary" and summary["game"] == game
    assert summary["phase"] == "game over" and summary["result"] == simulated
    steps = [o for o in out if o["type"] == "instruction" and o["protocol"] == protocol]
    assert any(o["expected"]["work"] for o in steps)  # the cells the table must show
    assert any(o["expected"]["may_show"] for o in steps)  # the recogniser's prior at reveals


# ------------------------------------------------------------------------ planted faults

PLAYERS = {
    "old-maid": ([("Ann", False), ("Vic", True), ("Bob", False)], 5),
    "sevens": ([("Ann", False), ("V1", True), ("V2", True)], 3),
    "hearts": ([("Ann", False), ("V1", True), ("Bob", False), ("Cy", False)], 6),
    "muggins": ([("Ann", False), ("V1", True)], 4),
}
SELECTION = [  # the card selection protocol's reveals, the same in every game that uses it
    ("sel_5", "5", r"7R cannot appear here; expected the remaining cards"),
    ("sel_9", "9", r"θ\d \(\w+\) shows \d+ times( \(columns [\d, ]+\))?, but [\w ]+ holds \d+ "
                   r"cards"),
    ("sel_and", "5", r"side columns \d+–\d+: the pair reads (αα|ββ); expected αβ or βα"),
    ("sel_lottery", "7", r"2 pairs read βα \(side columns \d+, \d+\); (at most|exactly) 1 may"),
    ("wrong_hand", "11", r"hands: V1 holds \d+ cards face down; expected \d+"),
]
PLANTED = [  # game, fault, the step it shows at ("": a human's move), what the deviation says
    ("old-maid", "om_6b", "6b", r"7R cannot appear here; expected the cards in play and Jo̅"),
    ("old-maid", "om_6c", "6c", r"work column 1, row 1: expected \w+, saw JK"),
    ("old-maid", "om_6g", "6g", r"□ \(W\) shows \d+ times, but \d+ are expected \(\d+ 1-cards"),
    ("old-maid", "om_6g_pair", "6g", r"work columns \d+–\d+: the pair reads \w+ \w+; expected "
                                     r"pairs of one rank"),
    ("old-maid", "om_8", "8", r"1-card \(1R\) shows \d+ times \(columns [\d, ]+\), but \d+ are "
                              r"expected \(i-cards"),
    ("old-maid", "om_8_joker", "8", r"AS cannot appear here; expected Jo̅"),
    ("old-maid", "om_pairs", "", r"side column 1: a pair is two face-up cards"),
    ("old-maid", "wrong_hand", "9", r"hands: Vic holds \d+ cards face down; expected \d+"),
    *(("sevens", *case) for case in SELECTION),
    ("sevens", "invalid_play", "", r"discard: \w+ cannot be played"),
    *(("hearts", *case) for case in SELECTION),
    ("hearts", "revoke", "", r"discard: Bob did not follow \w earlier this round .*: a revoke"),
    *(("muggins", *case) for case in SELECTION),
    ("muggins", "no_fit", "", r"discard: D\d\d matches neither open end"),
]


@pytest.mark.parametrize(("game", "fault", "step", "pattern"), PLANTED,
                         ids=[f"{g}-{f}" for g, f, _, _ in PLANTED])
def test_planted_mistake_caught_by_cardtable_run(game: str, fault: str, step: str, pattern: str,
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    players, seed = PLAYERS[game]
    script = ScriptTable(game, players, seed=seed, faults=[fault]).play(stop_when_planted=True)
    assert script.planted == [fault]
    path = tmp_path / "faulty.jsonl"
    script.write(path)
    code, out = cardtable(["run", "--observations", str(path)], capsys)
    assert code == 0
    bad = [n for n, o in enumerate(out) if o["type"] == "verdict" and o["verdict"] != "accepted"]
    assert len(bad) == 1, [out[n] for n in bad]
    n = bad[0]
    verdict = out[n]
    text = " ".join([verdict["message"], *(p["message"] for p in verdict.get("problems", []))])
    assert verdict["verdict"] == "deviation" and re.search(pattern, text), text
    assert verdict["recover"] and any(p.get("column") or p.get("zone") in ("hands", "discard")
                                      for p in verdict["problems"])  # says where
    current = [o for o in out[:n] if o["type"] == "instruction"][-1]
    assert current["step"] == step  # caught where it becomes visible
    after = next(o for o in out[n + 1:] if o["type"] == "verdict")
    assert after["verdict"] == "accepted"  # the table fixed it; the game goes on


# ------------------------------------------------------------------- journal, resume, audit

OLD_MAID = [("Ann", False), ("Vic", True), ("Bob", False)]


@pytest.fixture(scope="module")
def old_maid(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """An Old Maid script, the journal of the whole game, and its result."""
    folder = tmp_path_factory.mktemp("om")
    script = ScriptTable("old-maid", OLD_MAID, seed=3).play()
    path = folder / "old-maid.jsonl"
    script.write(path)
    db = folder / "full.db"
    session = Session(Journal.create(db))
    for _, record in read_records(path):
        session.feed(record)
    session.journal.close()
    return path, db, script.result


def answers(path: Path) -> list[list[dict]]:  # type: ignore[type-arg]
    with Journal.open(path) as journal:
        return [outs for _, outs in journal.inputs()]


def test_old_maid_killed_mid_protocol_then_resumed(old_maid: tuple[Path, Path, str],
                                                   tmp_path: Path) -> None:
    script, full, result = old_maid
    db = tmp_path / "game.db"
    proc = subprocess.Popen([sys.executable, "-m", "protocol_runner.cli", "run",
                             "--observations", str(script), "--journal", str(db), "--json",
                             "--pace", "0.01"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        out = json.loads(line)
        if out.get("type") == "instruction" and out["protocol"] == "Old Maid removal" \
                and out["step"] == "8":
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    kept = len(answers(db))
    total = len(answers(full))
    assert 0 < kept < total and answers(db) == answers(full)[:kept]

    resumed = Session.resume(db)
    assert resumed.replay_mismatches == 0 and isinstance(resumed.runner, CheckedGame)
    assert resumed.state()["instruction"]["protocol"] == "Old Maid removal"  # mid-protocol
    resumed.journal.close()
    proc = subprocess.run([sys.executable, "-m", "protocol_runner.cli", "resume", "--journal",
                           str(db), "--observations", str(script), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.splitlines()[-1])
    assert summary["result"] == result and summary["verdicts"] == {"accepted": total - kept}
    assert answers(db) == answers(full)  # as if it had never stopped


def test_old_maid_export_then_audit(old_maid: tuple[Path, Path, str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, db, result = old_maid
    transcript = tmp_path / "om.transcript.jsonl"
    assert main(["export", "--journal", str(db), "-o", str(transcript)]) == 0
    code, out = cardtable(["audit", str(transcript)], capsys)
    assert code == 0 and out[0]["same"] and out[0]["result"] == result
    lines = transcript.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if '"verdict":"accepted"' in line and i > 40)
    lines[n] = lines[n].replace('"verdict":"accepted"', '"verdict":"deviation"')
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(lines) + "\n")
    code, out = cardtable(["audit", str(forged)], capsys)
    assert code == 1 and len(out[0]["differences"]) == 1


# ------------------------------------------------------------------------ the Session API

def setup(game: str, n: int = 3, **kw: object) -> Setup:
    return Setup(players=tuple(PlayerSpec(f"P{i}", i == 1) for i in range(n)), game=game,
                 **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("game", "n"), [("uno", 3), ("old-maid", 3), ("sevens", 3),
                                         ("hearts", 4), ("muggins", 2)])
def test_one_session_api_for_every_game(game: str, n: int, tmp_path: Path) -> None:
    """What the dashboard reads: the same keys for every game."""
    session = Session.start(setup(game, n), journal=tmp_path / "g.db")
    state = session.state()
    assert {"phase", "turn_number", "game", "instruction", "expectation", "blind",
            "last_verdict", "timeline"} <= set(state)
    assert [p["name"] for p in state["game"]["players"]] == [f"P{i}" for i in range(n)]
    assert state["instruction"]["text"] and state["expectation"] is not None
    session.journal.close()
    again = Session.resume(tmp_path / "g.db")
    assert again.state() == state and again.replay_mismatches == 0
    again.journal.close()


@pytest.mark.parametrize(("records", "kind", "message"), [
    ([setup("hearts", 3)], "refused", "Hearts is played by 4 players, not 3"),
    ([setup("muggins", 5)], "refused", "Muggins is played by 2 to 4 players, not 5"),
    ([setup("sevens", helper_deck={"alpha": "1R"})], "refused", "no face for β"),
    ([setup("old-maid", helper_deck={"alpha": "1R"})], "refused", "no face for 1-card"),
    ([setup("sevens"), setup("sevens")], "refused", "already set up"),
    ([setup("sevens"), Event("step_undone", seq=1)], "refused", "does not apply"),
    ([setup("sevens"), Event("card_corrected", zone="work", column=1, row=1, code="AS",
                             seq=1)], "refused", "no view to correct"),
    ([setup("sevens"), View(discard=Cell("AS"), seq=2), View(seq=1)], "refused",
     "out of order"),
])
def test_bad_input_is_refused_with_the_game_intact(records: list, kind: str,  # type: ignore[type-arg]
                                                   message: str) -> None:
    session = Session()
    for record in records[:-1]:
        session.feed(record)
    before = json.dumps(session.state(), sort_keys=True, default=str)
    verdict = session.feed(records[-1])[0]
    assert verdict.kind == kind and message in verdict.line(), verdict.line()
    if len(records) > 1:
        after = json.loads(json.dumps(session.state(), sort_keys=True, default=str))
        assert {k: v for k, v in after.items() if k != "last_verdict"} == {
            k: v for k, v in json.loads(before).items() if k != "last_verdict"}


@pytest.mark.parametrize(("target", "game"), [(0, "hearts"), (20, "sevens")])
def test_setup_target_is_for_hearts_only(target: int, game: str) -> None:
    with pytest.raises(ObservationError, match="target"):
        setup(game, 4, target=target)


@pytest.mark.parametrize(("argv", "message"), [
    (["--game", "uno", "--target", "20"], "--target is for --game hearts"),
    (["--game", "sevens", "--target", "20"], "--target is for --game hearts"),
    (["--game", "sevens", "--faults", "step5_misread"], "unknown fault(s) ['step5_misread']"),
    (["--game", "hearts", "--humans", "1", "--virtual", "1"], "Hearts is played by 4 players"),
])
def test_simulate_bad_options_are_one_line_errors(argv: list[str], message: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--simulate", str(tmp_path / "x.jsonl"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cardtable: error:") and message in err, err
