"""The Chinese interface's own words: /help (both front ends, the keys included), the reports of
/context, /mcp, /sessions, /diff, /undo, /mode, /model, and the status bar, welcome line and
approval dialog texts hold no English word but names (commands, flags, keys, paths, models, tools).
Texts that come from elsewhere (a server's summary, the core's detail) are given in Chinese here."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from core import i18n
from core import protocol as ev
from core.runtime.slash import help_lines, parse
from tests.support.chinese_ui import english_words
from ui.cells import cell_width, cut_cells, pad
from ui.language import COMMAND as LANG_COMMAND
from ui.reports import answer_text
from ui.tui.app import KEYS, TUI_COMMANDS
from ui.tui.blocks import ToolBlock, ToolState
from ui.tui.state import Status, welcome
from ui.tui.status import status_fragments

ROW = ev.SessionRow(id="20261205-101010-abcd", created="2026-12-05T10:10:10", size=2048, checkpoints_size=512,
                    first_prompt="修复失败的测试" * 20)
SERVER = ev.McpServerRow(name="files", state="ready", reason="", summary="就绪，2 个工具", transport="stdio",
                         source="mcp.json", from_workspace=False,
                         tools=[ev.McpToolRow("read", "files__read", True, "读"), ev.McpToolRow("write", "", False, "写")])
ANSWERS: list[ev.CommandAnswer] = [
    ev.ModeChanged("1", "ask", False, ["ask", "yes"], "landlock"),
    ev.ModeChanged("1", "yes", True, ["ask", "yes"], "none"),
    ev.ModelChanged("1", "deepseek-v4-flash", False), ev.ModelChanged("1", "deepseek-v4-pro", True),
    ev.ContextReport("1", 2500, 10000, 64000, {"instructions": 2000, "tools": 500, "user messages": 30,
                                               "tool results: read_file": 70}, 1200, 300, 0.5, 0.0012, 2, 400),
    ev.SessionsListed("1", "/s", [ROW], 3, "now"), ev.SessionsListed("1", "/s", [], 0, ""),
    ev.SessionSwitched("1", "new", "old", False, 0, []),
    ev.DiffShown("1", False, "", False), ev.DiffShown("1", True, "", True),
    ev.UndoFinished("1", "nothing", elsewhere=["/w"]),
    ev.UndoFinished("1", "cannot_restore", ["改"], not_restored=[ev.PathWhy("x.txt", "已删除")]),
    ev.UndoFinished("1", "restored", ["改"], restored=["a.txt"], not_restored=[ev.PathWhy("b.txt", "已删除")]),
    ev.McpReport("1", [SERVER]), ev.McpReport("1", []),
    ev.CommandFailed("1", "/resume", "not_found", "没有匹配的会话"),
]


@pytest.fixture(autouse=True)
def chinese() -> Iterator[None]:
    i18n.use("zh")
    yield
    i18n.use("en")


def test_help_in_both_front_ends_is_chinese_but_for_names() -> None:
    tui = "\n".join(help_lines(TUI_COMMANDS)) + "\n" + i18n._(KEYS)
    plain = "\n".join(help_lines(LANG_COMMAND))
    assert tui.startswith("命令：") and "按键：" in tui and "/lang" in tui and "/lang" in plain
    assert english_words(tui) == [] and english_words(plain) == []
    i18n.use("en")  # the check sees English: it is not vacuous
    assert "show" in english_words("\n".join(help_lines(TUI_COMMANDS)))


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda a: a.type)
def test_reports_are_chinese_but_for_names(answer: ev.CommandAnswer) -> None:
    text = answer_text(answer)
    assert english_words(text, {"read_file", "files", "stdio", "write", "read", "now", "new", "old", "landlock",
                                "none", "abcd"}) == [], text


@pytest.mark.parametrize("line", ["/frobnicate", "/mode sometimes", "/undo two", "/undo 0", "/diff everything",
                                  "/mcp restart", "/mcp stop x", "/context now", "/lang"])
def test_usage_errors_are_chinese(line: str) -> None:
    parsed = parse(line, local=tuple(LANG_COMMAND))
    text = answer_text(parsed) if not hasattr(parsed, "arg") else ""
    assert english_words(text, {"frobnicate", "sometimes", "two", "everything", "stop", "x", "now"}) == [], text


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_the_status_bar_fits_its_width_in_cells_and_is_chinese(width: int) -> None:
    status = Status(model="deepseek-v4-flash", state="running", since=time.monotonic(), detail="测试" * 30,
                    budget=100_000, context=5_000, input_tokens=12_345, cached_tokens=10_000, output_tokens=678,
                    cost=0.0123, pruned_saved=4_000, queued=2, busy=True, mode="auto", sandbox="landlock")
    (_style, text), = status_fragments(status, width)
    assert cell_width(text) == width and "运行" in text
    assert english_words(text, {"landlock"}) == [], text


def test_the_welcome_line_is_chinese() -> None:
    opened = ev.SessionOpened(id="s", model="deepseek-v4-flash", workspace="/工作/项目", window=64_000,
                              budget_tokens=50_000, max_steps=50, mode="auto")
    assert welcome(opened) == "deepseek-v4-flash · 模式 auto · /help 查看帮助 · /工作/项目"


@pytest.mark.parametrize(("status", "word"), [("refused", "已拒绝"), ("ok", "成功"), ("error", "出错")])
def test_a_tool_s_line_in_the_exit_transcript_and_copy_is_chinese(status: str, word: str) -> None:
    """What the TUI prints to the scrollback at exit (and /copy exports) says the outcome in the
    user's language; the command stays as the model wrote it."""
    line = ToolBlock(ToolState("c1", "run_shell", {"command": "rm -rf ../x"}, status=status)).markdown()
    assert line == f"`run_shell rm -rf ../x` → {word}", line
    assert not english_words(line.replace("run_shell rm -rf ../x", ""))


@pytest.mark.parametrize(("text", "cells", "cut"), [
    ("中文字符串", 6, "中文…"), ("中文字符串", 10, "中文字符串"), ("ab中文", 4, "ab…"), ("ab中文", 5, "ab中…"),
    ("e\u0301te", 3, "e\u0301te"), ("abc", 2, "a…"),
])
def test_cutting_measures_cells_and_never_splits_a_character(text: str, cells: int, cut: str) -> None:
    assert cut_cells(text, cells) == cut and cell_width(cut) <= cells
    assert cell_width(pad("中文", 6)) == 6 and pad("中文", 6) == "中文  "
