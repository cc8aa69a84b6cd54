"""A command's whole process tree ends with it, on every platform: a grandchild whose parent has
already exited (where Windows' `taskkill /T` finds nothing to walk from) is found as a lingering
job and ended with the session; a timeout ends a grandchild too. Runs under wine as well (job
objects there, process groups on POSIX)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from core.cancel import Cancel
from core.tools.shell import kill_lingering, run_command, run_shell
from tests.support.heartbeat import BEAT, beating
from tests.support.tools import tool_context as ctx

# A child that starts a heartbeat grandchild with no pipe of ours, then exits at once.
SPAWN = """import subprocess, sys
subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]], stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""
def _scripts(tmp_path: Path) -> tuple[str, Path]:
    (tmp_path / "spawn.py").write_text(SPAWN)
    (tmp_path / "beat.py").write_text(BEAT)
    beat = tmp_path / "beat.txt"
    python = Path(sys.executable).as_posix()
    return f'"{python}" "{(tmp_path / "spawn.py").as_posix()}" "{(tmp_path / "beat.py").as_posix()}" ' \
           f'"{beat.as_posix()}"', beat


def test_a_grandchild_left_behind_is_a_lingering_job_and_ends_with_the_session(tmp_path: Path) -> None:
    command, beat = _scripts(tmp_path)
    run = run_command(command, tmp_path, timeout=60, cancel=Cancel())
    assert run.exit_code == 0, run.output
    assert beating(beat), "the grandchild runs after its parent returned"
    assert run.background, "a job with none of our pipes is still counted as left running"
    kill_lingering(grace=0.3)
    time.sleep(0.5)
    assert not beating(beat, within=0), "the grandchild ended with the session"


def test_a_timeout_ends_the_grandchildren_too(tmp_path: Path) -> None:
    command, beat = _scripts(tmp_path)
    python = Path(sys.executable).as_posix()
    run = run_command(f'{command} && "{python}" -c "import time; time.sleep(60)"', tmp_path, timeout=4,
                      cancel=Cancel())
    assert run.timed_out
    try:
        time.sleep(0.5)
        assert not beating(beat, within=0), "the timeout ended the grandchild whose parent had exited"
    finally:
        kill_lingering(grace=0.3)


def test_run_shell_reports_a_timeout_with_what_to_do(tmp_path: Path) -> None:
    command = f'"{Path(sys.executable).as_posix()}" -c "import time; print(1, flush=True); time.sleep(60)"'
    started = time.monotonic()
    result = run_shell({"command": command, "timeout": 2}, ctx(tmp_path))
    assert time.monotonic() - started < 30
    assert result.output.startswith("timed out after 2 s; the process tree was killed"), result.output
    assert "give it with a flag or on stdin" in result.output
