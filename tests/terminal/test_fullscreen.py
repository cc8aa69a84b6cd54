"""The full-screen TUI in a real terminal at 80x24: Markdown, tool panels, the status bar, Esc,
Chinese and resizes, the approval modal, and a crash that gives the terminal back."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.agent_process import AGENT
from tests.support.paths import ROOT
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.support.terminal import Terminal, agent_terminal, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]


@contextmanager
def fullscreen(script: list[Reply], tmp_path: Path, workspace: Path,
               agent: Path = AGENT) -> Iterator[tuple[Terminal, ScriptedServer]]:
    """The full-screen agent at 80x24 against a scripted server, ready for input."""
    with agent_terminal(script, tmp_path, workspace, ready="idle", agent=agent, width=80, height=24) as running:
        yield running


ANSWER = "# Findings\n\nThe **main** issue is in `parse()`:\n\n- it drops the last line\n- it ignores tabs\n"


def test_tui_streams_markdown_shows_a_tool_panel_and_the_status_bar(tmp_path: Path, workspace: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "echo hello-from-shell"})])),
              Reply(text_events(ANSWER, chunks=12))]
    with fullscreen(script, tmp_path, workspace) as (term, _server):
        term.send("look at parse", "Enter")
        screen = term.wait_for("ignores tabs")
        assert "hello-from-shell" in screen and "run_shell" in screen
        assert "**" not in screen and "# Findings" not in screen and "Findings" in screen
        screen = term.wait_for("idle ·")
        status = next(line for line in screen.splitlines() if "idle ·" in line)
        assert re.search(r"ctx \d+%.* · in \d+.* out \d+ · \$0\.\d{4}", status), status


def test_tui_esc_stops_a_slow_stream_and_the_next_prompt_is_answered(tmp_path: Path, workspace: Path) -> None:
    slow = Reply(text_events("tick " * 60, chunks=60), delay=0.5)
    with fullscreen([slow, Reply(text_events("answer two"))], tmp_path, workspace) as (term, server):
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
    with fullscreen([Reply(text_events(answer))], tmp_path, workspace) as (term, server):
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
    with fullscreen(script, tmp_path, workspace) as (term, server):
        term.send("reset", "Enter")
        term.wait_for("Approval needed")
        term.send("n")
        term.wait_for("kept it")
        term.send("/exit", "Enter")
        term.wait_for("[exited 0]")
        back = term.scrollback()
        assert "› reset" in back and "kept it" in back and "run_shell git reset --hard" in back
    assert "the user said no" in server.requests[1]["input"][-1]["output"]


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
    with fullscreen([Reply(text_events("never drawn"))], tmp_path, workspace, agent=wrapper) as (term, _server):
        term.send("crash now", "Enter")
        screen = term.wait_for("[exited 1]")
        assert "the full-screen view crashed; the details are in" in screen and "--resume" in screen
        assert "Traceback" not in screen and "Press ENTER" not in screen
    logs = list((tmp_path / "s").glob("*/crash-*.log"))
    assert logs and "drawing failed on purpose" in logs[0].read_text()
