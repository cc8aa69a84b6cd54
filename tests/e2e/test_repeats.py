"""Repeats through the agent loop (in-process, and `--one` as a subprocess) against the loopback
server: a polled file that grows is shown whole, identical failing reruns are collapsed, then the
turn stops and `--one` exits 1. The judge itself: tests/unit/context/test_repeats.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from core import protocol as ev
from core.agent.loop import Agent
from core.prune.archive import OutputArchive
from core.session.journal import Journal
from tests.conftest import make_settings
from tests.support.agent_process import native, run_agent
from tests.support.events import Recorder
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def make_agent(server: ScriptedServer, tmp_path: Path, recorder: Recorder) -> Agent:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = make_settings(server.url, tmp_path)
    journal = Journal.create(tmp_path / "sessions", workspace, settings.model)
    return Agent(settings, recorder, workspace, "yes", journal=journal,
                 archive=OutputArchive(tmp_path / "outputs"))


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def test_polling_a_growing_file(tmp_path: Path, recorder: Recorder) -> None:
    log = tmp_path / "ws" / "server.log"
    log.parent.mkdir()
    log.write_text("starting\n")
    replies = iter([Reply(call_events([("run_shell", {"command": native(
        "cat server.log", "type server.log", "Get-Content server.log")})]))] * 3
                   + [Reply(text_events("it is up"))])

    def responder(body: dict[str, Any]) -> Reply:
        with log.open("a") as f:  # the log grows between two polls
            f.write(f"tick {len(body['input'])}\n")
        return next(replies)

    with ScriptedServer(responder=responder) as server:
        outcome = make_agent(server, tmp_path, recorder).run("wait for the server")
    assert outcome.status == "ok"
    seen = outputs(server.requests[-1])
    assert len(seen) == 3 and not any("same output" in s or "Refused" in s for s in seen)
    assert seen[-1].count("tick") == 3


def test_identical_failing_reruns_are_collapsed_then_stopped(tmp_path: Path, recorder: Recorder) -> None:
    failing = (f"{sys.executable} -c \"import sys, time; print('FAILED test_x'); "
               "print('1 failed in %.3fs' % (time.perf_counter() % 1)); sys.exit(1)\"")  # a timing that varies
    same = Reply(call_events([("run_shell", {"command": failing})]))
    with ScriptedServer([same, same, same, Reply(text_events("never asked"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("fix the test")
    assert outcome.status == "error" and outcome.error is not None and outcome.error.kind == "stuck"
    assert len(server.requests) == 3  # stopped before asking the model a fourth time
    first, second = outputs(server.requests[-1])
    assert "FAILED test_x" in first and second == "same output as out-1 (exit 1)"
    assert "same failing output 3 times" in recorder.of(ev.Error)[-1].message


def test_one_shot_exits_1_when_stuck(tmp_path: Path) -> None:
    same = Reply(call_events([("run_shell", {"command": "ls no-such-file"})]))
    with ScriptedServer([same, same, same, Reply(text_events("never asked"))]) as server:
        done = run_agent(["--one", "list it"], server.url, tmp_path)
    assert done.returncode == 1
    assert "same failing output 3 times" in done.stderr.decode()
