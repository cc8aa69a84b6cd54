"""The standalone command: `python -m ui.prune_cli` (what `agent.py prune` calls)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from ui.prune_cli import main


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ui.prune_cli", *args], input=stdin, cwd=ROOT,
                          capture_output=True, check=False, timeout=60)


def test_stdin_form_prunes_and_exits_zero() -> None:
    noise = b"".join(b"tests/test_a.py::test_%d PASSED\n" % i for i in range(300))
    data = b"=== test session starts ===\n" + noise + b"==== 300 passed in 0.50s ====\n"
    proc = _cli("--stdin", "--command", "pytest -v", "--exit-code", "0", stdin=data)
    assert proc.returncode == 0
    out = proc.stdout.decode("utf-8")
    assert out.startswith("exit code 0\n[pruned ")
    assert "==== 300 passed in 0.50s ====" in out
    assert "300 passing tests hidden" in out


def test_stdin_form_writes_utf8_whatever_the_locale() -> None:
    proc = subprocess.run([sys.executable, "-m", "ui.prune_cli", "--stdin", "--exit-code", "1"],
                          input="✖ 3 problems — ünïcode\n".encode(), cwd=ROOT, capture_output=True,
                          env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}, check=False)
    assert proc.returncode == 0
    assert "✖ 3 problems — ünïcode" in proc.stdout.decode("utf-8")


def test_run_form_returns_the_commands_exit_code() -> None:
    code = "import sys; print('\\n'.join(f'row {i}' for i in range(500))); print('Error: disk full', file=sys.stderr); sys.exit(3)"
    proc = _cli("--", sys.executable, "-c", code)
    assert proc.returncode == 3
    out = proc.stdout.decode("utf-8")
    assert out.startswith("exit code 3\n")
    assert "Error: disk full" in out


def test_missing_program_is_127() -> None:
    proc = _cli("--", "definitely-not-a-program-zz9")
    assert proc.returncode == 127
    assert "command not found" in proc.stdout.decode()


def test_help_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "--stdin" in capsys.readouterr().out
    assert main([]) == 2
    assert main(["--stdin", "--", "ls"]) == 2
