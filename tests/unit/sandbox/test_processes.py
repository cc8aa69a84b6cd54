"""Other processes' command lines: a confined command sees only its own processes, so another
program's `--password=…` cannot be read from `ps` or /proc."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from core.sandbox import mountns
from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import confinement, run

PASSWORD = "Ps-Args-Pw-2718"
READERS = [
    "ps -eo args", "ps auxww", "cat /proc/*/cmdline | tr '\\0' ' '", "grep -ar password /proc/[0-9]*/cmdline",
    "python3 -c \"import os; [print(open(f'/proc/{p}/cmdline').read()) for p in os.listdir('/proc') "
    "if p.isdigit()]\"",
    "pgrep -af password",
]


@pytest.fixture
def holder() -> Iterator[subprocess.Popen]:
    """A process of the user's that holds a password in its arguments."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", f"--password={PASSWORD}"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("command", READERS)
def test_other_processes_command_lines_cannot_be_read(layout: Layout, backend: str, command: str,
                                                      holder: subprocess.Popen) -> None:
    confined = confinement(layout, backend)
    if backend == "landlock" and not mountns.available(own_pids=True):
        pytest.skip("no PID namespace can be made here: command lines stay readable (docs/safety.md)")
    assert PASSWORD in run(command, layout, None).output.decode(errors="replace")  # the test can fail
    done = run(command, layout, confined)
    assert PASSWORD not in done.output.decode(errors="replace")


def test_the_commands_own_processes_are_seen_and_its_exit_status_kept(layout: Layout, backend: str) -> None:
    confined = confinement(layout, backend)
    done = run("sleep 3 & ps -eo args | grep -c '^sleep 3'; exit 7", layout, confined)
    assert done.exit_code == 7 and done.output.split()[-1] == b"1"
