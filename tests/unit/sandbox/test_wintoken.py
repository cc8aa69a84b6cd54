"""The Windows sandbox (a restricted, low-integrity token). Under wine, which does not enforce
integrity levels, the code path runs for real (token, child, pipes, exit code, Job Object) and
the probe falls back to none, so the mode stays `ask`. Enforcement is proven only on real Windows,
in .github/workflows/windows-sandbox.yml (DEEPSEEK_AGENT_REAL_WINDOWS=1)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.config import ConfigError, load_settings
from core.modes import ASK, resolve_mode
from core.sandbox import Confinement, Policy, SandboxInfo, confine, probe
from core.tools.shell import ShellRun, _collect, _job_of, child_env

WINDOWS = sys.platform == "win32"
REAL_WINDOWS = WINDOWS and os.environ.get("DEEPSEEK_AGENT_REAL_WINDOWS") == "1"
ON_WINDOWS = pytest.mark.skipif(not WINDOWS, reason="the low-integrity token is Windows': run "
                                "`python3 tests/windows.py tests/unit/sandbox/test_wintoken.py` (wine)")
ENFORCED = pytest.mark.skipif(not REAL_WINDOWS, reason="needs integrity levels enforced: real Windows, in "
                              ".github/workflows/windows-sandbox.yml (DEEPSEEK_AGENT_REAL_WINDOWS=1)")
NEW_GROUP = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(subprocess, "CREATE_NO_WINDOW", 0)


def _under_wine() -> bool:
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")  # type: ignore[attr-defined]


UNDER_WINE = pytest.mark.skipif(not (WINDOWS and _under_wine()), reason="the honest fallback is wine's: it does not enforce integrity levels")


def settings_for(tmp_path: Path, choice: str, **env: str):  # type: ignore[no-untyped-def]
    return load_settings(environ={"AGENT_SANDBOX": choice, **env}, env_file=tmp_path / "none.env")


def bare_confinement(workspace: Path) -> Confinement:
    """The wintoken confinement with nothing to label: wine refuses mandatory labels, and the
    start-up path is what is under test here."""
    return Confinement(SandboxInfo("wintoken", 0, ("test",)), Policy(workspace, writable=(), denied=()))


def run_confined(argv: list[str], workspace: Path, confinement: Confinement | None, timeout: float = 60) -> ShellRun:
    """As core.tools.shell.run_command starts a command, through `launch.popen` and the Job Object;
    the child's environment alone has WINBOX_PROBE."""
    env = {**child_env(), "PYTHONIOENCODING": "utf-8", "WINBOX_PROBE": "token-env"}
    with confine(argv, confinement) as launch:
        proc = launch.popen(launch.argv, cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, creationflags=NEW_GROUP, **launch.popen_kwargs)
    return _collect(proc, _job_of(proc), time.monotonic(), timeout, Cancel(), None, None)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# Everywhere: the choice exists, and only Windows can give it.

def test_wintoken_is_a_sandbox_choice_and_bad_spellings_are_refused(tmp_path: Path) -> None:
    assert settings_for(tmp_path, "wintoken").sandbox == "wintoken"
    for wrong in ("win-token", "WinToken ", "token", "lowintegrity"):
        with pytest.raises(ConfigError, match="wintoken"):
            settings_for(tmp_path, wrong)


@pytest.mark.skipif(WINDOWS, reason="off Windows only")
def test_off_windows_wintoken_gives_none_and_the_mode_ask(tmp_path: Path) -> None:
    info = probe("wintoken")
    assert not info.active and "Windows" in info.reason
    assert resolve_mode(settings_for(tmp_path, "wintoken")) == ASK
    with pytest.raises(ConfigError, match="Windows"):
        resolve_mode(settings_for(tmp_path, "wintoken", AGENT_MODE="auto"))


# Windows, wine included: the code path runs.

@ON_WINDOWS
def test_by_default_windows_has_no_sandbox_and_says_it_is_unproven(tmp_path: Path) -> None:
    for choice in ("auto", "landlock", "bwrap"):
        info = probe(choice)
        assert not info.active
        assert "unproven" in info.reason and "AGENT_SANDBOX=wintoken" in info.reason
        assert resolve_mode(settings_for(tmp_path, choice)) == ASK
    assert Confinement.for_workspace(tmp_path, settings_for(tmp_path, "auto")) is None


@ON_WINDOWS
def test_the_token_is_made_and_carries_a_mandatory_level() -> None:
    from core.sandbox import wintoken

    with wintoken.low_token() as token:
        assert token
        level = wintoken.integrity_of(token)
    assert level.startswith("S-1-16-")
    if REAL_WINDOWS:
        assert level == wintoken.LOW_INTEGRITY


@ON_WINDOWS
@pytest.mark.parametrize(("argv", "shown"), [
    (python("import os, sys; print('中文 ok', os.environ['WINBOX_PROBE'], os.getcwd()); sys.exit(3)"), "中文 ok"),
    ([*python("import sys; print(repr(sys.argv[1:]), sys.stdin.read() == ''); sys.exit(3)"),
      'a b', 'say "hi"', 'back\\slash\\', ''], """['a b', 'say "hi"', 'back\\\\slash\\\\', ''] True"""),
    ([os.environ.get("COMSPEC", "cmd.exe"), "/d", "/c", "echo from cmd %WINBOX_PROBE% & exit /b 3"],
     "from cmd token-env"),
])
def test_a_confined_command_runs_with_its_pipes_environment_and_exit_code(tmp_path: Path, argv: list[str],
                                                                          shown: str) -> None:
    assert "WINBOX_PROBE" not in os.environ
    done = run_confined(argv, tmp_path, bare_confinement(tmp_path))
    text = done.output.decode("utf-8", "replace")
    assert shown in text, text
    assert done.exit_code == 3 and not done.timed_out and not done.background
    if argv[0] == sys.executable and "getcwd" in argv[2]:
        assert "token-env" in text and str(tmp_path).lower() in text.lower()


@ON_WINDOWS
def test_a_confined_command_without_pipes_gives_its_exit_code() -> None:
    from core.sandbox import wintoken

    for code in (0, 5, 255):
        child = wintoken.TokenPopen(python(f"import sys; sys.exit({code})"), integrity=wintoken.LOW_INTEGRITY)
        assert child.wait(timeout=60) == code


@ON_WINDOWS
def test_the_job_object_holds_the_confined_tree(tmp_path: Path) -> None:
    """A grandchild that would write a marker after 4 s is ended with the command at its 2 s limit."""
    marker = tmp_path / "grandchild-was-alive"
    grandchild = f"import time, pathlib; time.sleep(4); pathlib.Path({str(marker)!r}).write_text('x')"
    parent = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {grandchild!r}]); time.sleep(60)"
    done = run_confined(python(parent), tmp_path, bare_confinement(tmp_path), timeout=2)
    assert done.timed_out and done.exit_code is None
    time.sleep(4)
    assert not marker.exists()


@ON_WINDOWS
def test_a_caller_that_ignores_launch_popen_fails_rather_than_runs_unconfined(tmp_path: Path) -> None:
    with confine(python("print(1)"), bare_confinement(tmp_path)) as launch, pytest.raises(TypeError, match="integrity"):
        subprocess.Popen(launch.argv, stdout=subprocess.PIPE, **launch.popen_kwargs)


@ON_WINDOWS
def test_bad_arguments_to_a_confined_start_are_clear_errors(tmp_path: Path) -> None:
    from core.sandbox import wintoken

    with pytest.raises(ValueError, match="shell=True"):
        wintoken.TokenPopen("echo x", integrity=wintoken.LOW_INTEGRITY, shell=True, stdout=subprocess.PIPE)
    with pytest.raises(FileNotFoundError):
        wintoken.TokenPopen([str(tmp_path / "no such program.exe")], integrity=wintoken.LOW_INTEGRITY,
                            stdout=subprocess.PIPE)
    with pytest.raises(OSError):
        wintoken.TokenPopen(python("print(1)"), integrity="S-1-16-not-a-level", stdout=subprocess.PIPE)


@UNDER_WINE
def test_a_folder_that_cannot_be_labelled_means_the_command_does_not_run(tmp_path: Path) -> None:
    """Wine refuses mandatory labels, as a FAT drive would: the start fails, as a sandbox's does."""
    marker = tmp_path / "ran"
    confinement = Confinement(SandboxInfo("wintoken", 0, ("test",)), Policy(tmp_path, writable=(tmp_path,), denied=()))
    with pytest.raises(subprocess.SubprocessError, match="labelling"):
        run_confined(python(f"open({str(marker)!r}, 'w').close()"), tmp_path, confinement)
    assert not marker.exists()


@UNDER_WINE
def test_under_wine_the_probe_finds_integrity_levels_unenforced_and_the_mode_stays_ask(tmp_path: Path) -> None:
    info = probe("wintoken")
    assert not info.active and info.describe() == "none (integrity levels are not enforced here)"
    assert resolve_mode(settings_for(tmp_path, "wintoken")) == ASK
    with pytest.raises(ConfigError, match="integrity levels are not enforced"):
        resolve_mode(settings_for(tmp_path, "wintoken", AGENT_MODE="auto"))
    assert Confinement.for_workspace(tmp_path, settings_for(tmp_path, "wintoken")) is None


# Real Windows only: what the kernel holds.

@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder with a canary, outside the workspace and the temp folders (which commands may write)."""
    folder = Path.home() / f".agent-wintoken-canary-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    (folder / "canary.txt").write_text("keep")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def confined_for(workspace: Path) -> Confinement:
    found = Confinement.for_workspace(workspace, settings_for(workspace, "wintoken"))
    assert found is not None and found.info.backend == "wintoken", probe("wintoken").describe()
    return found


def cmd(line: str) -> list[str]:
    return [os.environ.get("COMSPEC", "cmd.exe"), "/d", "/c", line]


@ENFORCED
@pytest.mark.parametrize("command", [
    cmd('echo x> "{out}\\new.txt"'),
    cmd('echo x> "{out}\\canary.txt"'),
    cmd('del /f /q "{out}\\canary.txt"'),
    cmd('mkdir "{out}\\sub"'),
    cmd('copy /y nul "{out}\\canary.txt"'),
    python("import pathlib; pathlib.Path(r'{out}', 'canary.txt').write_text('gone')"),
    python("import os; os.remove(r'{out}\\canary.txt')"),
    python("import os; os.rename(r'{out}\\canary.txt', r'{out}\\moved.txt')"),
])
def test_a_confined_command_cannot_write_outside(tmp_path: Path, outside: Path, command: list[str]) -> None:
    argv = [part.replace("{out}", str(outside)) for part in command]
    run_confined(argv, tmp_path, confined_for(tmp_path))
    assert sorted(p.name for p in outside.iterdir()) == ["canary.txt"]
    assert (outside / "canary.txt").read_text() == "keep"
    run_confined(argv, tmp_path, None)
    assert sorted(p.name for p in outside.iterdir()) != ["canary.txt"] or \
        (outside / "canary.txt").read_text() != "keep", f"{argv} harms nothing even unconfined: not a probe"


@ENFORCED
def test_a_confined_command_runs_at_low_integrity(tmp_path: Path) -> None:
    done = run_confined(["whoami", "/groups"], tmp_path, confined_for(tmp_path))
    assert b"Low Mandatory Level" in done.output and b"Medium Mandatory Level" not in done.output, done.output


@ENFORCED
def test_a_confined_command_writes_the_workspace_and_the_temp_folder(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "existing.txt").write_text("old")
    code = ("import os, pathlib, tempfile; pathlib.Path('existing.txt').write_text('new'); os.mkdir('d'); "
            "pathlib.Path('d', 'f.txt').write_text('f'); os.remove('d/f.txt'); "
            "t = pathlib.Path(tempfile.gettempdir(), 'agent-wintoken-' + str(os.getpid())); t.write_text('t'); "
            "t.unlink(); print('done')")
    done = run_confined(python(code), workspace, confined_for(workspace))
    assert done.exit_code == 0 and b"done" in done.output, done.output
    assert (workspace / "existing.txt").read_text() == "new"
