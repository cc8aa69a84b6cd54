"""The words the front ends give the runtime's typed answers (ui/reports.py): the plain REPL prints
them, the TUI shows them (with a gauge for /context)."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from core import protocol as ev
from core.runtime.slash import Usage
from ui.reports import answer_text, sessions_text

ROW = ev.SessionRow(id="20261205-101010-abcd", created="2026-12-05T10:10:10", size=2048, checkpoints_size=512,
                    first_prompt="修复 the failing test " + "y" * 80)
SERVER = ev.McpServerRow(name="files", state="ready", reason="", summary="ready, 2 tools", transport="stdio",
                         source="mcp.json", from_workspace=False,
                         tools=[ev.McpToolRow("read", "files__read", True, "reads"),
                                ev.McpToolRow("write", "", False, "writes")])
ANSWERS: list[tuple[ev.CommandAnswer | Usage, list[str]]] = [
    (ev.ModeChanged("1", "ask", False, ["ask", "yes"], "landlock"),
     ["Mode: ask (read-only commands", "Sandbox: landlock.", "Switch with /mode ask|yes."]),
    (ev.ModeChanged("1", "yes", True, ["ask", "yes"], "none"), ["Mode: yes (every question", "from the next command on."]),
    (ev.ModelChanged("1", "m-1", False), ["Model: m-1 (switch with /model NAME)"]),
    (ev.ModelChanged("1", "m-2", True), ["Model: m-2 from the next request on"]),
    (ev.ContextReport("1", 2500, 10000, 64000, {"instructions": 2000, "tools": 500}, 1200, 300, 0.5, 0.0012, 2, 400),
     ["about 2,500 of 10,000 tokens (25% of the budget; window 64,000)", "instructions", "2,000",
      "2 from MCP servers, about 400 tokens", "1,200 input tokens (50% from cache), 300 output, $0.0012"]),
    (ev.SessionsListed("1", "/s", [ROW], 3, "now"),
     ["Sessions in /s (newest first):", "2026-12-05 10:10:10", "2.0 KB", "(checkpoints 512 B)", "修复 the failing",
      "y…", "… and 3 older", "(current: now)"]),
    (ev.SessionsListed("1", "/s", [], 0, ""), ["No sessions yet (they are kept in /s)."]),
    (ev.SessionSwitched("1", "new", "old", False, 0, []),
     ["New conversation (session new); the last one is kept: /resume old"]),
    (ev.SessionSwitched("1", "old", "new", True, 4, ["说明 cut"]), ["Resumed session old (4 items).\n! 说明 cut"]),
    (ev.Compacted("1", "Nothing to compact yet."), ["Nothing to compact yet."]),
    (ev.DiffShown("1", False, "", False), ["No checkpoints in this session."]),
    (ev.DiffShown("1", True, "", True), ["changed no files in this session in its last turn."]),
    (ev.DiffShown("1", False, "--- a/x\n+++ b/x\n", True), ["--- a/x\n+++ b/x\n"]),
    (ev.UndoFinished("1", "no_checkpoints"), ["No checkpoints in this session."]),
    (ev.UndoFinished("1", "nothing", elsewhere=["/w"]), ["Nothing to undo", "changed files in /w: resume"]),
    (ev.UndoFinished("1", "cancelled", ["写"], reason="no"), ["Undo cancelled (no); nothing was changed."]),
    (ev.UndoFinished("1", "conflict_refused", ["a"], reason="no", conflicts=["x.txt"]),
     ["Nothing was changed: x.txt changed outside", "not confirmed (no)."]),
    (ev.UndoFinished("1", "nothing_to_restore", ["写", "b"]), ["Nothing to restore for “写”; “b”: the files are"]),
    (ev.UndoFinished("1", "cannot_restore", ["a"], not_restored=[ev.PathWhy("x", "gone")]),
     ["Nothing can be restored for “a”:\n  cannot restore x: gone"]),
    (ev.UndoFinished("1", "restored", ["a"], restored=["a.txt", "名.txt"], not_restored=[ev.PathWhy("b", "gone")]),
     ["Restored 2 file(s) to their state before the undone turn(s): a.txt, 名.txt. Not restored: b (gone)."]),
    (ev.UndoFinished("1", "restored", ["a"], restored=["a.txt"]), ["undone turn(s): a.txt."]),
    (ev.McpReport("1", [SERVER]), ["files (stdio): ready, 2 tools", "files__read", "read-only", "write", "asks"]),
    (ev.McpReport("1", []), ["No MCP servers are configured."]),
    (ev.McpChanged("1", "restart", "files", "Restarting files."), ["Restarting files."]),
    (ev.CommandFailed("1", "/resume", "not_found", "no session matches 'x'"), ["Cannot resume: no session matches"]),
    (ev.CommandFailed("1", "/clear", "failed", "disk full"), ["Cannot start a new session: disk full"]),
    (ev.CommandFailed("1", "/mode", "unavailable", "no sandbox"), ["no sandbox"]),
    (Usage("/x", "Unknown command /x"), ["Unknown command /x"]),
]


@pytest.mark.parametrize(("answer", "words"), ANSWERS, ids=lambda a: getattr(a, "type", "") or None)
def test_every_answer_has_its_words(answer: ev.CommandAnswer | Usage, words: list[str]) -> None:
    text = answer_text(answer)
    assert [w for w in words if w not in text] == []


def test_every_kind_of_answer_is_worded() -> None:
    assert {type(a) for a, _ in ANSWERS} >= set(typing.get_args(ev.CommandAnswer))


def test_the_sessions_listing_outside_a_session_names_no_current_one() -> None:
    text = sessions_text(ev.SessionsListed("", "/s", [ROW], 0, ""))
    assert "current" not in text and text.endswith("Resume one with --resume ID (or --resume for the latest).")


@pytest.mark.parametrize("words", ["Mode: ", "Model: ", "Sessions in ", "Resumed session", "New conversation",
                                   "No checkpoints in this session", '["MCP servers:"]', "Undo cancelled",
                                   "Nothing to undo", "/mcp restart NAME restarts"])
def test_the_core_words_no_slash_command_answer(words: str) -> None:
    core = Path(__file__).resolve().parents[3] / "core"
    assert [p.relative_to(core).as_posix() for p in core.rglob("*.py") if words in p.read_text(encoding="utf-8")] == []
