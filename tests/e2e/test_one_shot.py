"""`agent.py --one` end to end, as a subprocess, against a scripted model on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.protocol import TextDelta, TextDone
from core.tools.safety import destructive_reason
from core.tools.shells import detect_shell
from tests.conftest import TEST_KEY
from tests.support.agent_process import AGENT, native, run_agent
from tests.support.events import Recorder
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def test_one_shot_writes_runs_and_answers(tmp_path: Path) -> None:
    script = [
        Reply(call_events([("write_file", {"path": "hello.txt", "content": "héllo 你好\n"})], reasoning="plan")),
        Reply(call_events([("run_shell", {"command": f"{sys.executable} -c \"print(open('hello.txt', "
                                                     f"encoding='utf-8').read().upper())\""})], reasoning="check")),
        Reply(text_events("The file says HÉLLO 你好.", reasoning="done")),
    ]
    with ScriptedServer(script) as server:
        # --yes: where no sandbox works (Windows) the mode is ask, and running a program asks
        done = run_agent(["--one", "create hello.txt and show it", "--yes"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "ws" / "hello.txt").read_text(encoding="utf-8") == "héllo 你好\n"
    assert done.stdout.decode("utf-8") == "The file says HÉLLO 你好.\n"
    # The server saw reasoning + grouped calls + outputs replayed, in that order, on every turn.
    first, second, third = server.requests
    assert first["input"] == [{"role": "user", "content": "create hello.txt and show it"}]
    types = [item.get("type", "message") for item in third["input"]]
    assert types == ["message", "reasoning", "function_call", "function_call_output",
                     "reasoning", "function_call", "function_call_output"]
    call, output = third["input"][5], third["input"][6]
    assert call["name"] == "run_shell" and output["call_id"] == call["call_id"]
    assert "HÉLLO 你好" in output["output"] and output["output"].startswith("exit code 0")
    assert second["input"] == third["input"][:4]  # the prefix never changes: the cache keeps hitting
    assert all(r["stream"] is True and r["store"] is False for r in server.requests)
    tools = {t["name"] for t in first["tools"]}
    assert {"run_shell", "read_file", "write_file", "edit_file", "list_files", "search"} <= tools


def test_piped_invalid_utf8_becomes_replacement_chars(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("收到: 你好"))]) as server:
        done = run_agent(["--one"], server.url, tmp_path, stdin=b"\xe4\xbd\xa0\xe5\xa5\xbd \xff\xfe")
    assert done.returncode == 0, done.stderr.decode()
    assert server.requests[0]["input"][0]["content"] == "你好 \ufffd\ufffd"
    assert done.stdout.decode("utf-8") == "收到: 你好\n"


def test_destructive_command_is_refused_without_yes(tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "rm -rf ~"})])), Reply(text_events("I will not."))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "clean up"], server.url, tmp_path)
    assert done.returncode == 0
    output = server.requests[1]["input"][-1]
    assert output["type"] == "function_call_output" and output["output"].startswith("refused")
    # How the user could allow it: --yes for the gate's question, --no-sandbox to leave a sandbox.
    assert "--yes" in output["output"] or "--no-sandbox" in output["output"]


def test_step_limit_has_its_own_exit_code(tmp_path: Path) -> None:
    loop = Reply(call_events([("list_files", {})]))
    with ScriptedServer([loop]) as server:
        done = run_agent(["--one", "loop forever"], server.url, tmp_path, env={"AGENT_MAX_STEPS": "3"})
    assert done.returncode == 3 and len(server.requests) == 3
    assert "AGENT_MAX_STEPS" in done.stderr.decode()


def test_dropped_stream_after_text_exits_non_zero_and_keeps_the_text(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("partial answer here", chunks=3), drop_after=3)]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path)
    assert done.returncode == 1 and len(server.requests) == 1
    assert "not retried" in done.stderr.decode()
    journal = next((tmp_path / "sessions").glob("*/journal.jsonl")).read_text(encoding="utf-8")
    assert '"status":"incomplete"' in journal and "partial" in journal


def test_401_names_the_key_source_and_never_prints_the_key(tmp_path: Path) -> None:
    body = b'{"error":{"message":"Authentication Fails (key sk-test-0123456789abcdef-SECRET)"}}'
    with ScriptedServer([Reply(status=401, body=body)]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 1 and "DEEPSEEK_API_KEY" in err and "rejected" in err
    assert TEST_KEY not in err + done.stdout.decode()
    for path in (tmp_path / "sessions").rglob("*"):
        if path.is_file():
            assert TEST_KEY not in path.read_text(encoding="utf-8", errors="replace")


def test_json_mode_writes_one_event_per_line(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("ok", reasoning="r"))]) as server:
        done = run_agent(["--one", "hi", "--json"], server.url, tmp_path)
    events = [json.loads(line) for line in done.stdout.decode().splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["session", "turn_started"]  # the runtime's and the client's bookkeeping stay inside
    assert kinds[-1] == "done" and all(e["v"] == 2 for e in events)
    assert kinds.index("reasoning") < kinds.index("text") < kinds.index("text_done") < kinds.index("usage")
    assert events[-1]["status"] == "ok" and events[-1]["text"] == "ok"
    text = [e for e in events if e["type"] in ("text", "text_done")]
    assert len({e["item_id"] for e in text}) == 1 and text[0]["item_id"]


def test_missing_key_is_one_clear_sentence(tmp_path: Path) -> None:
    done = run_agent(["--one", "hi"], "https://api.deepseek.com", tmp_path, env={"DEEPSEEK_API_KEY": ""})
    err = done.stderr.decode().strip()
    assert done.returncode == 2 and err.startswith("error: No API key found") and "DEEPSEEK_API_KEY" in err
    assert len(err.splitlines()) == 1


# What `env; echo token=$GITHUB_TOKEN; cat notes.txt; printf` did, in any shell: the key's two halves
# are written a moment apart, so that they reach the agent in two reads.
SHOW_ENV_AND_KEY = """import os, sys, time
for name, value in os.environ.items():
    print(f"{name}={value}")
print("token=" + os.environ.get("GITHUB_TOKEN", ""))
print(open("notes.txt", encoding="utf-8").read(), end="")
sys.stdout.write(sys.argv[1])
sys.stdout.flush()
time.sleep(0.3)
print(sys.argv[2])
"""


def test_the_key_never_leaks_to_children_output_or_session_files(tmp_path: Path) -> None:
    """A command prints the key (read from a workspace file, and in two halves a moment apart): it is
    in no request, not on stdout or stderr, and in no file under the session folder, all of which
    are private."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text(f"the key is {TEST_KEY}\n")
    (tmp_path / "ws" / "show.py").write_text(SHOW_ENV_AND_KEY)
    half = len(TEST_KEY) // 2
    command = f'"{Path(sys.executable).as_posix()}" show.py {TEST_KEY[:half]} {TEST_KEY[half:]}'
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "show env", "--yes"], server.url, tmp_path,
                         env={"GITHUB_TOKEN": "ghp-also-secret-value", "MY_PASSWORD": "hunter2-secret"})
    assert done.returncode == 0
    output = server.requests[1]["input"][-1]["output"]
    assert "token=\n" in output and "the key is [REDACTED]" in output  # it ran, without GITHUB_TOKEN
    for secret in (TEST_KEY, "ghp-also-secret-value", "hunter2-secret"):
        assert secret not in json.dumps(server.requests)
    written = done.stdout + done.stderr
    files = [path for path in (tmp_path / "sessions").rglob("*") if path.is_file()]
    assert any(path.parent.name == "outputs" for path in files)  # the raw output archive is among them
    for path in files:
        written += path.read_bytes()
    assert TEST_KEY.encode() not in written and b"the key is [REDACTED]" in written
    if sys.platform != "win32":
        for path in (tmp_path / "sessions").rglob("*"):
            assert os.stat(path).st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path


def test_yes_approves_destructive_commands(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside" / "junk").mkdir(parents=True)
    command = native("rm -rf ../outside/junk", r"rd /s /q ..\outside\junk", "Remove-Item -Recurse -Force ../outside/junk")
    assert destructive_reason(command, tmp_path / "ws", detect_shell().syntax), "the gate would ask"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("cleaned"))]
    # --yes answers the gate's questions, never the sandbox's: the folder is one the sandbox lets commands write.
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "clean up", "--yes"], server.url, tmp_path,
                         env={"AGENT_SANDBOX_WRITABLE": str(tmp_path / "outside")})
    assert done.returncode == 0 and not (tmp_path / "outside" / "junk").exists()
    assert server.requests[1]["input"][-1]["output"].startswith("exit code 0")


def test_plain_and_one_shot_never_import_rich_or_prompt_toolkit(tmp_path: Path) -> None:
    """With both libraries unimportable, --one still works and --plain falls back cleanly."""
    blocker = tmp_path / "blocked"
    blocker.mkdir()
    for name in ("rich", "prompt_toolkit"):
        (blocker / f"{name}.py").write_text(f"raise ImportError('{name} is blocked for this test')\n")
    with ScriptedServer([Reply(text_events("works without them"))]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path, env={"PYTHONPATH": str(blocker)})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == "works without them\n"
    probe = ("import sys, agent, ui.plain.repl, core.agent.loop, core.runtime.open, core.runtime.commands; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'prompt_toolkit')))")
    listed = subprocess.run([sys.executable, "-c", probe], cwd=AGENT.parent, capture_output=True, text=True,
                            check=True).stdout.strip()
    assert listed == "[]"


def test_a_key_split_across_streamed_deltas_is_still_redacted(tmp_path: Path) -> None:
    text = f"your key is {TEST_KEY} — keep it safe"
    for mode in (["--json"], [], ["--plain"]):
        with ScriptedServer([Reply(text_events(text, reasoning=f"the .env says {TEST_KEY}", chunks=9))]) as server:
            done = run_agent(["--one", "what is my key?", *mode] if mode != ["--plain"] else ["--plain"],
                             server.url, tmp_path, stdin=b"what is my key?\n" if mode == ["--plain"] else None)
        out = done.stdout.decode() + done.stderr.decode()
        assert done.returncode == 0, out
        assert TEST_KEY not in out and "[REDACTED]" in out, mode
        assert "keep it safe" in out


def test_redacting_emit_holds_back_only_what_could_become_a_secret() -> None:
    from core.secrets import RedactingEmit, Redactor

    seen = Recorder()
    emit = RedactingEmit(seen, Redactor("sk-abcdef123"))
    for piece in ("hello s", "k-abc", "def12", "3 bye"):
        emit(TextDelta(delta=piece, item_id="m1"))
    emit(TextDone(text="hello sk-abcdef123 bye", item_id="m1"))
    assert seen.text() == "hello [REDACTED] bye"
    assert seen.all[0] == TextDelta(delta="hello ", item_id="m1")
    assert seen.all[-1] == TextDone(text="hello [REDACTED] bye", item_id="m1")


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _process_gone(pid: int, within: float) -> bool:
    """True once `pid` has exited (a zombie waiting for its reaper counts as exited)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (ProcessLookupError, FileNotFoundError):
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX job control (`&`, process groups)")
def test_a_background_job_with_redirected_output_ends_with_the_one_shot(tmp_path: Path) -> None:
    """`server > log 2>&1 &` holds no pipe of ours, yet must not outlive the session either."""
    seconds = 300 + os.getpid() % 97  # a command line of this test's own: `$!` is a pid inside the
    command = f"sleep {seconds} > job.log 2>&1 & echo $! > job.pid"  # command's PID namespace, if any
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("started"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "start it in the background"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p) == f"sleep {seconds}"]
    try:
        assert all(_process_gone(pid, within=10) for pid in pids)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # reaped already: the agent adopts its orphans
                os.kill(pid, signal.SIGKILL)
    assert "stopped when the session ends" in server.requests[1]["input"][-1]["output"]
