"""The gate's reasons in the Chinese interface: the approval question a person answers for a risky
command (built by run_shell from the gate's judgement, shown by the plain front end's approver)
holds no English word but names: the command itself, paths, protocol names; so does /mode's
description of the sandbox and the network's question. English stays the default, word for word."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import i18n
from core import protocol as ev
from core.agent.approvals import DECISIONS
from core.cancel import Cancel
from core.network.session import approval_ask
from core.sandbox.probe import probe
from core.tools.base import ToolContext
from core.tools.safety import destructive_reason
from core.tools.shell import run_shell
from core.tools.workspace import Workspace
from tests.conftest import make_settings
from tests.support.chinese_ui import english_words
from ui.plain import approver
from ui.plain.approver import TerminalApprover
from ui.reports import answer_text

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell commands")

# (command, what its reason says in Chinese, a part of it in English): outside the workspace, a
# credential file, history beyond the machine, a connection bash opens, several reasons at once.
CASES = [
    ("rm -rf /srv/www/build", "删除 /srv/www/build（在工作区之外）", "deletes /srv/www/build (outside the workspace)"),
    ("find /srv/www -name '*.log' -delete", "删除其中的文件：/srv/www（在工作区之外）", "deletes files under /srv/www"),
    ("rm -rf ../*", "删除 ../*（包含工作区的文件夹）", "a folder that holds the workspace"),
    ("echo key >> ~/.ssh/authorized_keys", "写入凭据文件", "writes to a credential file"),
    ("git push --force origin main", "强制推送", "force push"),
    ("echo hi > /dev/tcp/example.com/80", "连接 example.com 的 80 端口", "connects to example.com port 80"),
    ("cat <&3 | bash", "通过管道交给 bash", "which runs it unseen"),
    ("mv notes.txt /srv/notes.txt && git reset --hard", "移动 /srv/notes.txt（在工作区之外）；丢弃未提交的工作",
     "; discards uncommitted work"),
    ("chmod -R 777 ..", "递归修改权限：..（包含工作区的文件夹）", "recursive permission change of"),
]


@pytest.fixture
def chinese() -> Iterator[None]:
    i18n.use("zh")
    yield
    i18n.use("en")


def _question(command: str, workspace: Path) -> tuple[str, str]:
    """(the approval question as the person sees it, the refusal the model then reads)."""
    asked: list[tuple[str, str]] = []

    def approve(what: str, why: str) -> str:
        asked.append((what, why))
        return i18n._("the user said no")

    settings = make_settings("http://127.0.0.1:1", AGENT_SANDBOX="off")
    ctx = ToolContext(workspace=Workspace(workspace), settings=settings,
                      emit=lambda event: None, approve=approve, cancel=Cancel(), call_id="c1", mode="ask")
    result = run_shell({"command": command}, ctx)
    assert result.status == "refused" and len(asked) == 1, result.output
    what, why = asked[0]
    request = ev.ApprovalRequested(id="ap-1", call_id="c1", tool="run_shell", action=what, reason=why,
                                   cwd=str(workspace), decisions=[d.__dict__ for d in DECISIONS],
                                   command=command)
    stream = io.StringIO()
    TerminalApprover(stream, None).decide(request)
    return stream.getvalue(), result.output


@pytest.mark.parametrize(("command", "chinese_part", "_english"), CASES, ids=[c[0] for c in CASES])
def test_a_chinese_approval_question_names_its_reason_in_chinese(
        command: str, chinese_part: str, _english: str, chinese: None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approver, "read_line", lambda: "n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shown, refusal = _question(command, workspace)
    names = set(english_words(command)) | {"tcp", "bash", "y", "a", "n", "w"}  # the command as it runs, keys
    assert chinese_part in shown, shown
    assert english_words(shown, names) == [], shown
    assert english_words(destructive_reason(command, workspace) or "", names) == []
    assert english_words(refusal, names | {"git"}) == [], refusal


@pytest.mark.parametrize(("command", "_chinese", "english_part"), CASES, ids=[c[0] for c in CASES])
def test_english_stays_the_default(command: str, _chinese: str, english_part: str, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert english_part in (destructive_reason(command, workspace) or "")


@pytest.mark.parametrize("choice", ["auto", "bwrap", "off"])
@pytest.mark.parametrize("network", ["proxied", "on", "off"])
def test_the_sandbox_description_of_mode_is_chinese_but_for_names(choice: str, network: str,
                                                                  chinese: None) -> None:
    described = probe(choice, network).describe()
    report = answer_text(ev.ModeChanged("1", "auto", False, ["auto", "ask", "yes"], described))
    names = {"landlock", "bwrap", "none", "git", "Landlock", "Unix", "seccomp", "inode"}
    assert english_words(report, names) == [], report
    i18n.use("en")  # and English is word for word what the sandbox says it enforces
    info = probe(choice, network)
    assert info.describe().endswith("; ".join(info.enforces) if info.active else f"({info.reason})")


def test_the_network_question_is_chinese_but_for_names(chinese: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approver, "read_line", lambda: "n")
    asked: list[tuple[str, str, str]] = []

    def question(what: str, why: str, rule: str, keep: object) -> str:
        asked.append((what, why, rule))
        return "no"

    approval_ask(question, lambda host: None)("collector.example", 443)
    (what, why, rule), = asked
    request = ev.ApprovalRequested(id="ap-1", call_id="c1", tool="run_shell", action=what, reason=why,
                                   cwd="/w", decisions=[d.__dict__ for d in DECISIONS], kind="network",
                                   rule=rule)
    stream = io.StringIO()
    TerminalApprover(stream, None).decide(request)
    shown = stream.getvalue()
    assert "collector.example:443" in shown and "网络主机 collector.example" in shown, shown
    assert english_words(shown, {"y", "a", "n", "w"}) == [], shown
