"""A 1 MB command argument does not hold the turn: `--one` refuses it at once without `--yes`
(saying how to go on), and with `--yes` it runs through a script file."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.test_one_shot import run_agent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell syntax")

SHAPES = {
    "quoted argument": "printf %s '" + "a" * 1_000_000 + "' | wc -c",
    "escaped characters": "printf %s " + "\\a" * 500_000 + " | wc -c",
    "braces": "printf %s '" + "{a," * 333_333 + "' | wc -c",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_1_mb_command_is_refused_at_once_without_yes(shape: str, tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": SHAPES[shape]})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "print a lot"], server.url, tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    held = server.times[1] - server.times[0]  # from the tool call to the answer that carries its result
    assert held < 5, held
    output = server.requests[1]["input"][-1]["output"]
    assert output.startswith("refused") and "characters long" in output and "write_file" in output


def test_a_1_mb_command_runs_with_yes_in_seconds(tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": SHAPES["quoted argument"]})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        start = time.monotonic()
        done = run_agent(["--one", "print a lot", "--yes"], server.url, tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    assert server.times[1] - server.times[0] < 10 and time.monotonic() - start < 30
    output = server.requests[1]["input"][-1]["output"]
    assert output.startswith("exit code 0") and "1000000" in output
