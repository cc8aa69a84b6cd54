"""Sessions: resume from the journal, repair after crashes, interrupts, and kill -9 recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core import protocol as ev
from core.agent.loop import Agent
from core.cancel import Cancel
from core.provider.request import build_body
from core.session.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Reasoning,
    ToolOutcome,
    UserMessage,
    to_record,
)
from core.session.journal import INTERRUPTED_OUTPUT, Journal, JournalError, list_sessions, load, sessions_root
from tests.conftest import TEST_KEY, make_settings
from tests.support.agent_process import AGENT, run_agent
from tests.support.events import Recorder
from tests.support.heartbeat import BEAT, beating
from tests.support.history import pairs_valid
from tests.support.reading_model import reader_model
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

# A command's script: it starts a heartbeat grandchild (see BEAT) that holds our output pipe, says
# "started", and with "wait" waits for it. Python, so that it runs under bash and cmd.exe alike.
STARTER = """import subprocess, sys
child = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]], stdin=subprocess.DEVNULL)
print("started", flush=True)
if sys.argv[3:] == ["wait"]:
    child.wait()
"""
# Windows has no SIGINT to send: Ctrl-C is a console event for every process attached to a console.
# The agent runs under this launcher, in a console of their own, and the launcher raises the event
# there each time the test creates the file named by its first argument; it exits as the agent did.
CTRL_C_LAUNCHER = """import ctypes, os, signal, subprocess, sys, time
agent = subprocess.Popen(sys.argv[2:], stdin=0, stdout=1, stderr=2)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while agent.poll() is None:
    if os.path.exists(sys.argv[1]):
        os.remove(sys.argv[1])
        ctypes.windll.kernel32.GenerateConsoleCtrlEvent(0, 0)  # CTRL_C_EVENT, to the whole console
    time.sleep(0.05)
sys.exit(agent.returncode)
"""


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
                 FunctionCallOutput("c1", "exit code 0", ToolOutcome(tool="run_shell"))):
        journal.append(item)
    journal.close()
    with open(journal.path, "ab") as handle:
        handle.write(b'{"kind":"function_call_output","call_id":"c2","out')  # the crash came mid-write
    loaded = load(journal.folder)
    assert any("cut off" in n for n in loaded.notices) and any("interrupted" in n for n in loaded.notices)
    outputs = [i for i in loaded.items if isinstance(i, FunctionCallOutput)]
    assert [o.call_id for o in outputs] == ["c1", "c2"] and outputs[1].output == INTERRUPTED_OUTPUT
    body = build_body(make_settings("http://127.0.0.1:1"), "", [*loaded.items, UserMessage("next")], [])
    assert pairs_valid(body["input"])


# -- interrupts (in process) ----------------------------------------------------------------------
def _agent(server: ScriptedServer, tmp_path: Path, recorder: Recorder) -> Agent:
    (tmp_path / "ws").mkdir(exist_ok=True)
    settings = make_settings(server.url, tmp_path)
    journal = Journal.create(tmp_path / "sessions", tmp_path / "ws", settings.model)
    return Agent(settings, recorder, tmp_path / "ws", "yes", journal=journal)


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
        while not recorder.of(ev.TextDelta):
            time.sleep(0.01)
        start = time.monotonic()
        cancel.cancel()
        worker.join(5)
        elapsed = time.monotonic() - start
        assert elapsed < 3, elapsed
        assert outcome[0].status == "aborted" and recorder.of(ev.Aborted)
        partial = [i for i in agent.history if isinstance(i, AssistantMessage)]
        assert partial and partial[0].status == "interrupted" and partial[0].text
        # The user can go on: the next request is valid and holds the partial text.
        assert agent.run("continue").status == "ok"
    assert server.requests[-1]["input"][1]["content"] == partial[0].text


def _python() -> str:
    """The Python running the tests, quoted for any shell."""
    return f'"{Path(sys.executable).as_posix()}"'


def _tree(tmp_path: Path, wait: bool) -> tuple[str, Path]:
    """The command that runs STARTER, and its grandchild's heartbeat file."""
    (tmp_path / "start.py").write_text(STARTER)
    (tmp_path / "beat.py").write_text(BEAT)
    beat = tmp_path / "beat.txt"
    paths = " ".join(f'"{p.as_posix()}"' for p in (tmp_path / "start.py", tmp_path / "beat.py", beat))
    return f"{_python()} {paths}" + (" wait" if wait else ""), beat


def test_cancel_during_a_tool_kills_the_process_tree(tmp_path: Path) -> None:
    recorder = Recorder()
    (tmp_path / "ws").mkdir()
    command, beat = _tree(tmp_path / "ws", wait=True)  # in the workspace, which confined commands may write
    with ScriptedServer([Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("x"))]) as server:
        agent = _agent(server, tmp_path, recorder)
        cancel = Cancel()
        worker = threading.Thread(target=agent.run, args=("run it", cancel))
        worker.start()
        assert beating(beat), "the grandchild runs while the tool waits for it"
        start = time.monotonic()
        cancel.cancel()
        worker.join(10)
        assert time.monotonic() - start < 3
    time.sleep(0.2)
    assert not beating(beat, within=0), "the grandchild was killed with the process tree"
    (tool,) = recorder.of(ev.ToolFinished)
    assert "interrupted" in tool.result and recorder.of(ev.Aborted)
    assert isinstance(agent.history[-1], FunctionCallOutput)


# -- process level ------------------------------------------------------------------------------
def _spawn(args: list[str], server_url: str, tmp_path: Path, launcher: tuple[str, ...] = (),
           **kwargs) -> subprocess.Popen:
    (tmp_path / "ws").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_"))}
    env.update({"DEEPSEEK_BASE_URL": server_url, "DEEPSEEK_API_KEY": TEST_KEY, "NO_COLOR": "1",
                "AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), "AGENT_RETRY_BASE_DELAY": "0.05"})
    return subprocess.Popen([*launcher, sys.executable, str(AGENT), "--cwd", str(tmp_path / "ws"), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _spawn_for_ctrl_c(args: list[str], server_url: str, tmp_path: Path,
                      **kwargs) -> tuple[subprocess.Popen, Callable[[], None]]:
    """The agent, and what presses Ctrl-C in it: SIGINT on POSIX, a console event on Windows."""
    if sys.platform != "win32":
        proc = _spawn(args, server_url, tmp_path, **kwargs)
        return proc, lambda: proc.send_signal(signal.SIGINT)
    (tmp_path / "ctrl_c.py").write_text(CTRL_C_LAUNCHER)
    trigger = tmp_path / "press-ctrl-c"
    hidden = subprocess.STARTUPINFO(dwFlags=subprocess.STARTF_USESHOWWINDOW, wShowWindow=0)  # SW_HIDE
    proc = _spawn(args, server_url, tmp_path, launcher=(sys.executable, str(tmp_path / "ctrl_c.py"), str(trigger)),
                  creationflags=subprocess.CREATE_NEW_CONSOLE, startupinfo=hidden, **kwargs)
    return proc, trigger.touch


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
                                 ("run_shell", {"command": f'{_python()} -c "import time; time.sleep(30)"'})])),
              Reply(text_events("resumed fine"))]
    with ScriptedServer(script) as server:
        proc = _spawn(["--one", "make a.txt then wait", "--yes"], server.url, tmp_path)  # no question on Windows
        _wait_for(lambda: sum(r["kind"] == "function_call_output" for r in _journal_records(tmp_path)) == 1)
        time.sleep(0.3)  # inside the 30 s sleep now
        proc.kill()
        proc.wait()
        kinds = [r["kind"] for r in _journal_records(tmp_path) if r["kind"] != "usage"]
        assert kinds == ["session", "user", "reasoning", "function_call", "function_call", "checkpoint",
                         "function_call_output"]  # the write_file checkpoint comes before its output
        done = run_agent(["--resume", "--one", "go on"], server.url, tmp_path)
    assert done.returncode == 0 and done.stdout.decode() == "resumed fine\n"
    request = server.requests[-1]["input"]
    assert pairs_valid(request)
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
        proc, ctrl_c = _spawn_for_ctrl_c(["--one", "hi"], server.url, tmp_path)
        _wait_for(lambda: len(server.requests) == 1)
        time.sleep(0.3)
        ctrl_c()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130 and b"interrupted" in err


def test_ctrl_c_during_a_stalled_stream_ends_the_one_shot_at_once(tmp_path: Path) -> None:
    """On Windows Ctrl-C waited for the stalled stream's next byte (40 s here): a SIGINT handler runs
    only once the main thread's socket read returns, and Windows does not interrupt that read."""
    slow = Reply(text_events("one two three four", chunks=4), pause_at=2, pause=40.0)
    with ScriptedServer([slow]) as server:
        proc, ctrl_c = _spawn_for_ctrl_c(["--one", "hi"], server.url, tmp_path)
        _wait_for(lambda: len(server.requests) == 1)
        time.sleep(1.0)  # the first words are in; the stream stalls
        start = time.monotonic()
        ctrl_c()
        _, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - start
    assert proc.returncode == 130 and b"interrupted" in err
    assert elapsed < 10, elapsed


def test_sigint_to_a_running_plain_agent_interrupts_the_turn_only(tmp_path: Path) -> None:
    slow = Reply(text_events("slow slow slow slow", chunks=4), delay=2.0)
    with ScriptedServer([slow, Reply(text_events("second works"))]) as server:
        proc, ctrl_c = _spawn_for_ctrl_c(["--plain"], server.url, tmp_path, stdin=subprocess.PIPE)
        proc.stdin.write(b"first question\n")
        proc.stdin.flush()
        _wait_for(lambda: len(server.requests) == 1)
        time.sleep(0.3)
        ctrl_c()
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


def test_resume_takes_the_later_of_two_sessions_started_in_the_same_second(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("a")), Reply(text_events("b")), Reply(text_events("c"))]) as server:
        for prompt in ("earlier", "later"):
            assert run_agent(["--one", prompt], server.url, tmp_path).returncode == 0
        root = tmp_path / "sessions"
        # Give both the same second and random parts that sort against their order of creation.
        for folder, suffix in zip(sorted(root.iterdir(), key=_first_prompt), ("ffffffff", "00000000"), strict=True):
            lines = (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
            header = json.loads(lines[0])
            header["created"] = "2026-03-04T05:06:07"
            (folder / "journal.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
            folder.rename(root / f"20260304-050607-{suffix}")
        done = run_agent(["--resume", "--one", "go on"], server.url, tmp_path)
    assert done.returncode == 0
    assert server.requests[-1]["input"][0]["content"] == "later"


def _first_prompt(folder: Path) -> str:
    """Sorts the test's "earlier" session before its "later" one."""
    return "0" if '"earlier"' in (folder / "journal.jsonl").read_text(encoding="utf-8") else "1"


def test_sessions_in_one_second_list_in_creation_order_and_old_journals_still_sort(tmp_path: Path,
                                                                                    monkeypatch) -> None:  # type: ignore[no-untyped-def]
    second = 1_780_000_000 * 1_000_000_000
    ids = []
    for offset in (1, 2, 3):
        monkeypatch.setattr(time, "time_ns", lambda offset=offset: second + offset * 1000)
        journal = Journal.create(tmp_path, tmp_path, "m")
        journal.append(UserMessage(f"task {offset}"))
        journal.close()
        ids.append(journal.id)
    old = "20200101-000000-zzzz"  # a journal written before the precise time: whole seconds only
    Journal(tmp_path / old).write({"kind": "session", "created": "2020-01-01T00:00:00"})
    assert [s.id for s in list_sessions(tmp_path)] == [*reversed(ids), old]


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
    from core.provider.client import ResponsesClient

    with ScriptedServer([Reply(text_events("x"))]) as server:
        cancel = Cancel()
        cancel.cancel()
        client = ResponsesClient(make_settings(server.url))
        result = client.stream({"model": "m", "input": "x"}, Recorder(), cancel)
        client.close()
    assert result.status == "aborted" and server.requests == []


def test_a_second_ctrl_c_during_a_tool_still_leaves_every_call_answered(tmp_path: Path,
                                                                        monkeypatch) -> None:
    import core.agent.loop

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.agent.loop, "run_tool", interrupted)
    recorder = Recorder()
    with ScriptedServer([Reply(call_events([("list_files", {}), ("list_files", {"path": "x"})]))]) as server:
        agent = _agent(server, tmp_path, recorder)
        outcome = agent.run("look")
    assert outcome.status == "aborted" and recorder.of(ev.Done)[-1].status == "aborted"
    outputs = [i for i in agent.history if isinstance(i, FunctionCallOutput)]
    assert [o.output for o in outputs] == [INTERRUPTED_OUTPUT, INTERRUPTED_OUTPUT]
    assert pairs_valid(build_body(agent.settings, "", agent.history, [])["input"])


def test_resume_keeps_the_session_cost_and_names_ambiguous_prefixes(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("a"))]) as server:
        run_agent(["--one", "one"], server.url, tmp_path)
        run_agent(["--one", "two"], server.url, tmp_path)
        first, second = sorted(p.name for p in (tmp_path / "sessions").iterdir())
        common = next(first[:n] for n in range(len(first), 0, -1) if second.startswith(first[:n]))
        done = run_agent(["--resume", common, "--one", "x"], server.url, tmp_path)
        assert done.returncode == 2 and "matches 2 sessions" in done.stderr.decode()
        from core.runtime.open import open_session

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
    from core.runtime.open import open_session

    (tmp_path / "ws").mkdir(exist_ok=True)
    command, beat = _tree(tmp_path / "ws", wait=False)  # in the workspace, which confined commands may write
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        recorder = Recorder()
        session = open_session(make_settings(server.url, tmp_path), recorder, tmp_path / "ws",
                               lambda w, y: None)
        start = time.monotonic()
        session.agent.run("start something")
        assert time.monotonic() - start < 5
        (tool,) = recorder.of(ev.ToolFinished)
        assert "started" in tool.result and "background job is still running" in tool.result
        assert beating(beat), "the background job runs on after the turn"
        session.close()
    time.sleep(0.3)
    assert not beating(beat, within=0), "the background job ended with the session"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the agent adopts orphans as a Linux subreaper")
@pytest.mark.parametrize("escape", [
    "setsid {beat} &",
    "setsid env -i {beat} &",
    "(setsid sh -c '{beat}' &)",
    "nohup setsid {beat} >/dev/null 2>&1 &",
    "python3 -c 'import os, subprocess, sys; os.fork() or (os.setsid(), subprocess.Popen(sys.argv[1:]))' {beat}",
])
def test_a_job_that_leaves_its_command_ends_with_the_turn(tmp_path: Path, escape: str) -> None:
    from core.runtime.open import open_session

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "beat.py").write_text(BEAT)
    beat = workspace / "beat.txt"
    command = escape.format(beat=f"{_python()} {(workspace / 'beat.py').as_posix()} {beat.as_posix()}")
    command += f"\nfor i in $(seq 100); do [ -s {beat.as_posix()} ] && break; sleep 0.1; done"  # it runs
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok")),
              Reply(text_events("still here"))]
    with ScriptedServer(script) as server:
        session = open_session(make_settings(server.url, tmp_path), Recorder(), workspace, lambda w, y: None)
        try:
            session.agent.run("start something")
            assert beat.exists(), f"{escape!r} never started"
            assert not beating(beat, within=0), f"{escape!r} outlived its turn"
            assert session.agent.run("and now?").status == "ok"  # the session goes on
        finally:
            session.close()


def test_undecodable_file_names_do_not_break_the_next_request(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    try:  # on POSIX the bytes b"caf\xe9.txt", not UTF-8; on Windows a lone surrogate, which NTFS takes
        (tmp_path / "ws" / "caf\udce9.txt").write_text("x")
    except OSError:
        if sys.platform != "win32":
            raise
        pytest.skip("wine maps Windows file names to Unix ones through a code page, which cannot hold a "
                    "lone surrogate (real Windows can)")
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


# -- durability ---------------------------------------------------------------------------------
class _DiskFullOnce:
    """The journal's file, failing one write half-way through with ENOSPC (as a full disk does)."""

    def __init__(self, real) -> None:
        self.real = real
        self.armed = False

    def write(self, data) -> int:
        if self.armed:
            self.armed = False
            self.real.write(bytes(data[: len(data) // 2]))
            raise OSError(28, "No space left on device")
        return self.real.write(data)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


def test_a_failed_append_loses_only_that_record(tmp_path: Path) -> None:
    """The record after a half-written one must not be glued to it (both would be lost)."""
    recorder = Recorder()
    script = [Reply(call_events([("run_shell", {"command": "echo one"})])), Reply(text_events("first done")),
              Reply(text_events("second done"))]
    with ScriptedServer(script) as server:
        agent = _agent(server, tmp_path, recorder)
        agent.run("task one")
        disk = _DiskFullOnce(agent.journal._file)
        agent.journal._file = disk
        disk.armed = True
        agent.run("task two: the disk is full while this is written")
        agent.journal.close()
    warnings = [n.message for n in recorder.of(ev.Notice) if "journal" in n.message]
    assert len(warnings) == 1 and "No space left" in warnings[0]
    loaded = load(agent.journal.folder)
    texts = [getattr(i, "text", None) for i in loaded.items]
    assert "second done" in texts  # every record written after the failed one loads
    lost = [to_record(i) for i in agent.history if to_record(i) not in [to_record(j) for j in loaded.items]]
    assert lost == [to_record(UserMessage("task two: the disk is full while this is written"))]
    assert any("damaged" in n for n in loaded.notices) and not any("cut off" in n for n in loaded.notices)
    body = build_body(agent.settings, "", [*loaded.items, UserMessage("next")], [])
    assert pairs_valid(body["input"])


def _held_script() -> list[Reply]:
    return [Reply(text_events("first answer")), Reply(text_events("slow answer", chunks=4), delay=1.0),
            Reply(text_events("third answer"))]


def _resumed_elsewhere(server: ScriptedServer, tmp_path: Path, first_task: str) -> subprocess.Popen:
    """After `first_task`, another agent resumes the session with "task A"; it returns while that
    agent has the session open and is streaming its slow answer."""
    assert run_agent(["--one", first_task], server.url, tmp_path).returncode == 0
    holder = _spawn(["--resume", "--one", "task A"], server.url, tmp_path)
    _wait_for(lambda: len(server.requests) >= 2)
    return holder


def test_a_session_open_in_one_agent_cannot_be_resumed_in_another(tmp_path: Path) -> None:
    """Two terminals resuming one session would interleave it: the second is told who holds it."""
    with ScriptedServer(_held_script()) as server:
        holder = _resumed_elsewhere(server, tmp_path, "first task")
        second = run_agent(["--resume", "--one", "task B"], server.url, tmp_path)
        assert holder.wait(timeout=30) == 0
        third = run_agent(["--resume", "--one", "task C"], server.url, tmp_path)
    err = second.stderr.decode()
    assert second.returncode == 2 and f"is open in another deepseek-agent (pid {holder.pid} on " in err, err
    assert third.returncode == 0, third.stderr.decode()  # the lock went with the process that held it
    users = [r["content"] for r in server.requests[-1]["input"] if r.get("role") == "user"]
    assert users == ["first task", "task A", "task C"]  # task B never entered the journal


def test_a_session_being_written_is_read_by_another_process(tmp_path: Path) -> None:
    """While one agent appends to a journal (fsynced, locked: Windows locks are mandatory), another
    process lists it and reads every acknowledged record; after it ends, the resume sees them all."""
    with ScriptedServer(_held_script()) as server:
        holder = _resumed_elsewhere(server, tmp_path, "first task 你好")
        listing = run_agent(["--sessions"], server.url, tmp_path)
        records = _journal_records(tmp_path)
        assert holder.wait(timeout=30) == 0
        resumed = run_agent(["--resume", "--one", "task C"], server.url, tmp_path)
    assert listing.returncode == 0 and "first task 你好" in listing.stdout.decode(), listing.stderr.decode()
    assert [r["text"] for r in records if r["kind"] == "user"] == ["first task 你好", "task A"]
    assert resumed.returncode == 0, resumed.stderr.decode()
    users = [r["content"] for r in server.requests[-1]["input"] if r.get("role") == "user"]
    assert users == ["first task 你好", "task A", "task C"]


def test_sessions_started_in_the_same_second_never_share_a_journal(tmp_path: Path) -> None:
    """The id has 32 random bits after the second, and a clash would meet the lock."""
    journals = [Journal.create(tmp_path, tmp_path, "m") for _ in range(200)]
    assert len({j.id[:15] for j in journals}) <= 2 and len({j.id for j in journals}) == 200
    first, second = journals[0], Journal(journals[0].folder, header={"kind": "session"})
    first.append(UserMessage("mine"))
    try:
        second.append(UserMessage("theirs"))
        raise AssertionError("two journals wrote one session")
    except JournalError as exc:
        assert "is open in another deepseek-agent" in str(exc)
    first.close()
    assert [i.text for i in load(first.folder).items] == ["mine"]


def test_resume_restores_compaction_so_the_next_request_is_the_one_without_the_restart(tmp_path: Path) -> None:
    """A resume keeps the journaled summary: it must not send the full history again and summarise
    (and bill) the same span a second time. Compared: one process doing two tasks, and the same two
    tasks with a restart between them."""
    env = {"AGENT_WORKING_BUDGET": "6000", "DEEPSEEK_CONTEXT_WINDOW": "100000"}
    requests = {}
    for how in ("live", "restarted"):
        base = tmp_path / how
        (base / "ws").mkdir(parents=True)
        for n in range(6):
            (base / "ws" / f"f{n}.txt").write_text(f"file {n}: " + " ".join(f"w{n}{k}" for k in range(700)) + "\n")
        with ScriptedServer(responder=reader_model) as server:
            if how == "live":
                done = run_agent(["--plain"], server.url, base, stdin=b"task one\ntask two\n", env=env)
            else:
                assert run_agent(["--one", "task one"], server.url, base, env=env).returncode == 0
                done = run_agent(["--resume", "--one", "task two"], server.url, base, env=env)
        assert done.returncode == 0, done.stderr.decode()
        requests[how] = server.requests
    live, restarted = requests["live"], requests["restarted"]
    summaries = [i for i, r in enumerate(live) if r.get("tool_choice") == "none"]
    assert summaries, "the scenario must compact during task one"
    first_of_task_two = next(i for i, r in enumerate(live) if r["input"][-1].get("content") == "task two")
    assert summaries[-1] < first_of_task_two
    def same(request: dict) -> list[dict]:  # the server numbers item and call ids per run
        return [{k: v for k, v in item.items() if k not in ("id", "call_id")} for item in request["input"]]

    assert [same(r) for r in restarted] == [same(r) for r in live]  # not one request differs
    assert all(pairs_valid(r["input"]) for r in restarted)
    assert sum(r.get("tool_choice") == "none" for r in restarted) == len(summaries)  # no span summarised twice
    records = _journal_records(tmp_path / "restarted")
    compactions = [r for r in records if r["kind"] == "compaction"]
    assert compactions and all(r["usage"]["input_tokens"] > 0 for r in compactions)  # summaries are billed too


def test_sessions_are_machine_local_on_windows(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Up to hundreds of MB of raw output belong in %LOCALAPPDATA%, not the roaming %APPDATA% a
    domain profile copies between machines; elsewhere the XDG state folder."""
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert sessions_root() == tmp_path / "Local" / "deepseek-agent" / "sessions"
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert sessions_root() == tmp_path / "state" / "deepseek-agent" / "sessions"
    assert sessions_root(str(tmp_path / "mine")) == tmp_path / "mine"
