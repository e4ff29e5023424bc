"""`python -m vision.X` commands (`vision.module_main.run_module`): the imported module's main
runs, its status is the exit status, and a bad argument or file is one line with status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vision.module_main import run_module


@pytest.mark.parametrize(("module", "argv", "status", "message"), [
    ("vision.fused_temperature", ["--kinds", "beach", "--count", "1"], 2,
     "python -m vision.fused_temperature: error: no synthetic set 'beach'"),
    ("vision.single_card", ["/no/such/labels.csv"], 2,
     "python -m vision.single_card: error: no labels file at /no/such/labels.csv"),
    ("vision.locate_eval", ["--help"], 0, ""),
])
def test_run_module_exits_with_the_status_and_one_line(
        module: str, argv: list[str], status: int, message: str,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", [module, *argv])
    with pytest.raises(SystemExit) as exc:
        run_module(module)
    assert exc.value.code == status
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_python_dash_m_goes_through_it() -> None:
    out = subprocess.run([sys.executable, "-m", "vision.single_card", "/no/such/labels.csv"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip() == ("python -m vision.single_card: error: no labels file at "
                                  "/no/such/labels.csv")
