"""/diff and /undo in the plain REPL in a real terminal (tmux): the question, the answers, the files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sse_server import Reply, call_events, text_events
from tests.support.terminal import agent_terminal, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]


def test_undo_asks_once_and_again_before_overwriting_the_users_own_edit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_bytes(b"# Notes\r\nkeep this\r\n")
    script = [Reply(call_events([("edit_file", {"path": "notes.md", "old_text": "keep this", "new_text": "agent"}),
                                 ("write_file", {"path": "todo.txt", "content": "1. undo me\n"})])),
              Reply(text_events("Edited."))]
    with agent_terminal(script, tmp_path, ws, "--plain") as (term, _server):
        term.send("edit the notes", "Enter")
        term.wait_for("Edited.")
        term.send("/diff", "Enter")
        screen = term.wait_for("+1. undo me")
        assert "-keep this\\r" in screen and "+agent\\r" in screen
        (ws / "notes.md").write_bytes(b"# Notes\r\nmy own edit\r\n")  # behind the agent's back
        term.send("/undo", "Enter")
        screen = term.wait_for("Allow it? [y/N]")
        assert "undo “edit the notes”" in screen and "delete todo.txt" in screen
        assert "restore notes.md (changed outside the agent since)" in screen
        term.send("y", "Enter")
        term.wait_for("overwrite notes.md")
        term.send("n", "Enter")
        term.wait_for("Nothing was changed: notes.md changed outside the agent")
        assert (ws / "notes.md").read_bytes() == b"# Notes\r\nmy own edit\r\n" and (ws / "todo.txt").exists()
        term.send("/undo", "Enter")
        term.wait_for("Allow it? [y/N]")
        term.send("y", "Enter")
        term.wait_for("overwrite notes.md")
        term.send("y", "Enter")
        term.wait_for("Restored 2 file(s)")
        assert (ws / "notes.md").read_bytes() == b"# Notes\r\nkeep this\r\n" and not (ws / "todo.txt").exists()
