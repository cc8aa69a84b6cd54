"""The modes end to end with `--one`: which mode and sandbox a run has (said in --json), ask mode
refusing what it cannot ask and saying how to allow it, --allow and --yes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="Linux's sandbox and a POSIX shell (Windows runs in ask mode: tests/windows.py)")


def _run(tmp_path: Path, command: str, *flags: str) -> tuple[dict, str, list[dict]]:
    """One --one --json run whose model runs `command`: (the session event, what the tool answered, all lines)."""
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok"))]
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "make.py").write_text("open('made.txt', 'w').write('x')\n")
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "go", "--json", "--cwd", str(ws), *flags], server.url, tmp_path)
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert done.returncode == 0, done.stderr.decode()
    return lines[0], server.requests[1]["input"][-1]["output"], lines


def test_the_session_event_says_the_mode_and_the_sandbox(tmp_path: Path) -> None:
    session, _, _ = _run(tmp_path, "echo hi")
    assert session["type"] == "session" and session["mode"] == "auto" and session["sandbox"].startswith("landlock")
    session, _, _ = _run(tmp_path, "echo hi", "--no-sandbox")
    assert session["mode"] == "ask" and session["sandbox"].startswith("none")
    session, _, _ = _run(tmp_path, "echo hi", "--yes")
    assert session["mode"] == "yes"


def test_ask_mode_refuses_what_it_cannot_ask_and_names_both_ways_to_allow_it(tmp_path: Path) -> None:
    _, output, lines = _run(tmp_path, "python3 make.py", "--no-sandbox")
    assert output.startswith("refused") and "--yes" in output and "--allow 'python3'" in output
    assert not (tmp_path / "ws" / "made.txt").exists()
    assert [e["by"] for e in lines if e["type"] == "approval_done"] == ["policy"]
    _, output, _ = _run(tmp_path, "git status --short; ls", "--no-sandbox")
    assert not output.startswith("refused")  # known readers run unasked


def test_allow_and_yes_let_it_run(tmp_path: Path) -> None:
    command = "python3 make.py"
    _, output, _ = _run(tmp_path, command, "--no-sandbox", "--allow", "python3")
    assert output.startswith("exit code 0") and (tmp_path / "ws" / "made.txt").exists()
    (tmp_path / "ws" / "made.txt").unlink()
    _, output, _ = _run(tmp_path, command, "--no-sandbox", "--yes")
    assert output.startswith("exit code 0") and (tmp_path / "ws" / "made.txt").exists()


def test_auto_without_a_sandbox_is_a_clear_error(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("ok"))]) as server:
        done = run_agent(["--one", "go", "--mode", "auto", "--no-sandbox"], server.url, tmp_path)
    assert done.returncode == 2 and "none works here" in done.stderr.decode() and "Traceback" not in done.stderr.decode()
