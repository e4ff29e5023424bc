"""The runner: a whole scripted game, every planted deviation caught where it shows, blind
windows, bad input refused with the game state intact."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from protocol_runner.cli import main
from protocol_runner.instructions import Instruction, Verdict
from protocol_runner.observations import Event, View, dumps, read_records
from protocol_runner.runner import GameRunner
from protocol_runner.tablesim import FAULTS, TableSimulator, simulated_setup

SCRIPT = Path(__file__).parent / "data" / "observations" / "uno-2h2v.jsonl"
REGENERATE = ("cardtable run --simulate tests/data/observations/uno-2h2v.jsonl --seed 19 "
              "--hand-size 3")


def feed_all(records: list) -> tuple[GameRunner, list[tuple[object, Verdict, Instruction | None]]]:  # type: ignore[type-arg]
    runner = GameRunner()
    log = []
    for record in records:
        out = runner.feed(record)
        verdict = out[0]
        assert isinstance(verdict, Verdict)
        log.append((record, verdict, out[1] if len(out) > 1 else None))
    return runner, log


@pytest.fixture(scope="module")
def shipped() -> tuple[GameRunner, list]:  # type: ignore[type-arg]
    return feed_all([r for _, r in read_records(SCRIPT)])


def test_shipped_script_is_current() -> None:
    """The shipped script is what the simulator writes today (else: regenerate it)."""
    game = TableSimulator(simulated_setup(2, 2, hand_size=3), seed=19).play()
    lines = SCRIPT.read_text().splitlines()
    assert [dumps(r) for r in game.records] == lines, f"stale script: run `{REGENERATE}`"


def test_shipped_game_two_humans_two_virtual_to_a_winner(shipped) -> None:  # type: ignore[no-untyped-def]
    runner, log = shipped
    assert all(v.kind == "accepted" for _, v, _ in log)
    state = runner.state()
    assert state["phase"] == "game over" and state["game"]["winner"]
    kinds = [p["type"] for p in state["game"]["players"]]
    assert kinds.count("human") == 2 and kinds.count("virtual") == 2
    virtual = {p["name"] for p in state["game"]["players"] if p["type"] == "virtual"}
    events = [(e.get("player"), e["event"]) for e in state["timeline"]]
    selections = [e for e in events if e[0] in virtual and e[1] in ("selected a card",
                                                                      "no valid card")]
    assert len(selections) >= 3  # at least three virtual turns
    assert any(p in virtual and e == "no valid card" for p, e in events)  # draw-then-play
    assert any(p in virtual and re.match(r"played (W|\+4) \(", e) for p, e in events)  # a wild
    steps = {(i.protocol, i.step) for _, _, i in log if i is not None and i.protocol}
    assert ("wild colour choice", "3") in steps
    assert any(p.startswith("UNO draw-then-play") for p, _ in steps)


def test_instruction_and_expectation_data(shipped) -> None:  # type: ignore[no-untyped-def]
    _, log = shipped
    step5 = next(i for _, _, i in log if i is not None and i.protocol.startswith("UNO card")
                 and i.step == "5")
    assert step5.total == 12 and step5.blind is None
    assert all(col[0] == "?" for col in step5.expected.work)  # row 1 is being revealed
    assert "remaining cards" in step5.expected.reveal
    assert sum(step5.expected.may_show.values()) == len(step5.expected.work)
    assert step5.expected.may_show.get("W") == 4  # no wild on the pile yet: all four remain
    assert {h[0] for h in step5.highlight} == {"work"} and len(step5.highlight) >= 100
    shuffle = next(i for _, _, i in log if i is not None and "Pile-scramble" in i.text)
    assert shuffle.blind == "shuffle"
    place6 = next(i for _, _, i in log if i is not None and i.step == "6"
                  and i.protocol.startswith("UNO card"))
    assert re.search(r"Place β α below columns? \d", place6.text)


# ------------------------------------------------------------------------- planted faults

CAUGHT = {  # fault → (verdict kind, a pattern the verdict must show, the step it shows at)
    "step5_misread": ("deviation", r"9Y shows \d times \(columns? [\d, ]+\), but \d", "5"),
    "step6_pair": ("deviation", r"work column 2, row 3: expected \w+ \((α|β)\), saw", "6"),
    "step9_theta": ("deviation", r"θ\d \(\w+\) shows \d+ times.*but \w+ holds \d+ cards?", "9"),
    "and_reveal": ("deviation", r"side columns \d+–\d+: the pair reads (αα|ββ)", "5"),
    "lottery_two_ones": ("deviation", r"2 pairs read βα \(side columns \d+, \d+\); at most 1",
                         "7"),
    "invalid_play": ("deviation", r"discard: \S+ is not valid on \S+ \(", ""),
    "wrong_hand": ("deviation", r"hands: \w+ holds \d+ cards? face down; expected \d+", "12"),
    "blind_view": ("refused", r"blind window: .* is a shuffle", "4"),
    "out_of_order": ("refused", r"observation 1 arrived after \d+: out of order", "7"),
}


@pytest.fixture(scope="module")
def faulty() -> tuple[GameRunner, list, list[str]]:  # type: ignore[type-arg]
    game = TableSimulator(simulated_setup(2, 2, hand_size=2), seed=2, faults=FAULTS).play()
    runner, log = feed_all(game.records)
    return runner, log, game.planted


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_planted_fault_is_caught_then_recovered(faulty, fault: str) -> None:  # type: ignore[no-untyped-def]
    runner, log, planted = faulty
    assert fault in planted
    kind, pattern, step = CAUGHT[fault]
    hits = []
    for n, (_, verdict, _) in enumerate(log):
        text = verdict.message + " " + " ".join(p.message for p in verdict.problems)
        if verdict.kind == kind and re.search(pattern, text):
            hits.append(n)
    assert len(hits) == 1, f"{fault}: {len(hits)} verdicts match {pattern!r}"
    n = hits[0]
    bad = log[n][1]
    if kind == "deviation":
        assert bad.recover  # says how to recover
        assert any(p.column or p.zone in ("hands", "discard") for p in bad.problems)
    if step:  # caught at the step where it becomes visible
        current = [i for _, _, i in log[:n] if i is not None][-1]
        assert current.step == step
    assert log[n + 1][1].kind == "accepted"  # the game recovers at once
    assert runner.state()["phase"] == "game over"


def test_correction_and_undo_events(faulty) -> None:  # type: ignore[no-untyped-def]
    _, log, _ = faulty
    corrected = [(r, v) for r, v, _ in log if isinstance(r, Event) and r.event == "card_corrected"]
    assert corrected and corrected[0][1].kind == "accepted"
    assert "after the correction" in corrected[0][1].message
    undo = [(v, i) for r, v, i in log if isinstance(r, Event) and r.event == "step_undone"]
    assert undo and undo[0][0].kind == "accepted" and undo[0][1].text.startswith("Undone.")


# ------------------------------------------------------------------------- bad input

@pytest.fixture()
def at_step5() -> tuple[GameRunner, list]:  # type: ignore[type-arg]
    """A runner just before the card selection's Step 5 of the shipped game."""
    records = [r for _, r in read_records(SCRIPT)]
    runner = GameRunner()
    for n, record in enumerate(records):
        runner.feed(record)
        ins = runner.instruction
        if ins is not None and ins.step == "5" and ins.protocol.startswith("UNO card"):
            return runner, records[n + 1:]
    raise AssertionError("no Step 5 in the script")


@pytest.mark.parametrize(("change", "kind", "message"), [
    (lambda v: replace(v, seq=3), "refused", "out of order"),
    (lambda v: v.corrected("work", 1, 1, "BACK"), "deviation", "column 1, row 1 should be turned"),
    (lambda v: replace(v, work=v.work[:-1]), "deviation", "shows 105 columns; expected 106"),
    (lambda v: replace(v, discard=replace(v.discard, code="9G")), "deviation", "discard: expected"),
    (lambda v: v.corrected("work", 2, 1, "JK"), "deviation", "JK cannot appear here"),
])
def test_bad_views_leave_the_state_intact(at_step5, change, kind: str, message: str) -> None:  # type: ignore[no-untyped-def]
    runner, rest = at_step5
    good = rest[0]
    assert isinstance(good, View)
    before = runner.state()
    verdict = runner.feed(change(good))[0]
    assert isinstance(verdict, Verdict) and verdict.kind == kind
    assert message in verdict.message + " ".join(p.message for p in verdict.problems)
    after = runner.state()
    assert after["instruction"] == before["instruction"] and after["game"] == before["game"]
    again = replace(good, seq=(good.seq or 0) + 1)
    assert runner.feed(again)[0].kind == "accepted"  # the right view is still accepted


@pytest.mark.parametrize(("record", "message"), [
    (Event("shuffle_done", seq=10_000), "no shuffle is in progress"),
    (Event("drew", seq=10_000), "does not apply during a virtual turn"),
    (Event("colour", colour="R", seq=10_000), "does not apply"),
    (Event("card_corrected", zone="work", column=1, row=1, code="7R", seq=10_000),
     "nothing to correct"),
])
def test_untimely_events_are_refused(at_step5, record: Event, message: str) -> None:  # type: ignore[no-untyped-def]
    runner, rest = at_step5
    verdict = runner.feed(record)[0]
    assert verdict.kind == "refused" and message in verdict.message  # type: ignore[union-attr]
    assert runner.feed(rest[0])[0].kind == "accepted"


def test_correction_of_a_missing_cell_is_refused(at_step5) -> None:  # type: ignore[no-untyped-def]
    runner, rest = at_step5
    assert runner.feed(rest[0].corrected("work", 1, 1, "BACK"))[0].kind == "deviation"
    verdict = runner.feed(Event("card_corrected", zone="work", column=500, row=1, code="7R",
                                seq=10_000))[0]
    assert verdict.kind == "refused" and "no column 500" in verdict.message  # type: ignore[union-attr]


def test_abort_turn_restarts_the_virtual_turn(at_step5) -> None:  # type: ignore[no-untyped-def]
    runner, _ = at_step5
    game = runner.state()["game"]
    out = runner.feed(Event("abort_turn", seq=10_000))
    assert out[0].kind == "accepted"  # type: ignore[union-attr]
    instruction = out[1]
    assert isinstance(instruction, Instruction)
    assert instruction.text.startswith("Turn aborted") and instruction.step == "1"
    assert runner.state()["game"] == game


@pytest.mark.parametrize(("humans", "virtual", "variant", "seed"), [
    (1, 3, "v1", 1), (0, 3, "v2", 3),
])
def test_other_mixes_and_v1(humans: int, virtual: int, variant: str, seed: int) -> None:
    setup = replace(simulated_setup(humans, virtual, hand_size=2, start=1),
                    variant=variant)  # type: ignore[arg-type]
    game = TableSimulator(setup, seed=seed).play()
    runner, log = feed_all(game.records)
    assert all(v.kind == "accepted" for _, v, _ in log)
    assert runner.state()["game"]["winner"] == game.winner
    if variant == "v1":
        assert any(i is not None and i.total == 15 for _, _, i in log)


def test_no_setup_and_double_setup() -> None:
    runner = GameRunner()
    assert runner.feed(View(seq=1))[0].kind == "refused"  # type: ignore[union-attr]
    setup = simulated_setup()
    assert runner.feed(setup)[0].kind == "accepted"  # type: ignore[union-attr]
    assert runner.feed(setup)[0].kind == "refused"  # type: ignore[union-attr]


@pytest.mark.parametrize(("helper_deck", "message"), [
    ({"alpha": "1R", "beta": "1R"}, "maps both"),
    ({"alpha": "1R", "beta": "2G", "theta1": "1B"}, "no face for θ2"),
    ({"alpha": "1R", "beta": "2G", "omega": "1B"}, "unknown helper role"),
])
def test_bad_helper_deck_is_refused(helper_deck: dict[str, str], message: str) -> None:
    runner = GameRunner()
    verdict = runner.feed(replace(simulated_setup(), helper_deck=helper_deck))[0]
    assert verdict.kind == "refused" and message in verdict.message  # type: ignore[union-attr]
    assert runner.state()["phase"] == "setup"


def test_black_first_card_is_put_back() -> None:
    runner = GameRunner()
    runner.feed(simulated_setup())
    from protocol_runner.observations import Cell
    verdict = runner.feed(View(discard=Cell("+4"), seq=1))[0]
    assert verdict.kind == "deviation" and "middle of the unplayed deck" in verdict.recover  # type: ignore[union-attr]
    assert runner.feed(View(discard=Cell("5G"), seq=2))[0].kind == "accepted"  # type: ignore[union-attr]


def test_cli_run_script_and_malformed_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lines = SCRIPT.read_text().splitlines()
    path = tmp_path / "obs.jsonl"
    path.write_text("\n".join(lines[:5] + ['{"v": 1, "kind": "view", "work": [["ZZ"]]}']
                              + lines[5:]) + "\n")
    assert main(["run", "--observations", str(path), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "line 6: refused" in out and "unknown card code" in out
    assert re.search(r"summary: 234 records: 234 accepted.*winner: V1", out)
    assert main(["run", "--observations", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read observations file" in capsys.readouterr().err


def test_bench_runner_prints_figures(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["bench-runner", "--repeat", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["columns"] == 107 and result["feed_107_columns"]["n"] >= 5
    assert result["feed"]["median_ms"] > 0
