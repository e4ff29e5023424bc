"""The journal: a kill at any moment loses nothing; foreign, damaged or truncated journals are
refused with a clear message; export + audit re-check a game with no camera."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from protocol_runner.journal import Journal, JournalError, export_transcript, read_transcript
from protocol_runner.observations import read_records
from protocol_runner.runner import Session, replay

SCRIPT = Path(__file__).parent / "data" / "observations" / "uno-2h2v.jsonl"
RECORDS = [r for _, r in read_records(SCRIPT)]


def cardtable(*args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "protocol_runner.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def full_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("j") / "full.db"
    session = Session(Journal.create(path))
    for record in RECORDS:
        session.feed(record)
    session.journal.close()
    return path


def answers(path: Path) -> list[list[dict]]:  # type: ignore[type-arg]
    with Journal.open(path) as journal:
        return [outs for _, outs in journal.inputs()]


def test_kill_mid_protocol_then_resume_loses_nothing(tmp_path: Path,
                                                    full_journal: Path) -> None:
    db = tmp_path / "game.db"
    proc = cardtable("run", "--observations", str(SCRIPT), "--journal", str(db), "--json",
                     "--pace", "0.01")
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        out = json.loads(line)
        if out.get("type") == "instruction" and out["protocol"].startswith("UNO card") \
                and out["step"] == "9":
            seen += 1
            if seen == 2:  # the second virtual turn, in the middle of the protocol
                os.kill(proc.pid, signal.SIGKILL)
                break
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with Journal.open(db) as journal:
        kept = sum(1 for _ in journal.inputs())
    assert 0 < kept < len(RECORDS)
    assert answers(db) == answers(full_journal)[:kept]  # everything printed was journaled

    resumed = Session.resume(db)
    assert resumed.replay_mismatches == 0
    assert resumed.state()["instruction"]["protocol"].startswith("UNO card")  # mid-protocol
    resumed.journal.close()
    proc = cardtable("resume", "--journal", str(db), "--observations", str(SCRIPT), "--json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["type"] == "summary" and summary["winner"] == "V1"
    assert summary["verdicts"] == {"accepted": len(RECORDS) - kept}
    assert answers(db) == answers(full_journal)  # as if it had never stopped


def test_export_then_audit_same_verdicts(tmp_path: Path, full_journal: Path) -> None:
    transcript = tmp_path / "game.transcript.jsonl"
    with Journal.open(full_journal) as journal:
        assert export_transcript(journal, transcript) > len(RECORDS)
    runner, differences = replay(read_transcript(transcript))
    assert differences == [] and runner.state()["game"]["winner"] == "V1"
    proc = cardtable("audit", str(transcript))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "same verdicts" in out and "winner: V1" in out
    # a transcript whose recorded verdict was changed does not pass the audit
    lines = transcript.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if '"verdict":"accepted"' in line and i > 40)
    lines[n] = lines[n].replace('"verdict":"accepted"', '"verdict":"deviation"')
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(lines) + "\n")
    proc = cardtable("audit", str(forged))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "1 differ" in out


def _other_version(path: Path) -> None:
    Journal.create(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")


def _truncated(path: Path, full: Path) -> None:
    data = full.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(("make", "message"), [
    (lambda p, f: _other_version(p), "schema version 99"),
    (lambda p, f: _truncated(p, f), "truncated or damaged|is damaged"),
    (lambda p, f: p.write_bytes(b"hello, not a database" * 100), "not a readable cardtable"),
    (lambda p, f: None, "no journal at"),
])
def test_bad_journals_are_refused(tmp_path: Path, full_journal: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.db"
    make(path, full_journal)
    with pytest.raises(JournalError, match=message):
        Session.resume(path)


def test_cli_errors_are_one_line(tmp_path: Path, full_journal: Path) -> None:
    _other_version(tmp_path / "v99.db")
    for args, message in [
        (("resume", "--journal", str(tmp_path / "v99.db")), "schema version 99"),
        (("run", "--observations", str(SCRIPT), "--journal", str(full_journal)),
         "already exists"),
        (("audit", str(SCRIPT)), "not a cardtable transcript"),
    ]:
        proc = cardtable(*args)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 2 and err.startswith("cardtable: error:") and message in err
        assert "Traceback" not in err


@pytest.mark.parametrize("opened_by", ["create", "open"])
def test_a_journal_is_written_from_any_thread(tmp_path: Path, full_journal: Path,
                                              opened_by: str) -> None:
    """The live table's inputs arrive on several threads (the command line's setup, the
    camera's pipeline, the page's corrections): a journal opened on one is written on others,
    several at once, and every input is kept once."""
    import shutil
    import threading

    path = tmp_path / "game.db"
    if opened_by == "open":
        shutil.copy(full_journal, path)
    journal = Journal.create(path) if opened_by == "create" else Journal.open(path)
    before = sum(1 for _ in journal.inputs())
    errors: list[BaseException] = []

    def write(records: list) -> None:  # type: ignore[type-arg]
        try:
            for record in records:
                journal.append(record, [{"type": "verdict", "ok": True}])
        except BaseException as exc:  # noqa: BLE001 (handed to the test's thread)
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(RECORDS[k::3],)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert sum(1 for _ in journal.inputs()) == before + len(RECORDS)
    journal.close()
    assert len(answers(path)) == before + len(RECORDS)
