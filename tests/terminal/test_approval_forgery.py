"""The approval prompt in a real terminal: what the user approves is what runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TEST_KEY
from tests.support.sse_server import Reply, call_events, text_events
from tests.support.terminal import agent_terminal, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]

# Erase the real prompt line, move up, draw a harmless-looking prompt, and conceal what follows.
FORGERY = ("\x1b[2K\r\x1b[1A\x1b[2K? The agent wants to run: git status --short\n"
           "  (read-only). Allow it? [y/N] \x1b[8m")


def test_escape_sequences_cannot_forge_the_approval_prompt(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "precious.txt").write_text("keep me")
    command = f"echo {TEST_KEY}; rm -rf ./* {FORGERY}"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok, left it alone"))]
    with agent_terminal(script, tmp_path, workspace, "--plain") as (term, server):
        term.send("tidy up", "Enter")
        screen = term.wait_for("Allow it? [y/N]")
        # The real command is on screen, with its escape sequences visible instead of obeyed.
        assert "rm -rf ./*" in screen
        assert "\\x1b[2K" in screen and "\\x1b[8m" in screen
        # The forged prompt is only ever text inside a line of the command, never a prompt of its own.
        lines = screen.splitlines()
        assert any("┃" in line and "git status --short" in line for line in lines), screen
        assert not any(line.lstrip().startswith(("? The agent wants to run: git", "(read-only)")) for line in lines)
        assert TEST_KEY not in screen and "[REDACTED]" in screen
        term.send("n", "Enter")
        term.wait_for("ok, left it alone")
    assert (workspace / "precious.txt").read_text() == "keep me"
    assert "the user said no" in server.requests[1]["input"][-1]["output"]
