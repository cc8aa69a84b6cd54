"""Repeats judged by their result: run again, collapse an identical output to one line, stop a
model that gets the same failing output three times in a row. Unit tests on `judge_repeat`, then
the agent loop (in-process and `--one` as a subprocess) against the loopback server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.agent.loop import Agent
from core.context.repeats import fingerprint, judge_repeat
from core.prune.archive import OutputArchive
from core.session.items import FunctionCall, FunctionCallOutput, Item, UserMessage
from core.session.journal import Journal
from tests.conftest import Recorder, make_settings
from tests.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.test_one_shot import native, run_agent


def shell(cid: str, command: str) -> FunctionCall:
    return FunctionCall(cid, "run_shell", json.dumps({"command": command}))


def result(call: FunctionCall, text: str, exit_code: int, archive: str) -> FunctionCallOutput:
    return FunctionCallOutput(call.call_id, text, {"tool": call.name, "status": "ok" if exit_code == 0 else "error",
                                                   "exit_code": exit_code, "archive": archive})


def run(history: list[Item], call: FunctionCall, text: str, exit_code: int = 1) -> tuple[str, bool]:
    """Judge `call` giving `text`, then record both as the loop does; returns (what the model sees, stuck)."""
    history.append(call)
    out = result(call, text, exit_code, f"out-{call.call_id}")
    verdict = judge_repeat(history, call, out)
    history.append(out)
    return verdict.text or text, verdict.stuck


FAILING = "exit code 1\n[pruned 9,120 → 310 chars; full output: {id}]\nFAILED tests/test_a.py::test_x\n1 failed in {t}s"


def test_volatile_details_do_not_make_outputs_differ() -> None:
    a = "2026-12-02 13:17:11,461 done in 0.37s, tmp /tmp/pytest-of-root/p7/x.db, at 0x7ffd12ab34cd, ==4242=="
    b = "2026-12-03 09:01:02,001 done in 1.02s, tmp /tmp/pytest-of-root/p9/x.db, at 0x7ffd99ee0011, ==77=="
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(FAILING.format(id="out-3", t="0.2")) == fingerprint(FAILING.format(id="out-9", t="0.4"))
    assert fingerprint("1 failed") != fingerprint("2 failed")


def test_an_identical_output_becomes_one_line_naming_the_first() -> None:
    history: list[Item] = [UserMessage("fix it")]
    first, _ = run(history, shell("12", "pytest -q"), FAILING.format(id="out-12", t="0.21"))
    assert first.startswith("exit code 1")
    again, stuck = run(history, shell("13", "pytest -q"), FAILING.format(id="out-13", t="0.25"))
    assert again == "same output as out-12 (exit 1)" and not stuck


def test_a_changed_output_is_shown_whole() -> None:
    history: list[Item] = [UserMessage("watch the log")]
    run(history, shell("1", "cat app.log"), "line 1", exit_code=0)
    seen, stuck = run(history, shell("2", "cat app.log"), "line 1\nline 2", exit_code=0)
    assert seen == "line 1\nline 2" and not stuck


def test_the_third_identical_failure_in_a_row_is_stuck() -> None:
    history: list[Item] = [UserMessage("make the tests pass")]
    outcomes = [run(history, shell(str(n), "pytest -q"), FAILING.format(id=f"out-{n}", t=n / 10)) for n in range(3)]
    assert [stuck for _, stuck in outcomes] == [False, False, True]


def test_anything_in_between_or_success_is_not_stuck() -> None:
    history: list[Item] = [UserMessage("go")]
    run(history, shell("1", "pytest -q"), "1 failed")
    run(history, shell("2", "pytest -q"), "1 failed")
    run(history, FunctionCall("3", "edit_file", json.dumps({"path": "a.py"})), "edited", exit_code=0)
    seen, stuck = run(history, shell("4", "pytest -q"), "1 failed")
    assert seen == "same output as out-2 (exit 1)" and not stuck  # the edit in between changed nothing
    history.append(UserMessage("try once more"))
    assert not run(history, shell("5", "pytest -q"), "1 failed")[1]
    quiet: list[Item] = [UserMessage("poll")]
    assert not any(run(quiet, shell(str(n), "curl -s localhost:8000/health"), "ok", 0)[1] for n in range(5))
    # Polling has room, not forever: the sixth identical success in a row stops the task.
    assert run(quiet, shell("6", "curl -s localhost:8000/health"), "ok", 0)[1]


# -- through the agent loop -----------------------------------------------------------------

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
    assert "same failing output 3 times" in recorder.of("error")[-1]["message"]


def test_one_shot_exits_1_when_stuck(tmp_path: Path) -> None:
    same = Reply(call_events([("run_shell", {"command": "ls no-such-file"})]))
    with ScriptedServer([same, same, same, Reply(text_events("never asked"))]) as server:
        done = run_agent(["--one", "list it"], server.url, tmp_path)
    assert done.returncode == 1
    assert "same failing output 3 times" in done.stderr.decode()
