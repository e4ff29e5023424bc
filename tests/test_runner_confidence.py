"""Cards read unsurely: the runner does not take a card the camera read with a confidence below
the setup's ``min_confidence`` (default ``runner.MIN_CONFIDENCE``) as read. The step is not
accepted; an ``unsure`` deviation names the card, what was read and how surely, what was
expected; a confirmation (``card_corrected`` with the code read) or a correction resolves it,
and a correction to a wrong card is the normal deviation of that step. Nothing is lost: the
state stays, the journal replays it. The last tests run the real camera pipeline (renderer,
reader, protocol prior) on a planted card that the prior forces to the legal code.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from protocol_runner.cli import main
from protocol_runner.games.checked import CheckedGame
from protocol_runner.instructions import Verdict
from protocol_runner.journal import Journal
from protocol_runner.observations import (
    Cell,
    Event,
    ObservationError,
    PlayerSpec,
    Setup,
    View,
    dumps,
    parse_line,
    read_records,
)
from protocol_runner.runner import MIN_CONFIDENCE, GameRunner, Session

SCRIPT = Path(__file__).parent / "data" / "observations" / "uno-2h2v.jsonl"
RECORDS = [r for _, r in read_records(SCRIPT)]
PLAY, STEP5, STEP6, SHUFFLE = 2, 11, 12, 14  # H1 plays 5R; card selection steps 5 and 6; step 8
ALPHA, BETA = "1R", "2G"  # the default helper deck's α and β


def runner_at(n: int, min_confidence: float | None = None) -> GameRunner:
    """A runner fed the shipped script's first ``n`` records."""
    runner = GameRunner()
    setup = RECORDS[0]
    assert isinstance(setup, Setup)
    for record in [replace(setup, min_confidence=min_confidence), *RECORDS[1:n]]:
        runner.feed(record)
    return runner


def edited(view: View, edits: list[tuple[int, int, str | None, float]]) -> View:
    """``view`` with work cells (1-based column, row) read as ``code`` (``None``: the card
    there) at ``confidence``."""
    work = [list(col) for col in view.work]
    for column, row, code, confidence in edits:
        work[column - 1][row - 1] = Cell(code or work[column - 1][row - 1].code, confidence)
    return replace(view, work=tuple(tuple(col) for col in work))


def truth(at: int, column: int, row: int) -> str:
    view = RECORDS[at]
    assert isinstance(view, View)
    code = view.work[column - 1][row - 1].code
    assert code is not None
    return code


def other_helper(at: int, column: int, row: int) -> str:
    """The other card of a validity pair (α for β, β for α): a wrong card that is legal there."""
    return BETA if truth(at, column, row) == ALPHA else ALPHA


def kind(verdict: Verdict) -> str:
    return "unsure" if verdict.unsure else verdict.kind


def test_the_script_is_where_these_tests_expect_it() -> None:
    runner = runner_at(STEP5)
    assert runner.instruction is not None and runner.instruction.step == "5"
    assert runner_at(STEP6).instruction.step == "6"  # type: ignore[union-attr]
    assert "shuffle" in str(runner_at(SHUFFLE).instruction.blind)  # type: ignore[union-attr]
    assert {truth(STEP6, 1, 3), truth(STEP6, 1, 4)} == {ALPHA, BETA}
    assert 0 < MIN_CONFIDENCE < 1


# at: the view of the script; edits: (column, row, code or None for the card there, confidence);
# answers: card_corrected events (column, row, code; "other" = the other helper card), each
# answered in turn; verdicts: the runner's answer to the view, then to each event.
CASES = [
    ("confident legal reveal", STEP5, [(1, 1, None, 0.95)], [], ["accepted"]),
    ("at the threshold is sure enough", STEP5, [(1, 1, None, MIN_CONFIDENCE)], [], ["accepted"]),
    ("unsure reveal, confirmed", STEP5, [(1, 1, None, 0.05)], [(1, 1, None)],
     ["unsure", "accepted"]),
    ("two unsure cards, confirmed one by one", STEP5, [(1, 1, None, 0.05), (7, 1, None, 0.0)],
     [(1, 1, None), (7, 1, None)], ["unsure", "unsure", "accepted"]),
    ("unsure face-down card, confirmed", STEP5, [(3, 2, None, 0.1)], [(3, 2, None)],
     ["unsure", "accepted"]),
    ("misread pair card, corrected to the right one", STEP6, [(1, 3, "other", 0.1)],
     [(1, 3, None)], ["unsure", "accepted"]),
    ("unsure pair card, corrected to the wrong card that lies there", STEP6,
     [(1, 3, None, 0.01)], [(1, 3, "other")], ["unsure", "deviation"]),
    ("a confident wrong card is the normal deviation", STEP6, [(1, 3, "other", 1.0)], [],
     ["deviation"]),
    ("an unsure wrong card is asked about first, then caught", STEP6, [(2, 4, "other", 0.15)],
     [(2, 4, "other")], ["unsure", "deviation"]),
]


@pytest.mark.parametrize(("at", "edits", "answers", "verdicts"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_unsure_cards_are_confirmed_or_corrected_before_the_step_is_taken(
        at: int, edits: list[tuple[int, int, str | None, float]],
        answers: list[tuple[int, int, str | None]], verdicts: list[str]) -> None:
    runner = runner_at(at)
    before = runner.instruction
    view = RECORDS[at]
    assert isinstance(view, View) and view.seq is not None
    edits = [(c, r, other_helper(at, c, r) if code == "other" else code, p)
             for c, r, code, p in edits]
    got = [runner.feed(edited(view, edits))[0]]
    for n, (column, row, code) in enumerate(answers, start=1):
        code = other_helper(at, column, row) if code == "other" else code or truth(at, column,
                                                                                    row)
        got.append(runner.feed(Event("card_corrected", zone="work", column=column, row=row,
                                     code=code, seq=view.seq + n))[0])
    assert [kind(v) for v in got] == verdicts, [v.line() for v in got]
    if verdicts[-1] == "accepted":
        assert runner.instruction is not before  # the step was taken
        return
    # not taken: the same step, and the table's right view is then accepted (nothing was lost)
    assert runner.instruction is before
    if verdicts[-1] == "deviation":  # caught at this step, naming the pair card
        (wrong,) = got[-1].problems
        assert (wrong.zone, wrong.column, wrong.row) == ("work", *edits[-1][:2])
        assert wrong.saw == other_helper(at, *edits[-1][:2])  # the wrong card that lies there
        assert wrong.confidence is None and f"expected {truth(at, *edits[-1][:2])} (" \
            in wrong.message
    assert runner.feed(replace(view, seq=view.seq + 10))[0].kind == "accepted"


def test_the_unsure_deviation_says_which_card_what_was_read_and_what_to_do() -> None:
    runner = runner_at(STEP6)
    view = RECORDS[STEP6]
    assert isinstance(view, View)
    code = other_helper(STEP6, 5, 3)
    verdict = runner.feed(edited(view, [(5, 3, code, 0.004)]))[0]
    assert verdict.kind == "deviation" and verdict.unsure
    (problem,) = verdict.problems
    assert (problem.zone, problem.column, problem.row, problem.saw) == ("work", 5, 3, code)
    assert problem.confidence == 0.004
    assert problem.expected == f"{truth(STEP6, 5, 3)} ({'α' if code == BETA else 'β'})"
    assert "work column 5, row 3: the camera read" in problem.message
    assert "only under 1% sure" in problem.message
    assert verdict.message.startswith("confirm this card")
    assert "confirm it" in verdict.recover and "correct it" in verdict.recover
    data = verdict.to_json()
    assert data["verdict"] == "deviation" and data["unsure"] is True
    assert data["problems"][0]["confidence"] == 0.004
    assert verdict.line().startswith(f"#{view.seq} UNSURE: confirm this card")
    assert "unsure" not in runner.feed(replace(view, seq=(view.seq or 0) + 1))[0].to_json()


@pytest.mark.parametrize(("min_confidence", "confidence", "unsure"), [
    (None, MIN_CONFIDENCE - 0.01, True),
    (None, MIN_CONFIDENCE, False),
    (0.5, 0.3, True),
    (0.5, 0.5, False),
    (0.0, 0.0, False),  # a table that never wants to be asked
    (1.0, 0.9999, True),  # … or always
])
def test_the_threshold_is_an_option_of_the_setup(min_confidence: float | None,
                                                  confidence: float, unsure: bool) -> None:
    runner = runner_at(STEP5, min_confidence)
    view = RECORDS[STEP5]
    assert isinstance(view, View)
    verdict = runner.feed(edited(view, [(2, 1, None, confidence)]))[0]
    assert verdict.unsure is unsure and verdict.ok is not unsure


def test_a_confirmed_card_stays_confirmed_while_it_reads_the_same() -> None:
    """Asked once, not at every step: the camera reads the same card unsurely at step 6 too."""
    runner = runner_at(STEP5)
    step5, step6 = RECORDS[STEP5], RECORDS[STEP6]
    assert isinstance(step5, View) and isinstance(step6, View) and step5.seq is not None
    assert runner.feed(edited(step5, [(4, 1, None, 0.02)]))[0].unsure
    runner.feed(Event("card_corrected", zone="work", column=4, row=1, code=truth(STEP5, 4, 1),
                      seq=step5.seq + 1))
    assert runner.feed(edited(step6, [(4, 1, None, 0.02)]))[0].ok
    # a card never confirmed is asked about at the step where it reads unsurely
    assert runner_at(STEP6).feed(edited(step6, [(4, 1, None, 0.02)]))[0].unsure


def test_a_shuffle_ends_every_confirmation_and_views_inside_it_are_refused() -> None:
    runner = runner_at(SHUFFLE - 1)
    view = RECORDS[SHUFFLE - 1]
    assert isinstance(view, View) and view.seq is not None
    assert runner.feed(edited(view, [(1, 1, None, 0.0)]))[0].unsure
    runner.feed(Event("card_corrected", zone="work", column=1, row=1, code=truth(SHUFFLE - 1, 1,
                                                                                  1),
                      seq=view.seq + 1))
    assert runner.sure.cells and runner.instruction.blind == "shuffle"  # type: ignore[union-attr]
    verdict = runner.feed(replace(edited(view, [(2, 2, None, 0.0)]), seq=view.seq + 2))[0]
    assert verdict.kind == "refused" and "blind window" in verdict.message
    runner.feed(replace(RECORDS[SHUFFLE], seq=view.seq + 3))
    assert not runner.sure.cells


def test_an_unsure_discard_is_confirmed_before_the_play_counts() -> None:
    runner = runner_at(PLAY)
    view = RECORDS[PLAY]
    assert isinstance(view, View) and view.seq is not None and view.discard.code == "5R"
    hands = runner.state()["game"]["players"]
    verdict = runner.feed(replace(view, discard=Cell("5R", 0.1)))[0]
    assert verdict.unsure and verdict.problems[0].zone == "discard"
    assert verdict.problems[0].message == ("the discard pile: the camera read 5R, but is only "
                                           "10% sure; expected a new card")
    assert runner.state()["game"]["players"] == hands  # nothing was played yet
    after = runner.feed(Event("card_corrected", zone="discard", code="5R", seq=view.seq + 1))[0]
    assert after.ok and after.message == "after the correction: H1 played 5R"


def test_other_games_ask_too() -> None:
    """Old Maid, Sevens, Hearts and Muggins (``CheckedGame``) take the same answers."""
    game = CheckedGame()
    game.feed(Setup(players=(PlayerSpec("Ann", False), PlayerSpec("V1", True),
                             PlayerSpec("Bob", False)), game="sevens"))
    state = game.game
    assert state is not None and not game.virtual[state.turn]
    card = str(state.table.playable()[0])  # type: ignore[union-attr]
    verdict = game.feed(View(discard=Cell(card, 0.05), seq=1))[0]
    assert verdict.unsure and verdict.problems[0].saw == card
    assert game.shown is None
    assert game.feed(Event("card_corrected", zone="discard", code=card, seq=2))[0].ok
    assert game.shown == card


def test_resume_replays_unsure_verdicts_and_confirmations(tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    session = Session(Journal.create(path))
    for record in RECORDS[:STEP5]:
        session.feed(record)
    view = RECORDS[STEP5]
    assert isinstance(view, View) and view.seq is not None
    assert session.feed(edited(view, [(1, 1, None, 0.05), (2, 1, None, 0.05)]))[0].unsure  # type: ignore[union-attr]
    session.feed(Event("card_corrected", zone="work", column=1, row=1, code=truth(STEP5, 1, 1),
                       seq=view.seq + 1))
    state = session.state()
    session.journal.close()
    resumed = Session.resume(path)
    assert resumed.replay_mismatches == 0
    assert resumed.state() == state
    assert state["last_verdict"]["unsure"] is True  # one card is still to confirm
    assert [p["column"] for p in state["last_verdict"]["problems"]] == [2]
    done = resumed.feed(Event("card_corrected", zone="work", column=2, row=1,
                              code=truth(STEP5, 2, 1), seq=view.seq + 2))[0]
    assert done.ok and resumed.state()["instruction"]["step"] == "6"


BAD = [
    ('{"v": 1, "kind": "view", "work": [[["7R", 1.5]]]}',
     r"work column 1 row 1: confidence must be a number in \[0, 1\], got 1.5"),
    ('{"v": 1, "kind": "view", "work": [[["7R", -0.1]]]}',
     r"work column 1 row 1: confidence must be a number in \[0, 1\], got -0.1"),
    ('{"v": 1, "kind": "view", "discard": ["7R", "high"]}', "discard: confidence must be"),
    ('{"v": 1, "kind": "view", "discard": ["7R", true]}', "discard: confidence must be"),
    ('{"v": 1, "kind": "view", "discard": ["7R"]}', r"a cell list is \[code, confidence\]"),
    ('{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "human"}, {"name": "V", '
     '"type": "virtual"}], "min_confidence": 1.5}', "min_confidence .* a number in \\[0, 1\\]"),
    ('{"v": 1, "kind": "setup", "players": [{"name": "A", "type": "human"}, {"name": "V", '
     '"type": "virtual"}], "min_confidence": "0.2"}', "min_confidence"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_bad_confidences_are_clear_errors(line: str, message: str) -> None:
    with pytest.raises(ObservationError, match=message):
        parse_line(line)


def test_a_bad_confidence_line_is_refused_and_the_game_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    setup = replace(RECORDS[0], min_confidence=0.3)  # type: ignore[arg-type]
    assert parse_line(dumps(setup)) == setup  # the option survives a journal or a script
    path = tmp_path / "obs.jsonl"
    path.write_text("\n".join([dumps(setup), BAD[0][0], dumps(RECORDS[1])]) + "\n")
    assert main(["run", "--observations", str(path)]) == 1
    out = capsys.readouterr().out
    assert "line 2" in out and "confidence must be a number in [0, 1]" in out
    assert "first card 4R" in out


# ------------------------------------------------------------- the real camera pipeline


@pytest.fixture(scope="module")
def reader():  # type: ignore[no-untyped-def]
    pytest.importorskip("onnxruntime")
    from vision.recognise import TableReader

    try:
        return TableReader.load()
    except (OSError, ValueError) as exc:  # no trained model in models/
        pytest.skip(f"no table reader: {exc}")


def camera_view(reader, runner: GameRunner, table: View) -> View:  # type: ignore[no-untyped-def]
    """``table`` rendered as a camera frame and read by the main job's vision stage, with the
    runner's expectation as its prior (as ``cardtable serve`` does)."""
    from protocol_runner.pipeline import CameraVision
    from vision.synth.video import Camera, render_world

    vision = CameraVision(reader)
    state = runner.state()
    vision.expect({**state["expectation"], "blind": state["blind"]})
    frame = Camera().shoot(render_world(table, seed=9))
    for _ in range(vision.stable_frames + 1):
        view, _ = vision.process(frame, 0.0)
        if view is not None:
            return replace(view, seq=table.seq)
    raise AssertionError("the camera committed no view")


@pytest.mark.parametrize(("column", "row", "planted", "forced"), [
    # a card of the reveal left face down: the prior reads it as the legal face, at under 1%
    (11, 1, "BACK", True),
    # a face where a face-down card belongs: read as itself (after the unsure right cards)
    (60, 2, "7R", False),
    # Not yet: a W planted for 5B at (50, 1) and a 1R for the 2G at (40, 4) are read as the
    # legal code at 0.998 and 0.9994 (the strip classifier's limits, as in
    # tests/test_pipeline_prior.py): no confidence threshold can catch those.
])
def test_a_planted_card_is_not_accepted_silently_through_the_camera(
        reader, column: int, row: int, planted: str, forced: bool) -> None:  # type: ignore[no-untyped-def]
    """The table of Step 6 with one card wrong, rendered, read with the runner's expectation as
    the prior, fed to the runner: never accepted. The players answer every card the runner is
    unsure of (confirming what lies there), and the plant is the normal deviation of the step."""
    table = RECORDS[STEP6]
    assert isinstance(table, View) and table.seq is not None
    expected = truth(STEP6, column, row)
    runner = runner_at(STEP6)
    before = runner.instruction
    view = camera_view(reader, runner, edited(table, [(column, row, planted, 1.0)]))
    cell = view.work[column - 1][row - 1]
    assert (cell.code, cell.confidence < MIN_CONFIDENCE) == \
        ((expected, True) if forced else (planted, False)), cell
    verdict = runner.feed(view)[0]
    assert not verdict.ok and runner.instruction is before
    asked = {(p.column, p.row): p for p in verdict.problems} if verdict.unsure else {}
    assert ((column, row) in asked) is forced
    answer = verdict
    for n, (c, r) in enumerate(sorted(asked), start=1):  # what really lies there
        code = planted if (c, r) == (column, row) else view.work[c - 1][r - 1].code
        answer = runner.feed(Event("card_corrected", zone="work", column=c, row=r, code=code,
                                   seq=table.seq + n))[0]
    assert answer.kind == "deviation" and not answer.unsure and runner.instruction is before
    assert any(p.column == column and p.row == row and p.saw == planted
               for p in answer.problems), answer.line()
    if forced:  # without the plant the same card is read surely: the question was the plant's
        clean = camera_view(reader, runner_at(STEP6), table).work[column - 1][row - 1]
        assert clean.code == expected and clean.confidence >= MIN_CONFIDENCE
