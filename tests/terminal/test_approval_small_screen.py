"""The approval prompt in a small terminal: however long the command, the dangerous part is on screen
when the question is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sse_server import Reply, call_events, text_events
from tests.support.terminal import agent_terminal, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]


def test_forty_lines_around_an_rm_cannot_scroll_it_off_the_prompt(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "precious.txt").write_text("keep me")
    command = "\n".join(["echo tidying"] + [f"echo step {n}" for n in range(20)] + ["rm -rf ./*"]
                        + [f"echo step {n}" for n in range(20, 40)] + ["echo done 好"])
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("left it alone"))]
    with agent_terminal(script, tmp_path, workspace, "--plain", width=60, height=16) as (term, server):
        term.send("tidy up", "Enter")
        screen = term.wait_for("Allow it? [y/N]")
        rows = screen.splitlines()
        assert any("deletes ./* (the workspace itself)" in row for row in rows), screen  # why, first
        assert "rm -rf ./*" in screen and "echo tidying" in screen and "done 好" in screen, screen
        assert "… 20 more lines …" in screen and "⏎" in screen, screen
        gutter = [row for row in rows if row.startswith("  ┃ ")]
        assert 1 < len(gutter) <= 6 and all(len(row) <= 60 for row in gutter), screen
        term.send("n", "Enter")
        term.wait_for("left it alone")
    assert (workspace / "precious.txt").read_text() == "keep me"
    assert "the user said no" in server.requests[1]["input"][-1]["output"]
