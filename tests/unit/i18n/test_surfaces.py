"""The engine's notices in the user's language: what shaping the context did, the output archive's
cap, the sandbox's reasons that carry a value, an MCP server's failure. In the Chinese interface
each holds no English word but names and the values it carries (an id, a platform, an exception's
own words); in English each is the sentence it always was, and what the model or `--json` reads as
data stays English whatever the language."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import i18n
from core import protocol as ev
from core.cancel import Cancel
from core.context import CompactionCancelled, ContextManager, Shaped
from core.i18n import N_, Deferred, _
from core.mcp.config import ServerConfig
from core.mcp.manager import FAILED, RESTARTING, ServerView, _describe, state_line
from core.prune.archive import OutputArchive
from core.sandbox import wintoken
from core.sandbox.probe import SandboxInfo, _landlock_enforces, _windows, probe
from core.tools.base import ToolContext
from core.tools.shell import run_shell
from core.tools.workspace import Workspace
from tests.conftest import make_settings
from tests.support.chinese_ui import english_words
from tests.support.context_journal import INSTRUCTIONS, SMALL, Journal, Scripted, shape_until_it_acts
from tests.support.events import Recorder
from ui.reports import answer_text


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    i18n.use("en")


def both(build: object) -> tuple[object, object]:
    """What `build()` gives in English, then in Chinese."""
    i18n.use("en")
    english = build()  # type: ignore[operator]
    i18n.use("zh")
    return english, build()  # type: ignore[operator]


# -- a message kept in English, shown translated ------------------------------------------------

def test_a_deferred_message_is_english_data_and_chinese_where_shown() -> None:
    i18n.use("zh")
    reason = Deferred(N_("no kernel sandbox on {platform} yet"), platform="freebsd14")
    joined = Deferred(N_("{earlier}; {later}"), earlier=reason, later=N_("turned off"))
    assert joined == "no kernel sandbox on freebsd14 yet; turned off"  # the text: English, in any language
    assert json.dumps({"reason": joined}) == '{"reason": "no kernel sandbox on freebsd14 yet; turned off"}'
    assert f"[{joined}]" == "[no kernel sandbox on freebsd14 yet; turned off]"
    assert _(reason) == "freebsd14 上还没有内核沙箱"
    assert _(joined) == "freebsd14 上还没有内核沙箱；turned off"  # a plain field is a value, never translated
    i18n.use("en")
    assert _(joined) == joined


# -- context shaping ----------------------------------------------------------------------------

def _rereads() -> list[str]:
    j = Journal()
    for _n in range(4):
        j.read("src/lib.rs", chars=8_000)
    j.shell("git status", chars=100)
    return ContextManager(SMALL).shape(j.items, INSTRUCTIONS).actions


def _acted(summarize: Scripted, times: int = 1, force: bool = False) -> list[str]:
    j, manager = Journal(), ContextManager(SMALL, summarize=summarize)
    shaped: Shaped | None = None
    for _n in range(times):
        shaped = shape_until_it_acts(j, manager, force=force)
    assert shaped is not None
    return shaped.actions


def _gave_up() -> list[str]:
    j, manager = Journal(), ContextManager(SMALL, summarize=Scripted(TimeoutError("model did not answer")))
    notices: list[str] = []
    for n in range(60):
        j.write(f"src/gen{n}.rs", 3_000)
        notices += manager.shape(j.items, INSTRUCTIONS).actions
    return notices


def _nothing_to_summarise_with() -> list[str]:
    j = Journal()
    for n in range(14):
        j.write(f"src/gen{n}.rs", 3_000)
    return ContextManager(SMALL).compact_now(j.items, INSTRUCTIONS).actions


CONTEXT = {  # what shaping did → (how the English begins, the Chinese it shows, the values' own words)
    "re-reads": (_rereads, "replaced 3 re-read file results with pointers (", "把 3 个重复读取的文件结果换成了指引（", set()),
    "failed summary": (lambda: _acted(Scripted(TimeoutError("model did not answer"))),
                       "compaction failed (1/3): model did not answer; kept the turns",
                       "压缩失败（1/3）：model did not answer；保留了这些轮次", {"model", "did", "not", "answer"}),
    "empty summary": (lambda: _acted(Scripted("", "", ""), times=2),
                      "compaction failed (2/3): the summary came back empty; kept the turns",
                      "压缩失败（2/3）：总结返回为空；保留了这些轮次", set()),
    "cancelled": (lambda: _acted(Scripted(CompactionCancelled("interrupted by the user"))),
                  "compaction cancelled; kept the turns", "压缩已取消；保留了这些轮次", set()),
    "summarised": (lambda: _acted(Scripted("Wrote the generated files.")), "dropped ", "，并已总结（", set()),
    "forced without a summary": (lambda: _acted(Scripted(ConnectionError("server down")), force=True),
                                 "dropped ", "个旧轮次（没有总结：压缩失败（1/3）：server down）", {"server", "down"}),
    "gave up": (_gave_up, "dropped ", "（没有总结：压缩失败 3 次后已放弃）", {"model", "did", "not", "answer"}),
    "no summariser": (_nothing_to_summarise_with, "nothing compacted: no summariser", "没有压缩任何内容：没有总结器",
                      set()),
}


@pytest.mark.parametrize("case", list(CONTEXT))
def test_context_notices_in_the_users_language(case: str) -> None:
    build, english_start, chinese_part, values = CONTEXT[case]
    english, chinese = both(build)
    assert any(a.startswith(english_start) for a in english), english  # type: ignore[union-attr]
    assert any(chinese_part in a for a in chinese), chinese  # type: ignore[union-attr]
    assert english_words("\n".join(chinese), values) == [], chinese  # type: ignore[arg-type]


# -- the output archive -------------------------------------------------------------------------

def _archive(tmp_path: Path, cap: int, earlier: int = 0) -> OutputArchive:
    folder = tmp_path / "outputs"
    folder.mkdir(exist_ok=True)
    for old in (folder / "out-1.log", folder / "out-2.log")[:1 if earlier else 0]:
        old.write_bytes(b"x\n" * (earlier // 2))
    return OutputArchive(folder, max_total_bytes=cap)


@pytest.mark.parametrize(("cap", "earlier", "size", "english", "chinese"), [
    (4096, 3000, 3000, "dropped out-1 (3 KB) to stay under the 4 KB archive cap",
     "删除了 out-1（3 KB），以保持在 4 KB 的输出存档上限之内"),
    (1024, 0, 5000, "out-1 reached the 1 KB archive cap; the rest of its output is not kept",
     "out-1 达到了 1 KB 的输出存档上限；其余的输出不再保存"),
    (4096, 3000, 9000, "dropped out-1 (3 KB) to stay under the 4 KB archive cap; out-2 reached the 4 KB archive cap; "
     "the rest of its output is not kept", "删除了 out-1（3 KB），以保持在 4 KB 的输出存档上限之内；out-2 达到了 4 KB 的"
     "输出存档上限；其余的输出不再保存"),
], ids=["older dropped", "cap reached", "both"])
def test_archive_cap_notices_in_the_users_language(tmp_path: Path, cap: int, earlier: int, size: int,
                                                  english: str, chinese: str) -> None:
    archive = _archive(tmp_path, cap, earlier)
    notice = archive.write(archive.new_id(), b"y" * size)
    i18n.use("zh")
    assert notice == english  # what the model and the archive's own errors read
    assert _(notice) == chinese  # type: ignore[arg-type]
    assert english_words(_(notice), {"out"}) == []  # type: ignore[arg-type]


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell command")
@pytest.mark.parametrize("language", ["en", "zh"])
def test_run_shell_tells_the_person_in_their_language_and_the_model_in_english(tmp_path: Path,
                                                                              language: str) -> None:
    i18n.use(language)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    events = Recorder()
    settings = make_settings("http://127.0.0.1:1", AGENT_SANDBOX="off")
    ctx = ToolContext(workspace=Workspace(workspace), settings=settings, emit=events,
                      approve=lambda what, why: None, cancel=Cancel(), call_id="c1", mode="yes",
                      archive=_archive(tmp_path, 4096, 3000))
    result = run_shell({"command": "head -c 3000 /dev/zero | tr '\\0' y"}, ctx)
    english = "dropped out-1 (3 KB) to stay under the 4 KB archive cap"
    assert f"[output archive: {english}]" in result.output  # the model's note: English in every language
    (notice,) = [e.message for e in events.of(ev.Notice)]
    assert notice == (f"output archive: {english}" if language == "en"
                      else "输出存档：删除了 out-1（3 KB），以保持在 4 KB 的输出存档上限之内")


# -- the sandbox's reasons with values ----------------------------------------------------------

def _another_platform(monkeypatch: pytest.MonkeyPatch) -> SandboxInfo:
    with monkeypatch.context() as patched:
        patched.setattr(sys, "platform", "freebsd14")
        return probe.__wrapped__("auto", "on")


def _unproven_wintoken(monkeypatch: pytest.MonkeyPatch) -> SandboxInfo:
    def refuse(path: Path, sddl: str) -> None:
        raise OSError(5, "Access is denied")

    monkeypatch.setattr(wintoken, "label", refuse)
    return SandboxInfo("none", reason=wintoken._try_label({Path("inside"): wintoken.LOW_LABEL}))


SANDBOX = {  # → (the English, the Chinese, the values' own words)
    "another platform": (_another_platform, "no kernel sandbox on freebsd14 yet", "无（freebsd14 上还没有内核沙箱）",
                         {"freebsd"}),
    "a Linux backend on Windows": (lambda mp: _windows("bwrap", "on"),
                                   "bwrap is Linux's; the Windows sandbox (a low-integrity token) is unproven; "
                                   "AGENT_SANDBOX=wintoken tries it",
                                   "无（bwrap 仅适用于 Linux；Windows 沙箱（低完整性令牌）尚未验证；设置 "
                                   "AGENT_SANDBOX=wintoken 可以试用）", {"bwrap", "Linux", "Windows", "wintoken"}),
    "an old Landlock": (lambda mp: SandboxInfo("landlock", 3, _landlock_enforces(3, "off")),
                        "network NOT blocked (needs Landlock ABI 4, this kernel has 3)",
                        "网络未被阻止（需要 Landlock ABI 4，此内核为 3）",
                        {"landlock", "Landlock", "ABI", "Unix", "seccomp", "inode", "git", "proc"}),
    "a folder Windows will not label": (_unproven_wintoken,
                                        "folders cannot be labelled for low integrity here: Access is denied",
                                        "无（此处无法把文件夹标记为低完整性：Access is denied）",
                                        {"Access", "is", "denied"}),
}


@pytest.mark.parametrize("case", list(SANDBOX))
def test_sandbox_reasons_with_values_in_the_users_language(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    build, english, chinese, values = SANDBOX[case]
    info = build(monkeypatch)
    i18n.use("en")
    assert english in info.describe()
    i18n.use("zh")
    report = answer_text(ev.ModeChanged("1", "ask", False, ["ask", "yes"], info.describe()))
    assert chinese in report, report
    assert english_words(report, values) == [], report
    assert english in json.dumps({"sandbox": [info.reason, *info.enforces]})  # --json's data: English


# -- MCP ----------------------------------------------------------------------------------------

STDIO = ServerConfig("missing", "mcp.json", command="no_such_mcp_server")
HTTP = ServerConfig("docs", "mcp.json", url="https://mcp.example/mcp")
ConnectError = type("ConnectError", (Exception,), {})
MCPError = type("MCPError", (Exception,), {})


def _group(*inner: Exception) -> Exception:
    """An exception group as anyio raises it (ExceptionGroup, or its backport before Python 3.11)."""
    group = Exception("unhandled errors in a TaskGroup")
    group.exceptions = inner  # type: ignore[attr-defined]
    return group


MCP = {  # a failure → (the English, the Chinese, the values' own words)
    "no such program": (lambda: _describe(FileNotFoundError(2, "No such file"), STDIO),
                        "failed: cannot run 'no_such_mcp_server': no such program (is it installed and on PATH?)",
                        "失败：无法运行 'no_such_mcp_server'：没有这个程序（是否已安装并在 PATH 中？）", set()),
    "cannot connect": (lambda: _describe(ConnectError("All connection attempts failed"), HTTP),
                       "failed: cannot connect to https://mcp.example/mcp: All connection attempts failed",
                       "失败：无法连接到 https://mcp.example/mcp：All connection attempts failed",
                       {"All", "connection", "attempts", "failed", "https"}),
    "protocol error": (lambda: _describe(MCPError("Method not found"), STDIO),
                       "failed: protocol error: Method not found", "失败：协议错误：Method not found",
                       {"Method", "not", "found"}),
    "in a group": (lambda: _describe(_group(PermissionError(13, "Permission denied")), STDIO),
                   "failed: cannot start it: Permission denied", "失败：无法启动它：Permission denied",
                   {"Permission", "denied"}),
    "closed at start": (lambda: _describe(type("EndOfStream", (Exception,), {})(), STDIO),
                        "failed: it closed the connection (crashed at start?)", "失败：它关闭了连接（启动时崩溃了？）", set()),
}


@pytest.mark.parametrize("case", list(MCP))
def test_an_mcp_failure_in_the_users_language_with_the_servers_words_kept(case: str) -> None:
    build, english, chinese, values = MCP[case]
    reason = build()  # type: ignore[operator]
    view = ServerView("missing", FAILED, reason, "stdio", "mcp.json", [], False)
    english_line, chinese_line = both(lambda: state_line(view))
    assert english_line == english
    assert chinese_line == chinese
    assert english_words(chinese_line, values) == [], chinese_line  # type: ignore[arg-type]
    assert reason == english.removeprefix("failed: ")  # what a tool call's error tells the model


def test_a_restarting_server_in_the_users_language() -> None:
    view = ServerView("dict", RESTARTING, N_("it stopped unexpectedly; restarting it"), "stdio", "mcp.json", [],
                      False)
    assert both(lambda: state_line(view)) == ("restarting: it stopped unexpectedly; restarting it",
                                              "正在重启：它意外停止了；正在重启")
