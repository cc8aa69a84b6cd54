"""The agent in a real terminal: tmux runs it (the full-screen TUI, or the plain REPL with --plain),
send-keys types, capture-pane reads."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY
from tests.sse_server import Reply, ScriptedServer, call_events, text_events

# Skips a test that drives a real terminal in tmux, saying why it cannot here.
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives a POSIX terminal; Windows has none"
                                if sys.platform == "win32" else "tmux is not installed (.ci/run installs it)")
pytestmark = [pytest.mark.terminal, needs_tmux]
ROOT = Path(__file__).resolve().parent.parent


class Terminal:
    def __init__(self, command: str, env: dict[str, str], width: int = 160, height: int = 50) -> None:
        self.name = f"da-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                        f"env {exports} {command}; echo '[exited' $?']'; sleep 30"], check=True)
        # tmux holds a bare Esc for 500 ms by default, waiting for a sequence; users are told to lower it.
        subprocess.run(["tmux", "set-option", "-s", "escape-time", "10"], check=False)

    def resize(self, width: int, height: int) -> None:
        subprocess.run(["tmux", "resize-window", "-t", self.name, "-x", str(width), "-y", str(height)], check=True)

    def scrollback(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", self.name],
                              capture_output=True, text=True, check=False).stdout

    def send(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", self.name], capture_output=True,
                              text=True, check=False).stdout

    def wait_for(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)


def _env(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"DEEPSEEK_BASE_URL": url, "DEEPSEEK_API_KEY": TEST_KEY, "AGENT_SESSIONS_DIR": str(tmp_path / "s"),
            "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "LANG": "C.UTF-8", **extra}


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    yield folder


def _agent_command(workspace: Path, *flags: str, agent: Path = ROOT / "agent.py") -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))} --cwd {shlex.quote(str(workspace))} {' '.join(flags)}"


def test_plain_repl_answers_chinese_and_exits_on_double_ctrl_c(tmp_path: Path, workspace: Path) -> None:
    script = [Reply(text_events("你好！我能帮你什么？", reasoning="用户打招呼")), Reply(text_events("second"))]
    with ScriptedServer(script) as server:
        term = Terminal(_agent_command(workspace, "--plain"), _env(server.url, tmp_path))
        try:
            term.wait_for("Type a task")
            term.send("你好，世界", literal=True)
            term.send("Enter")
            screen = term.wait_for("我能帮你什么")
            assert "thinking: 用户打招呼" in screen
            assert server.requests[0]["input"][0]["content"] == "你好，世界"
            term.send("/help", "Enter")
            term.wait_for("/compact")
            term.send("C-c")
            term.wait_for("press Ctrl-C again to exit")
            term.send("C-c")
            term.wait_for("[exited 0]")
        finally:
            term.close()


def test_ctrl_c_interrupts_a_running_turn_and_the_session_goes_on(tmp_path: Path, workspace: Path) -> None:
    slow = Reply(text_events("tick tock tick tock", chunks=4), delay=2.0)
    with ScriptedServer([slow, Reply(text_events("still here"))]) as server:
        term = Terminal(_agent_command(workspace, "--plain"), _env(server.url, tmp_path))
        try:
            term.wait_for("Type a task")
            term.send("count", "Enter")
            term.wait_for("tick")
            term.send("C-c")
            term.wait_for("interrupted")
            term.send("again", "Enter")
            term.wait_for("still here")
            assert "[exited" not in term.screen()
        finally:
            term.close()


def test_destructive_command_asks_and_no_refuses(tmp_path: Path, workspace: Path) -> None:
    (workspace / "keep.txt").write_text("precious")
    script = [Reply(call_events([("run_shell", {"command": "rm -rf ."})])), Reply(text_events("ok, not deleting"))]
    with ScriptedServer(script) as server:
        term = Terminal(_agent_command(workspace, "--plain"), _env(server.url, tmp_path))
        try:
            term.wait_for("Type a task")
            term.send("clean everything", "Enter")
            term.wait_for("Allow it? [y/N]")
            term.send("n", "Enter")
            term.wait_for("ok, not deleting")
        finally:
            term.close()
    assert (workspace / "keep.txt").read_text() == "precious"
    assert "the user said no" in server.requests[1]["input"][-1]["output"]


def test_plain_approval_offers_the_same_four_decisions(tmp_path: Path, workspace: Path) -> None:
    risky = Reply(call_events([("run_shell", {"command": "git reset --hard"})]))
    script = [risky, Reply(text_events("first")), risky, Reply(text_events("second")),
              Reply(call_events([("run_shell", {"command": "git clean -f"})])), Reply(text_events("third"))]
    with ScriptedServer(script) as server:
        term = Terminal(_agent_command(workspace, "--plain"), _env(server.url, tmp_path))
        try:
            term.wait_for("Type a task")
            term.send("one", "Enter")
            screen = term.wait_for("Allow it? [y/N]")
            assert "1 run once (y) · 2 always, for this session (a) · 3 deny (n) · 4 deny, and tell" in screen
            term.send("2", "Enter")
            term.wait_for("first")
            term.send("two", "Enter")
            term.wait_for("allowed (always, for this session)")
            term.wait_for("second")
            term.send("three", "Enter")
            term.wait_for("Allow it? [y/N]")
            term.send("4", "Enter")
            term.wait_for("Why (the model is told)?")
            term.send("not on my machine", "Enter")
            term.wait_for("third")
        finally:
            term.close()
    assert "not on my machine" in server.requests[5]["input"][-1]["output"]


def test_first_run_asks_for_the_key_and_saves_it_privately(tmp_path: Path, workspace: Path) -> None:
    """The key is looked for next to agent.py: run a copy from a scratch folder."""
    app = _app_copy(tmp_path)
    with ScriptedServer([Reply(text_events("hello with key"))]) as server:
        env = _env(server.url, tmp_path, DEEPSEEK_API_KEY="", PYTHONPATH=str(app))
        env["DEEPSEEK_BASE_URL"] = server.url.replace("127.0.0.1", "localhost.localdomain.invalid")
        term = Terminal(_agent_command(workspace, "--plain", agent=app / "agent.py"), env)
        try:
            term.wait_for("API key (hidden):")
            term.send("sk-typed-key-987654", "Enter")
            term.wait_for("Saved to")
            assert "sk-typed-key-987654" not in term.screen()
        finally:
            term.close()
    saved = app / ".env"
    assert saved.read_text() == "DEEPSEEK_API_KEY=sk-typed-key-987654\n"
    assert os.stat(saved).st_mode & 0o777 == 0o600


def _app_copy(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    for package in ("core", "ui"):
        shutil.copytree(ROOT / package, app / package, ignore=shutil.ignore_patterns("__pycache__"))
    for module in ("agent.py", "tui.py"):
        shutil.copy(ROOT / module, app / module)
    return app


# -- the full-screen TUI ----------------------------------------------------------------------
@contextmanager
def tui(script: list[Reply], tmp_path: Path, workspace: Path) -> Iterator[tuple[Terminal, ScriptedServer]]:
    """The full-screen agent at 80x24 against a scripted server, ready for input."""
    with ScriptedServer(script) as server:
        term = Terminal(_agent_command(workspace), _env(server.url, tmp_path), width=80, height=24)
        try:
            term.wait_for("idle")
            yield term, server
        finally:
            term.close()


ANSWER = "# Findings\n\nThe **main** issue is in `parse()`:\n\n- it drops the last line\n- it ignores tabs\n"


def test_tui_streams_markdown_shows_a_tool_panel_and_the_status_bar(tmp_path: Path, workspace: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "echo hello-from-shell"})])),
              Reply(text_events(ANSWER, chunks=12))]
    with tui(script, tmp_path, workspace) as (term, _server):
        term.send("look at parse", "Enter")
        screen = term.wait_for("ignores tabs")
        assert "hello-from-shell" in screen and "run_shell" in screen
        assert "**" not in screen and "# Findings" not in screen and "Findings" in screen
        screen = term.wait_for("idle ·")
        status = next(line for line in screen.splitlines() if "idle ·" in line)
        assert re.search(r"ctx \d+%.* · in \d+.* out \d+ · \$0\.\d{4}", status), status


def test_tui_esc_stops_a_slow_stream_and_the_next_prompt_is_answered(tmp_path: Path, workspace: Path) -> None:
    slow = Reply(text_events("tick " * 60, chunks=60), delay=0.5)
    with tui([slow, Reply(text_events("answer two"))], tmp_path, workspace) as (term, server):
        term.send("count", "Enter")
        term.wait_for("tick")
        term.send("Escape")
        term.wait_for("interrupted", timeout=1.5)
        term.wait_for("idle")
        term.send("again", "Enter")
        term.wait_for("answer two")
    assert len(server.requests) == 2


def test_tui_chinese_round_trip_and_resize(tmp_path: Path, workspace: Path) -> None:
    answer = "你好！" + "这是一段很长的中文回答，检查宽字符在窗口变化时不丢失。" * 4 + "\n\n结束"
    with tui([Reply(text_events(answer))], tmp_path, workspace) as (term, server):
        term.send("你好，世界", literal=True)
        term.send("Enter")
        term.wait_for("结束")
        term.resize(60, 15)
        screen = term.wait_for("结束")
        assert "idle" in screen
        term.resize(100, 30)
        screen = term.wait_for("你好，世界")
        assert "结束" in screen and "你好！这是一段很长的中文回答" in screen
    assert server.requests[0]["input"][-1]["content"] == "你好，世界"


def test_tui_approval_from_the_modal_and_exit_leaves_the_conversation(tmp_path: Path, workspace: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("kept it"))]
    with tui(script, tmp_path, workspace) as (term, server):
        term.send("reset", "Enter")
        term.wait_for("Approval needed")
        term.send("n")
        term.wait_for("kept it")
        term.send("/exit", "Enter")
        term.wait_for("[exited 0]")
        back = term.scrollback()
        assert "› reset" in back and "kept it" in back and "run_shell git reset --hard" in back
    assert "the user said no" in server.requests[1]["input"][-1]["output"]


def test_tui_first_run_asks_for_the_key_in_a_masked_field(tmp_path: Path, workspace: Path) -> None:
    app = _app_copy(tmp_path)
    with ScriptedServer([Reply(text_events("hello with key"))]) as server:
        env = _env(server.url, tmp_path, PYTHONPATH=str(app))
        del env["DEEPSEEK_API_KEY"]  # unset, so the saved key is the one that is used next
        env["DEEPSEEK_BASE_URL"] = server.url.replace("127.0.0.1", "localhost.localdomain.invalid")
        term = Terminal(_agent_command(workspace, agent=app / "agent.py"), env, width=80, height=24)
        try:
            term.wait_for("API key")
            term.send("sk-typed-key-123456", literal=True)
            screen = term.wait_for("*" * 19)
            assert "sk-typed-key" not in screen
            term.send("Enter")
            term.wait_for("idle")
        finally:
            term.close()
    assert (app / ".env").read_text() == "DEEPSEEK_API_KEY=sk-typed-key-123456\n"


CRASHING = """
import sys
sys.path.insert(0, {root!r})
import ui.tui.blocks as blocks
render = blocks.UserBlock.render
def broken(self, width):
    if "crash now" in self.text:
        raise RuntimeError("drawing failed on purpose")
    return render(self, width)
blocks.UserBlock.render = broken
import agent
sys.exit(agent.main())
"""


def test_tui_crash_restores_the_terminal_and_says_where_the_log_is(tmp_path: Path, workspace: Path) -> None:
    wrapper = tmp_path / "crashing_agent.py"
    wrapper.write_text(CRASHING.format(root=str(ROOT)))
    with ScriptedServer([Reply(text_events("never drawn"))]) as server:
        term = Terminal(_agent_command(workspace, agent=wrapper), _env(server.url, tmp_path), width=80, height=24)
        try:
            term.wait_for("idle")
            term.send("crash now", "Enter")
            screen = term.wait_for("[exited 1]")
            assert "the full-screen view crashed; the details are in" in screen and "--resume" in screen
            assert "Traceback" not in screen and "Press ENTER" not in screen
        finally:
            term.close()
    logs = list((tmp_path / "s").glob("*/crash-*.log"))
    assert logs and "drawing failed on purpose" in logs[0].read_text()
