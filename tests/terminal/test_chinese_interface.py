"""The Chinese interface in a real terminal, chosen by the locale alone (LANG=zh_CN.UTF-8), at 80x24
and 120x40: the welcome line, the status bar, /help, an approval dialog and a sandbox refusal are in
Chinese, every line fits the terminal measured in cells, and the dialog's frame is aligned. The
plain REPL too."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.sandbox import probe
from tests.support.chinese_ui import CHINESE_LOCALE, border_columns, english_words, too_wide
from tests.support.paths import SNAPSHOTS
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.support.terminal import Terminal, agent_terminal, needs_tmux

pytestmark = [pytest.mark.terminal, needs_tmux]
SIZES = [(80, 24), (120, 40)]


@contextmanager
def chinese(script: list[Reply], tmp_path: Path, workspace: Path, width: int, height: int,
            *flags: str, ready: str = "空闲") -> Iterator[tuple[Terminal, ScriptedServer]]:
    with agent_terminal(script, tmp_path, workspace, *flags, ready=ready, width=width, height=height,
                        env=CHINESE_LOCALE) as running:
        yield running


def snapshot(name: str, text: str) -> None:
    """Compare with tests/snapshots/NAME.txt (UPDATE_SNAPSHOTS=1, or a missing file, writes it)."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == path.read_text(encoding="utf-8"), f"the dialog differs from {path}:\n{text}"


def rows(term: Terminal) -> list[str]:
    """The screen's rows as drawn (not joined where they wrap)."""
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", term.name], capture_output=True, text=True,
                          check=False).stdout.splitlines()


def open_dialog(term: Terminal, width: int, shows: str) -> tuple[list[str], str]:
    """Once `shows` is on screen: the screen's rows and the dialog's text (its frame included),
    checked to fit the terminal in cells with its frame aligned."""
    term.wait_for(shows)
    screen = rows(term)
    top = next(i for i, line in enumerate(screen) if "┌" in line)
    bottom = next(i for i, line in enumerate(screen) if "└" in line and i > top)
    dialog = screen[top:bottom + 1]
    assert len(border_columns(dialog)) == 1, "\n".join(dialog)
    assert too_wide(screen, width) == []
    return screen, "\n".join(dialog)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_welcome_status_and_help_in_chinese(tmp_path: Path, workspace: Path, width: int, height: int) -> None:
    with chinese([], tmp_path, workspace, width, height) as (term, _server):
        screen = rows(term)
        welcome = next(line for line in screen if "/help 查看帮助" in line)
        assert "· 模式 " in welcome and "mode" not in welcome
        status = next(line for line in screen if "空闲" in line)
        assert "上下文 0%" in status and "idle" not in status and "ctx" not in status
        assert ("模式 auto" in status) == (width >= 100)  # a narrow bar keeps the short forms
        assert too_wide(screen, width) == []
        term.send("/help", "Enter")
        term.wait_for("按键：")
        screen = rows(term)
        assert too_wide(screen, width) == []
        shown = "\n".join(screen)
        assert "补全工作区路径" in shown and "/lang" in shown
        # What the help drew, from its first line on (the top of a long list scrolls off at 80x24).
        start = next((i for i, line in enumerate(screen) if "命令：" in line or "/help" in line.split()[:1]), 0)
        help_rows = [line for line in screen[start:] if "空闲" not in line and not line.startswith("›")]
        assert english_words("\n".join(help_rows)) == []
        term.send("/lang en", "Enter")  # the words switch at once, the status bar's too
        term.wait_for("Interface language: English")
        assert any(line.startswith(" deepseek-v4-flash · idle") for line in rows(term))


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_an_approval_dialog_in_chinese_is_aligned(tmp_path: Path, workspace: Path, width: int, height: int) -> None:
    script = [Reply(call_events([("run_shell", {"command": "touch 新文件.txt"})])), Reply(text_events("好的"))]
    with chinese(script, tmp_path, workspace, width, height, "--mode", "ask") as (term, _server):
        term.send("建一个文件", "Enter")
        screen, text = open_dialog(term, width, "需要审批")
        assert "无法确认它只读取" in text and "run_shell 想要运行：" in text and "touch 新文件.txt" in text
        assert "运行一次 (y)" in text and "本会话中一律允许 (a)" in text and "拒绝 (n, Esc)" in text
        assert "在此工作区中一律允许：touch" in text
        snapshot(f"approval_zh_{width}x{height}", text.replace(str(workspace), "<ws>".ljust(len(str(workspace)))))
        assert english_words(text, {"run_shell", "touch", "txt", "y", "a", "n", "w"}) == [], text
        status = next(line for line in screen if "等待你的审批" in line)
        assert "waiting" not in status
        term.send("3")
        term.wait_for("已拒绝")


needs_sandbox = pytest.mark.skipif(not sys.platform.startswith("linux") or not probe("auto").active,
                                   reason="needs the Linux kernel sandbox")


@needs_sandbox
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_sandbox_refusal_in_chinese(tmp_path: Path, workspace: Path, width: int, height: int) -> None:
    outside = tmp_path / "外面"
    outside.mkdir()
    command = f"echo gone >&{outside}/f.txt"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("明白"))]
    with chinese(script, tmp_path, workspace, width, height, "--mode", "auto") as (term, _server):
        term.send("写到外面", "Enter")
        _screen, text = open_dialog(term, width, "沙箱阻止了")
        joined = "".join(line.strip().strip("│").strip() for line in text.split("\n"))  # the reason wraps
        assert "需要审批" in text and "沙箱阻止了访问" in text and "在沙箱外，它以你的全部权限运行" in joined, text
        reason = text.split("\n")[1:next(i for i, line in enumerate(text.split("\n")) if "想要运行" in line)]
        assert len(reason) > 1 and all(line.split("│", 1)[1].startswith(" ") for line in reason), text  # indented
        assert "运行一次 (y)" in text and "拒绝 (n, Esc)" in text
        term.send("3")
        term.wait_for("明白")
        screen = rows(term)
        shown = "\n".join(screen)
        assert "│ 已拒绝" in shown and "│ [被沙箱阻止：访问" in shown and "✗ 出错" in shown, shown
        assert too_wide(screen, width) == []
        assert not (outside / "f.txt").exists()


def test_the_plain_repl_in_chinese(tmp_path: Path, workspace: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "touch 新文件.txt"})])), Reply(text_events("你好"))]
    with chinese(script, tmp_path, workspace, 100, 30, "--plain", "--mode", "ask", ready="输入任务") as (term, _server):
        term.send("建一个文件", "Enter")
        asked = term.wait_for("允许吗？[y/N]")
        assert "? 需要审批：无法确认它只读取" in asked and "┃ 运行：touch 新文件.txt" in asked, asked
        assert "1 运行一次 (y) · 2 本会话中一律允许 (a) · 3 拒绝 (n)" in asked, asked
        term.send("n", "Enter")
        done = term.wait_for("你好")
        assert "✗ 已拒绝" in done and "用户拒绝了" in done, done
        term.send("/help", "Enter")
        screen = term.wait_for("/lang")
        listed = screen[screen.index("命令："):]
        listed = listed[:listed.rindex("/lang")] + listed[listed.rindex("/lang"):].split("\n", 1)[0]
        assert "显示此列表" in listed and english_words(listed) == [], listed
        term.send("/mode nope", "Enter")
        assert "未知模式 'nope'" in term.wait_for("未知模式")
        term.send("/lang en", "Enter")
        term.wait_for("Interface language: English")
        term.send("/help", "Enter")
        assert "show this list" in term.wait_for("show this list")
