"""A 1 MB command argument does not hold the turn: in ask mode `--one` refuses it at once (saying
how to go on); confined (auto) or with `--yes` it runs through a script file, within seconds."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell syntax")

SHAPES = {
    "quoted argument": "printf %s '" + "a" * 1_000_000 + "' | wc -c",
    "escaped characters": "printf %s " + "\\a" * 500_000 + " | wc -c",
    "braces": "printf %s '" + "{a," * 333_333 + "' | wc -c",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_1_mb_command_is_refused_at_once_in_ask_mode(shape: str, tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": SHAPES[shape]})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "print a lot", "--mode", "ask"], server.url, tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    held = server.times[1] - server.times[0]  # from the tool call to the answer that carries its result
    assert held < 5, held
    output = server.requests[1]["input"][-1]["output"]
    assert output.startswith("refused") and "characters long" in output and "write_file" in output


@pytest.mark.parametrize("mode", [["--yes"], []], ids=["yes", "default"])
def test_a_1_mb_command_runs_in_seconds_when_it_may(mode: list[str], tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": SHAPES["quoted argument"]})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        start = time.monotonic()
        done = run_agent(["--one", "print a lot", *mode], server.url, tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    assert server.times[1] - server.times[0] < 10 and time.monotonic() - start < 30
    output = server.requests[1]["input"][-1]["output"]
    if not mode and output.startswith("refused"):  # no sandbox here: the default mode is ask
        assert "characters long" in output
        return
    assert output.startswith("exit code 0") and "1000000" in output
