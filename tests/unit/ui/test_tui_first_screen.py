"""The full-screen interface's first screen and its file diffs, without a terminal."""

from __future__ import annotations

import os
from pathlib import Path

from core import protocol as ev
from ui.tui.blocks import ToolBlock, ToolState
from ui.tui.render import plain
from ui.tui.state import View
from ui.tui.transcript import Transcript


def opened(workspace: str, model: str = "m", **fields: object) -> ev.SessionOpened:
    return ev.SessionOpened(id="s1", model=model, workspace=workspace, window=8192, budget_tokens=6000,
                            max_steps=10, **fields)


def screen(view: View, width: int = 80) -> list[str]:
    view.transcript.create_content(width, 20)
    return [line.rstrip() for line in view.transcript.visible_text()]


def test_a_new_session_shows_one_quiet_line_with_workspace_model_mode_and_help() -> None:
    view = View(Transcript(), on_approval=lambda request: None)
    workspace = Path.home() / "projects" / "shop"
    view.apply(opened(str(workspace), "deepseek-v4-flash"))
    assert screen(view) == [f"  deepseek-v4-flash · mode ask · /help for help · ~{os.sep}projects{os.sep}shop"]
    view.apply(opened("/srv/app", mode="auto"))
    assert screen(view) == ["  m · mode auto · /help for help · /srv/app"]
    view.apply(opened("/srv/" + "deep/" * 30))
    assert len(screen(view, 60)) == 1 and screen(view, 60)[0].endswith("…")  # one line, cut, never wrapped


def test_a_resumed_or_filled_session_has_no_welcome_line() -> None:
    view = View(Transcript(), on_approval=lambda request: None)
    view.apply(opened("/w", resumed=True, history=[{"kind": "user", "text": "hi"}]))
    assert not any("/help for help" in line for line in screen(view))


def diff_lines(name: str, arguments: dict) -> list[str]:
    block = ToolBlock(ToolState("c1", name, arguments, status="ok", result="done"))
    return [plain(line) for line in block._diff() or []]


def test_write_files_diff_shows_no_empty_line_for_the_final_newline() -> None:
    assert diff_lines("write_file", {"path": "a.py", "content": "x = 1\ny = 2\n"}) == ["+x = 1", "+y = 2"]
    assert diff_lines("write_file", {"path": "a.py", "content": "x = 1\n\n"}) == ["+x = 1", "+"]  # a real blank line
    assert diff_lines("write_file", {"path": "a.py", "content": "no newline"}) == ["+no newline"]


def test_edit_and_multi_edit_diffs() -> None:
    assert diff_lines("edit_file", {"path": "a.py", "old_text": "y = 2\n", "new_text": "y = 3\n"}) == \
        ["@@ -1 +1 @@", "-y = 2", "+y = 3"]
    edits = [{"old_text": "a", "new_text": "b"}, {"old_text": "c", "new_text": "d"}]
    assert diff_lines("multi_edit", {"path": "a.py", "edits": edits}) == \
        ["@@ -1 +1 @@", "-a", "+b", "@@ -1 +1 @@", "-c", "+d"]
