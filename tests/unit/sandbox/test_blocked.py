"""A confined command the sandbox refused says so, asks its own question, and runs again outside
only after a yes; failures of the command's own making are left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.config import load_settings
from core.sandbox import Confinement, Policy, bwrap, landlock, probe, sandbox_denial
from core.tools.base import ToolContext, ToolError
from core.tools.shell import run_command, run_shell
from core.tools.workspace import Workspace
from tests.support.sandbox_corpus import CANARY, Layout
from tests.support.sandbox_fixtures import confinement


def _policy(layout: Layout, network: bool = True) -> Policy:
    settings = load_settings(environ={"AGENT_NETWORK": "on" if network else "off"}, env_file=layout.base / "none")
    return Policy.for_workspace(layout.workspace, settings)


@pytest.mark.parametrize("output", [
    "rm: cannot remove '../x/f.txt': Permission denied",
    "touch: cannot touch '../x/new': Permission denied",
    "/usr/bin/bash: line 1: ../x/f.txt: Permission denied",
    "PermissionError: [Errno 13] Permission denied: '../x/f.txt'",
    "cp: cannot create regular file '../x/f.txt': Read-only file system",
    "mkdir: cannot create directory ‘../x/sub’: Permission denied",
    "Error: EACCES: permission denied, open '../x/f.txt'",
    "sed: couldn't open temporary file ../x/sedAbc: Permission denied",
    "cat: ~/.ssh/id_ed25519: Permission denied",
    "bash: /tmp/x: Permission denied",  # the shared temp folder: commands get their own as $TMPDIR
    "touch: cannot touch '/var/tmp/y': Permission denied",
    # The same under a Chinese locale, in glibc's and coreutils' words (LANG=zh_CN.UTF-8).
    "rm: 无法删除 '../x/f.txt': 权限不够",
    "/usr/bin/bash: 行 1: ../x/f.txt: 权限不够",
    "mkdir: 无法创建目录 \"../x/sub\": 权限不够",
    "cp: 无法创建普通文件 '../x/f.txt': 只读文件系统",
    "touch: 无法 touch '/var/tmp/y': 不允许的操作",
])
def test_a_denial_outside_what_commands_may_touch_is_the_sandboxs(layout: Layout, output: str) -> None:
    blocked = sandbox_denial(output, 1, _policy(layout))
    assert blocked is not None and blocked.paths, output


@pytest.mark.parametrize(("output", "code"), [
    ("rm: cannot remove './f.txt': Permission denied", 1),  # inside the workspace: the file's own mode
    ("bash: $TMPDIR/x: Permission denied", 1),  # not a path it can read
    ("rm: cannot remove '../x/f.txt': Permission denied", 0),  # the command went on and succeeded
    ("rm: cannot remove '../x/gone.txt': No such file or directory", 1),  # missing outside too
    ("error: something else failed", 2),
    ("rm: cannot remove '../x/f.txt': Permission denied", None),  # killed: no verdict
])
def test_other_failures_are_not_the_sandboxs(layout: Layout, output: str, code: int | None) -> None:
    assert sandbox_denial(output, code, _policy(layout)) is None


def test_signals_and_network_denials_are_named(layout: Layout) -> None:
    signal = sandbox_denial("bash: kill: (4242) - Operation not permitted", 1, _policy(layout))
    assert signal is not None and "signals" in signal.describe()
    net = sandbox_denial("ConnectionError: [Errno 13] Permission denied (connect)", 1, _policy(layout, network=False))
    assert net is not None and "network" in net.describe()
    assert sandbox_denial("ConnectionError: [Errno 13] Permission denied (connect)", 1, _policy(layout)) is None


def _context(layout: Layout, answers: list[str | None], asked: list[tuple[str, str]], backend: str) -> ToolContext:
    settings = load_settings(environ={"AGENT_SANDBOX": backend}, env_file=layout.base / "none")

    def approve(what: str, why: str) -> str | None:
        asked.append((what, why))
        return answers.pop(0)

    return ToolContext(workspace=Workspace(layout.workspace), settings=settings, emit=lambda *a: None,
                       approve=approve, cancel=Cancel())


def test_a_blocked_command_asks_to_run_outside_and_a_no_keeps_it_in(layout: Layout, backend: str) -> None:
    confinement(layout, backend)  # skips where this backend is missing
    asked: list[tuple[str, str]] = []
    command = "echo gone >&../x/f.txt"  # a form the command gate lets through
    result = run_shell({"command": command}, _context(layout, ["the user said no"], asked, backend))
    assert [what for what, _ in asked] == [f"run outside the sandbox: {command}"]
    assert "x/f.txt" in asked[0][1]
    assert result.outcome.sandbox_blocked and result.outcome.sandbox == backend and result.status == "error"
    assert "blocked by the sandbox" in result.output and "the user said no" in result.output
    assert (layout.base / "x" / "f.txt").read_text() == CANARY


def test_a_yes_runs_it_again_outside(layout: Layout, backend: str) -> None:
    confinement(layout, backend)
    asked: list[tuple[str, str]] = []
    result = run_shell({"command": "echo gone >&../x/f.txt"}, _context(layout, [None], asked, backend))
    assert len(asked) == 1 and result.status == "ok" and "allowed running it outside" in result.output
    assert (layout.base / "x" / "f.txt").read_text() == "gone\n"


def test_a_command_that_works_asks_nothing(layout: Layout, backend: str) -> None:
    confinement(layout, backend)
    asked: list[tuple[str, str]] = []
    result = run_shell({"command": "echo fine > w.txt && cat w.txt"}, _context(layout, [], asked, backend))
    assert asked == [] and result.status == "ok" and not result.outcome.sandbox_blocked


def test_the_probe_says_what_is_active() -> None:
    assert probe("off").backend == "none" and probe("off").describe() == "none (turned off)"
    auto = probe("auto")
    assert auto.backend in ("landlock", "bwrap", "none")
    if auto.backend == "landlock":
        assert auto.describe().startswith(f"landlock ABI {auto.abi}: writes only in the workspace")
    forced = probe("bwrap")
    assert forced.backend in ("bwrap", "none") and (forced.active or "bwrap" in forced.reason)


def test_secrets_inside_the_workspace_stay_unreadable(layout: Layout, backend: str) -> None:
    """The user works in their home folder: ~/.ssh is inside the workspace, and still unreadable;
    the rest of the home folder is readable and writable."""
    confinement(layout, backend)  # skips where this backend is missing
    settings = load_settings(environ={"AGENT_SANDBOX": backend}, env_file=layout.base / "none")
    confined = Confinement.for_workspace(layout.home, settings)
    assert confined is not None
    done = run_command("cat .ssh/id_ed25519; echo new > made.txt; cat cKEY/f.txt", layout.home, 10, Cancel(),
                       confinement=confined)
    text = done.output.decode()
    assert ("PRIVATE" not in text and "Permission denied" in text) or "No such file" in text
    assert "keep" in text and (layout.home / "made.txt").read_text() == "new\n"


def test_no_sandbox_where_it_is_off(layout: Layout) -> None:
    settings = load_settings(environ={"AGENT_SANDBOX": "off"}, env_file=layout.base / "none")
    assert Confinement.for_workspace(layout.workspace, settings) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock and bubblewrap are Linux's")
def test_the_probe_falls_back_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel without Landlock: auto takes bubblewrap where it works, and says "none" with the
    reason where neither does (then the approval mode is `ask`)."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    for works, expected in ((True, "bwrap"), (False, "none")):
        probe.cache_clear()
        monkeypatch.setattr(bwrap, "works", lambda w=works: w)
        assert probe("auto").backend == expected
        assert probe("landlock").describe() == "none (this kernel has no Landlock)"
    assert "no Landlock in this kernel and no working bwrap" in probe("auto").describe()
    probe.cache_clear()


def test_a_sessions_folder_in_a_temp_folder_leaves_temp_files_readable(layout: Layout, backend: str,
                                                                       tmp_path: Path) -> None:
    """Tests keep sessions under the temp folder: hiding them there would make every new temp file
    unreadable for the rest of its command, so temp folders stay whole."""
    confinement(layout, backend)
    settings = load_settings(environ={"AGENT_SANDBOX": backend, "AGENT_SESSIONS_DIR": str(tmp_path / "sessions")},
                             env_file=layout.base / "none")
    (tmp_path / "sessions").mkdir()
    confined = Confinement.for_workspace(layout.workspace, settings)
    assert confined is not None and (tmp_path / "sessions").resolve() not in confined.policy.denied
    done = run_command("t=$(mktemp -d) && echo hi > $t/f && cat $t/f && rm -rf $t", layout.workspace, 10, Cancel(),
                       confinement=confined)
    assert done.exit_code == 0 and done.output == b"hi\n"


def test_a_sandbox_that_cannot_be_entered_runs_nothing_and_says_so(layout: Layout,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    confined = confinement(layout, "landlock")

    def refuse() -> None:
        raise OSError(1, "the sandbox could not be entered")

    monkeypatch.setattr(landlock, "_enter", lambda *_: refuse)
    with pytest.raises(ToolError, match=r"could not enter the sandbox.*--no-sandbox"):
        run_command("echo ran > ran.txt", layout.workspace, 10, Cancel(), confinement=confined)
    assert not (layout.workspace / "ran.txt").exists()


@pytest.mark.parametrize("command", [
    "echo scratch > /tmp/agent-test-{n}.txt",
    "mkdir -p /var/tmp/agent-test-{n}/sub",
    "cp /etc/hostname /dev/shm/agent-test-{n}",
    "python3 -c \"open('/tmp/agent-test-{n}.py', 'w').write('x')\"",
])
def test_a_write_to_the_shared_temp_folder_is_refused_and_names_tmpdir(layout: Layout, backend: str,
                                                                      command: str) -> None:
    confinement(layout, backend)
    command = command.format(n=layout.base.name)
    asked: list[tuple[str, str]] = []
    result = run_shell({"command": command}, _context(layout, ["no"], asked, backend))
    # Refused before it runs when the gate sees the path, blocked by the kernel when it does not.
    assert result.status in ("error", "refused") and "sandbox" in result.output, result.output
    assert "$TMPDIR" in result.output and "--yes" not in result.output and "The user can or" not in result.output


def test_tmpdir_is_the_sessions_own_folder_and_writable(layout: Layout, backend: str) -> None:
    confinement(layout, backend)
    asked: list[tuple[str, str]] = []
    result = run_shell({"command": 'echo kept > "$TMPDIR/x.txt" && cat "$TMPDIR/x.txt" && echo "$TMPDIR"'},
                       _context(layout, [], asked, backend))
    assert asked == [] and result.status == "ok" and "kept" in result.output, result.output
    policy = _policy(layout)
    assert policy.temp is not None and str(policy.temp) in result.output
