"""On Windows a command runs in a hidden console of its own, not the agent's: a child that opens
CONIN$ or CONOUT$ must not read the user's keystrokes or draw over the TUI. Runs under wine
(`python3 tests/windows.py tests/unit/tools/test_shell_console.py`), where a child started without
CREATE_NO_WINDOW has no console at all and this test fails."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.tools.shell import run_command, run_shell
from tests.support.tools import tool_context as ctx

# Prints the process ids attached to the child's console (none when it has no console).
CONSOLE_PIDS = """import ctypes
kernel32 = ctypes.WinDLL("kernel32")
pids = (ctypes.c_uint32 * 64)()
count = kernel32.GetConsoleProcessList(pids, 64)
print("console:", *pids[:count])
"""


def _python(tmp_path: Path, source: str) -> str:
    script = tmp_path / "probe.py"
    script.write_text(source, encoding="utf-8")
    return f'"{Path(sys.executable).as_posix()}" "{script.as_posix()}"'


@pytest.mark.skipif(sys.platform != "win32", reason="Windows consoles (runs under wine: tests/windows.py)")
def test_a_command_gets_a_console_of_its_own(tmp_path: Path) -> None:
    run = run_command(_python(tmp_path, CONSOLE_PIDS), tmp_path, timeout=60, cancel=Cancel())
    assert run.exit_code == 0, run.output
    line = next(x for x in run.output.decode("utf-8", "replace").splitlines() if x.startswith("console:"))
    pids = [int(p) for p in line.split()[1:]]
    assert pids, "the child has a console, so CONIN$ and CONOUT$ open (in the hidden one)"
    assert os.getpid() not in pids, "the agent's console is not shared"


@pytest.mark.skipif(sys.platform != "win32", reason="Windows consoles (runs under wine: tests/windows.py)")
def test_a_prompt_on_the_console_waits_unseen_and_the_model_is_told_why_it_timed_out(tmp_path: Path) -> None:
    """A child reading CONIN$ (as a password prompt does) waits in its hidden console, where no key of
    the user's reaches it, until the time limit; the result says what to do instead."""
    command = _python(tmp_path, 'print("Password:", flush=True)\nprint(open("CONIN$").readline())\n')
    result = run_shell({"command": command, "timeout": 3}, ctx(tmp_path))
    assert result.output.startswith("timed out after 3 s"), result.output
    assert "give it with a flag or on stdin" in result.output and "Password:" in result.output
