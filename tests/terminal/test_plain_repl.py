"""The plain REPL (--plain) in a real terminal: Chinese in and out, Ctrl-C, and the approval question."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sse_server import Reply, call_events, text_events
from tests.support.terminal import agent_terminal, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]


def test_plain_repl_answers_chinese_and_exits_on_double_ctrl_c(tmp_path: Path, workspace: Path) -> None:
    script = [Reply(text_events("你好！我能帮你什么？", reasoning="用户打招呼")), Reply(text_events("second"))]
    with agent_terminal(script, tmp_path, workspace, "--plain") as (term, server):
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


def test_ctrl_c_interrupts_a_running_turn_and_the_session_goes_on(tmp_path: Path, workspace: Path) -> None:
    slow = Reply(text_events("tick tock tick tock", chunks=4), delay=2.0)
    with agent_terminal([slow, Reply(text_events("still here"))], tmp_path, workspace, "--plain") as (term, _server):
        term.send("count", "Enter")
        term.wait_for("tick")
        term.send("C-c")
        term.wait_for("interrupted")
        term.send("again", "Enter")
        term.wait_for("still here")
        assert "[exited" not in term.screen()


def test_destructive_command_asks_and_no_refuses(tmp_path: Path, workspace: Path) -> None:
    (workspace / "keep.txt").write_text("precious")
    script = [Reply(call_events([("run_shell", {"command": "rm -rf ."})])), Reply(text_events("ok, not deleting"))]
    with agent_terminal(script, tmp_path, workspace, "--plain") as (term, server):
        term.send("clean everything", "Enter")
        term.wait_for("Allow it? [y/N]")
        term.send("n", "Enter")
        term.wait_for("ok, not deleting")
    assert (workspace / "keep.txt").read_text() == "precious"
    assert "the user said no" in server.requests[1]["input"][-1]["output"]


def test_plain_approval_offers_the_same_four_decisions(tmp_path: Path, workspace: Path) -> None:
    risky = Reply(call_events([("run_shell", {"command": "git reset --hard"})]))
    script = [risky, Reply(text_events("first")), risky, Reply(text_events("second")),
              Reply(call_events([("run_shell", {"command": "git clean -f"})])), Reply(text_events("third"))]
    with agent_terminal(script, tmp_path, workspace, "--plain") as (term, server):
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
    assert "not on my machine" in server.requests[5]["input"][-1]["output"]
