"""Sessions: resume from the journal, repair after crashes, interrupts, and kill -9 recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from core.cancel import Cancel
from core.items import AssistantMessage, FunctionCall, FunctionCallOutput, Reasoning, UserMessage
from core.journal import INTERRUPTED_OUTPUT, Journal, list_sessions, load
from core.loop import Agent
from core.request import build_body
from tests.conftest import TEST_KEY, Recorder, make_settings
from tests.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.test_one_shot import AGENT, run_agent


def _pairs_valid(items: list[dict]) -> bool:
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    return sorted(calls) == sorted(outputs)


# -- resume -------------------------------------------------------------------------------------
def test_resume_latest_with_one_continues_the_conversation(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("first answer")), Reply(text_events("second answer"))]) as server:
        assert run_agent(["--one", "first task"], server.url, tmp_path).returncode == 0
        done = run_agent(["--resume", "--one", "go on"], server.url, tmp_path)
    assert done.returncode == 0 and done.stdout.decode() == "second answer\n"
    contents = [i.get("content") for i in server.requests[1]["input"]]
    assert contents == ["first task", "first answer", "go on"]
    assert len(list((tmp_path / "sessions").iterdir())) == 1


def test_sessions_listing_and_resume_by_id(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("a"))]) as server:
        run_agent(["--one", "alpha 你好"], server.url, tmp_path)
        time.sleep(1.1)
        run_agent(["--one", "beta"], server.url, tmp_path)
        listing = run_agent(["--sessions"], server.url, tmp_path).stdout.decode()
        ids = [line.split()[0] for line in listing.splitlines()[1:3]]
        assert "beta" in listing.splitlines()[1] and "alpha 你好" in listing.splitlines()[2]
        done = run_agent(["--resume", ids[1][:17], "--one", "more"], server.url, tmp_path)
        assert done.returncode == 0
        assert server.requests[-1]["input"][0]["content"] == "alpha 你好"
        missing = run_agent(["--resume", "nope", "--one", "x"], server.url, tmp_path)
    assert missing.returncode == 2 and "no session matches 'nope'" in missing.stderr.decode()


def test_loading_repairs_a_torn_line_and_calls_without_output(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, tmp_path, "m")
    for item in (UserMessage("do it"), Reasoning(id="r1", text="plan"),
                 FunctionCall("c1", "run_shell", '{"command": "ls"}'),
                 FunctionCall("c2", "read_file", '{"path": "a"}'),
                 FunctionCallOutput("c1", "exit code 0", meta={"tool": "run_shell"})):
        journal.append(item)
    journal.close()
    with open(journal.path, "ab") as handle:
        handle.write(b'{"kind":"function_call_output","call_id":"c2","out')  # the crash came mid-write
    loaded = load(journal.folder)
    assert any("cut off" in n for n in loaded.notices) and any("interrupted" in n for n in loaded.notices)
    outputs = [i for i in loaded.items if isinstance(i, FunctionCallOutput)]
    assert [o.call_id for o in outputs] == ["c1", "c2"] and outputs[1].output == INTERRUPTED_OUTPUT
    body = build_body(make_settings("http://127.0.0.1:1"), "", [*loaded.items, UserMessage("next")], [])
    assert _pairs_valid(body["input"])


# -- interrupts (in process) ----------------------------------------------------------------------
def _agent(server: ScriptedServer, tmp_path: Path, recorder: Recorder) -> Agent:
    (tmp_path / "ws").mkdir(exist_ok=True)
    settings = make_settings(server.url, tmp_path)
    journal = Journal.create(tmp_path / "sessions", tmp_path / "ws", settings.model)
    return Agent(settings, recorder, tmp_path / "ws", approve=lambda w, y: None, journal=journal)


def test_cancel_during_a_stream_closes_it_fast_and_keeps_the_partial_text(tmp_path: Path) -> None:
    recorder = Recorder()
    # The stream stalls for 30 s after its first words: closing it "fast" means well under that, and
    # the bound below is generous enough for a loaded 2-core machine.
    slow = Reply(text_events("one two three four five six", chunks=6), pause_at=3, pause=30.0)
    with ScriptedServer([slow, Reply(text_events("next answer"))]) as server:
        agent = _agent(server, tmp_path, recorder)
        cancel = Cancel()
        outcome: list = []
        worker = threading.Thread(target=lambda: outcome.append(agent.run("talk", cancel)))
        worker.start()
        while not recorder.of("text"):
            time.sleep(0.01)
        start = time.monotonic()
        cancel.cancel()
        worker.join(5)
        elapsed = time.monotonic() - start
        assert elapsed < 3, elapsed
        assert outcome[0].status == "aborted" and recorder.of("aborted")
        partial = [i for i in agent.history if isinstance(i, AssistantMessage)]
        assert partial and partial[0].status == "interrupted" and partial[0].text
        # The user can go on: the next request is valid and holds the partial text.
        assert agent.run("continue").status == "ok"
    assert server.requests[-1]["input"][1]["content"] == partial[0].text


def test_cancel_during_a_tool_kills_the_process_tree(tmp_path: Path) -> None:
    recorder = Recorder()
    marker = tmp_path / "ws" / "child.pid"
    command = f"sleep 60 & echo $! > {marker}; wait"
    with ScriptedServer([Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("x"))]) as server:
        agent = _agent(server, tmp_path, recorder)
        cancel = Cancel()
        worker = threading.Thread(target=agent.run, args=("run it", cancel))
        worker.start()
        deadline = time.monotonic() + 10
        while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        child = int(marker.read_text())
        start = time.monotonic()
        cancel.cancel()
        worker.join(10)
        assert time.monotonic() - start < 3
    time.sleep(0.2)
    assert not _alive(child), "the grandchild was killed with its process group"
    (tool,) = recorder.of("tool")
    assert "interrupted" in tool["result"] and recorder.of("aborted")
    assert isinstance(agent.history[-1], FunctionCallOutput)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


# -- process level ------------------------------------------------------------------------------
def _spawn(args: list[str], server_url: str, tmp_path: Path, **kwargs) -> subprocess.Popen:
    (tmp_path / "ws").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_"))}
    env.update({"DEEPSEEK_BASE_URL": server_url, "DEEPSEEK_API_KEY": TEST_KEY, "NO_COLOR": "1",
                "AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), "AGENT_RETRY_BASE_DELAY": "0.05"})
    return subprocess.Popen([sys.executable, str(AGENT), "--cwd", str(tmp_path / "ws"), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _journal_records(tmp_path: Path) -> list[dict]:
    paths = list((tmp_path / "sessions").glob("*/journal.jsonl"))
    if not paths:
        return []
    return [json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines() if line.strip()]


def _wait_for(predicate, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_kill_9_during_a_tool_run_then_resume_loses_nothing(tmp_path: Path) -> None:
    script = [Reply(call_events([("write_file", {"path": "a.txt", "content": "A"}),
                                 ("run_shell", {"command": "sleep 30"})])),
              Reply(text_events("resumed fine"))]
    with ScriptedServer(script) as server:
        proc = _spawn(["--one", "make a.txt then wait"], server.url, tmp_path)
        _wait_for(lambda: sum(r["kind"] == "function_call_output" for r in _journal_records(tmp_path)) == 1)
        time.sleep(0.3)  # inside `sleep 30` now
        proc.kill()
        proc.wait()
        kinds = [r["kind"] for r in _journal_records(tmp_path) if r["kind"] != "usage"]
        assert kinds == ["session", "user", "reasoning", "function_call", "function_call", "checkpoint",
                         "function_call_output"]  # the write_file checkpoint comes before its output
        done = run_agent(["--resume", "--one", "go on"], server.url, tmp_path)
    assert done.returncode == 0 and done.stdout.decode() == "resumed fine\n"
    request = server.requests[-1]["input"]
    assert _pairs_valid(request)
    outputs = [i["output"] for i in request if i.get("type") == "function_call_output"]
    assert outputs[0].startswith("created a.txt") and outputs[1] == INTERRUPTED_OUTPUT
    assert [i.get("content") for i in request if i.get("role") == "user"] == ["make a.txt then wait", "go on"]


def test_kill_9_during_a_stream_then_resume_loses_nothing(tmp_path: Path) -> None:
    slow = Reply(text_events("a slow answer that never ends", chunks=8), delay=2.0)
    with ScriptedServer([Reply(text_events("first done")), slow, Reply(text_events("back again"))]) as server:
        assert run_agent(["--one", "first"], server.url, tmp_path).returncode == 0
        proc = _spawn(["--resume", "--one", "second"], server.url, tmp_path)
        _wait_for(lambda: len(server.requests) == 2)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        done = run_agent(["--resume", "--one", "third"], server.url, tmp_path)
    assert done.returncode == 0
    contents = [i.get("content") for i in server.requests[-1]["input"]]
    assert contents == ["first", "first done", "second", "third"]


def test_sigint_to_one_shot_exits_130(tmp_path: Path) -> None:
    slow = Reply(text_events("slow slow slow slow", chunks=4), delay=2.0)
    with ScriptedServer([slow]) as server:
        proc = _spawn(["--one", "hi"], server.url, tmp_path)
        _wait_for(lambda: len(server.requests) == 1)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130 and b"interrupted" in err


def test_sigint_to_a_running_plain_agent_interrupts_the_turn_only(tmp_path: Path) -> None:
    slow = Reply(text_events("slow slow slow slow", chunks=4), delay=2.0)
    with ScriptedServer([slow, Reply(text_events("second works"))]) as server:
        proc = _spawn(["--plain"], server.url, tmp_path, stdin=subprocess.PIPE)
        proc.stdin.write(b"first question\n")
        proc.stdin.flush()
        _wait_for(lambda: len(server.requests) == 1)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert proc.poll() is None, "one Ctrl-C during a turn must not end the session"
        out, err = proc.communicate(b"second question\n", timeout=20)
    assert proc.returncode == 0
    assert b"second works" in out and b"interrupted" in err
    assert server.requests[1]["input"][-1]["content"] == "second question"


def test_sessions_are_listed_newest_first(tmp_path: Path) -> None:
    for name in ("20260101-000000-aaaa", "20260102-000000-bbbb"):
        Journal(tmp_path / name).write({"kind": "session", "created": name})
    assert [s.id for s in list_sessions(tmp_path)] == ["20260102-000000-bbbb", "20260101-000000-aaaa"]


def test_appending_after_a_torn_line_keeps_the_new_records(tmp_path: Path) -> None:
    journal = Journal.create(tmp_path, tmp_path, "m")
    journal.append(UserMessage("first task"))
    journal.close()
    with open(journal.path, "ab") as handle:
        handle.write(b'{"kind":"assistant","te')  # the crash came mid-write
    resumed = Journal(journal.folder)
    resumed.append(UserMessage("second task: use pnpm, never npm"))
    resumed.close()
    loaded = load(journal.folder)
    assert [i.text for i in loaded.items if isinstance(i, UserMessage)] == ["first task",
                                                                           "second task: use pnpm, never npm"]
    assert len(loaded.notices) == 1


def test_cancel_while_waiting_for_the_response_headers_is_immediate(tmp_path: Path) -> None:
    recorder = Recorder()
    with ScriptedServer([Reply(text_events("late"), stall_before=8)]) as server:
        agent = _agent(server, tmp_path, recorder)
        cancel = Cancel()
        outcome: list = []
        worker = threading.Thread(target=lambda: outcome.append(agent.run("hi", cancel)))
        worker.start()
        _wait_for(lambda: len(server.requests) == 1)
        time.sleep(0.2)
        start = time.monotonic()
        cancel.cancel()
        worker.join(5)
        assert time.monotonic() - start < 3  # the server would answer after 8 s
    assert outcome[0].status == "aborted"


def test_a_cancelled_token_sends_no_request(tmp_path: Path) -> None:
    from core.client import ResponsesClient

    with ScriptedServer([Reply(text_events("x"))]) as server:
        cancel = Cancel()
        cancel.cancel()
        client = ResponsesClient(make_settings(server.url))
        result = client.stream({"model": "m", "input": "x"}, Recorder(), cancel)
        client.close()
    assert result.status == "aborted" and server.requests == []


def test_a_second_ctrl_c_during_a_tool_still_leaves_every_call_answered(tmp_path: Path,
                                                                        monkeypatch) -> None:
    import core.loop

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.loop, "run_tool", interrupted)
    recorder = Recorder()
    with ScriptedServer([Reply(call_events([("list_files", {}), ("list_files", {"path": "x"})]))]) as server:
        agent = _agent(server, tmp_path, recorder)
        outcome = agent.run("look")
    assert outcome.status == "aborted" and recorder.of("done")[-1]["status"] == "aborted"
    outputs = [i for i in agent.history if isinstance(i, FunctionCallOutput)]
    assert [o.output for o in outputs] == [INTERRUPTED_OUTPUT, INTERRUPTED_OUTPUT]
    assert _pairs_valid(build_body(agent.settings, "", agent.history, [])["input"])


def test_resume_keeps_the_session_cost_and_names_ambiguous_prefixes(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("a"))]) as server:
        run_agent(["--one", "one"], server.url, tmp_path)
        run_agent(["--one", "two"], server.url, tmp_path)
        first, second = sorted(p.name for p in (tmp_path / "sessions").iterdir())
        common = next(first[:n] for n in range(len(first), 0, -1) if second.startswith(first[:n]))
        done = run_agent(["--resume", common, "--one", "x"], server.url, tmp_path)
        assert done.returncode == 2 and "matches 2 sessions" in done.stderr.decode()
        from core.session import open_session

        session = open_session(make_settings(server.url, tmp_path), Recorder(), tmp_path / "ws",
                               lambda w, y: None, resume_latest=True)
        assert session.agent.usage.input_tokens == 100 and session.agent.usage.cost_usd > 0
        session.close()


def test_an_unwritable_sessions_folder_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with ScriptedServer([Reply(text_events("a"))]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path, env={"AGENT_SESSIONS_DIR": str(blocker / "s")})
    err = done.stderr.decode()
    assert done.returncode == 2 and "Cannot start the session" in err and "Traceback" not in err


def test_background_jobs_do_not_hold_the_turn_or_outlive_the_session(tmp_path: Path) -> None:
    from core.session import open_session

    marker = tmp_path / "ws" / "bg.pid"
    command = f"(sleep 30; echo LATE) & echo $! > {marker}; echo started"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        (tmp_path / "ws").mkdir(exist_ok=True)
        recorder = Recorder()
        session = open_session(make_settings(server.url, tmp_path), recorder, tmp_path / "ws",
                               lambda w, y: None)
        start = time.monotonic()
        session.agent.run("start something")
        assert time.monotonic() - start < 5
        (tool,) = recorder.of("tool")
        assert "started" in tool["result"] and "background job is still running" in tool["result"]
        pid = int(marker.read_text())
        assert _alive(pid)
        session.close()
    time.sleep(0.3)
    assert not _alive(pid)


def test_undecodable_file_names_do_not_break_the_next_request(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "caf\udce9.txt".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
     ).write_text("x")
    recorder = Recorder()
    with ScriptedServer([Reply(call_events([("list_files", {})])), Reply(text_events("listed"))]) as server:
        outcome = _agent(server, tmp_path, recorder).run("list")
    assert outcome.status == "ok"
    assert "caf\ufffd.txt" in server.requests[1]["input"][-1]["output"]


def test_repl_commands_sessions_resume_context(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("first answer")), Reply(text_events("continued"))]) as server:
        assert run_agent(["--one", "remember: use pnpm"], server.url, tmp_path).returncode == 0
        done = run_agent(["--plain"], server.url, tmp_path,
                         stdin=b"/sessions\n/resume\n/context\n/bogus\nand now?\n/exit\n")
    err, out = done.stderr.decode(), done.stdout.decode()
    assert done.returncode == 0, err
    assert "remember: use pnpm" in err and "Resumed session" in err and "(2 items)" in err
    assert "Context: about" in err and "user messages" in err and "Unknown command /bogus" in err
    assert out.strip() == "continued"
    assert [i.get("content") for i in server.requests[-1]["input"]] == ["remember: use pnpm", "first answer",
                                                                       "and now?"]
