"""Which shell run_shell uses and how a command reaches it (core/tools/shells.py). The Windows
search runs anywhere against fake installs in a temp folder; probing, long commands and exit codes
run in the real shell of the machine: bash on Linux, cmd.exe under wine (tests/windows.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.agent.prompt import build_instructions
from core.tools.shells import MAX_INLINE_CHARS, Shell, answers, choose, detect_shell, windows_candidates
from tests.support.agent_process import native


def _file(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"MZ")
    return str(path)


def _which(**found: str):
    return lambda name: found.get(name)


def _bash_paths(env: dict[str, str], **found: str) -> list[str]:
    return [s.path for s in windows_candidates(env, _which(**found)) if s.dialect.startswith("Git Bash")]


@pytest.mark.parametrize("git_on_path", ["Git/cmd/git.exe", "Git/mingw64/bin/git.exe", "PortableGit/cmd/git.exe"])
def test_git_bash_is_found_beside_the_git_on_path(tmp_path: Path, git_on_path: str) -> None:
    top = git_on_path.split("/")[0]
    bash = _file(tmp_path / top / "bin" / "bash.exe")
    git = _file(tmp_path / git_on_path)
    assert _bash_paths({}, git=git) == [bash]


def test_git_bash_is_found_in_scoop_and_standard_installs(tmp_path: Path) -> None:
    scoop = _file(tmp_path / "scoop" / "apps" / "git" / "current" / "bin" / "bash.exe")
    shim = _file(tmp_path / "scoop" / "shims" / "git.exe")  # a shim: not beside Git's own folders
    assert _bash_paths({"USERPROFILE": str(tmp_path)}, git=shim) == [scoop]
    program_files = _file(tmp_path / "Program Files" / "Git" / "bin" / "bash.exe")
    assert _bash_paths({"PROGRAMFILES": str(tmp_path / "Program Files")}) == [program_files]
    per_user = _file(tmp_path / "AppData" / "Local" / "Programs" / "Git" / "usr" / "bin" / "bash.exe")
    assert _bash_paths({"LOCALAPPDATA": str(tmp_path / "AppData" / "Local")}) == [per_user]


def test_wsl_bash_is_never_taken_for_git_bash(tmp_path: Path) -> None:
    wsl = _file(tmp_path / "Windows" / "System32" / "bash.exe")
    alias = _file(tmp_path / "AppData" / "Local" / "Microsoft" / "WindowsApps" / "bash.exe")
    assert _bash_paths({}, bash=wsl) == [] and _bash_paths({}, bash=alias) == []
    git_bash = _file(tmp_path / "Git" / "bin" / "bash.exe")
    assert _bash_paths({}, bash=git_bash) == [git_bash]


def test_candidates_are_git_bash_then_powershell_then_cmd(tmp_path: Path) -> None:
    bash = _file(tmp_path / "Git" / "bin" / "bash.exe")
    env = {"PROGRAMFILES": str(tmp_path), "COMSPEC": r"D:\Windows\System32\cmd.exe"}
    shells = windows_candidates(env, _which(pwsh=r"C:\pwsh\pwsh.exe"))
    assert [(s.path, s.syntax) for s in shells] == [
        (bash, "posix"), (r"C:\pwsh\pwsh.exe", "powershell"), (r"D:\Windows\System32\cmd.exe", "cmd")]
    bare = windows_candidates({"SYSTEMROOT": r"E:\Win"}, _which())
    assert [s.syntax for s in bare] == ["cmd"] and bare[0].path.replace("/", "\\").endswith(r"Win\System32\cmd.exe")


def test_the_first_shell_that_answers_is_chosen_and_cmd_is_the_last_resort() -> None:
    stub, broken, cmd = Shell("stub", "PowerShell", "powershell"), Shell("b", "Git Bash"), Shell("cmd", "cmd", "cmd")
    assert choose([broken, stub, cmd], probe=lambda s: s is stub) is stub
    assert choose([broken, stub, cmd], probe=lambda s: False) is cmd


def test_the_probe_runs_the_shell_and_reads_the_word_back(tmp_path: Path) -> None:
    assert answers(detect_shell())
    # A program that runs but does not echo (wine's PowerShell stub printed nothing): not a shell.
    assert not answers(Shell(sys.executable, "python, not a shell"))
    assert not answers(Shell(str(tmp_path / "missing.exe"), "not installed"))


def test_the_model_is_told_the_shell_in_use(tmp_path: Path) -> None:
    assert f"shell for run_shell: {detect_shell().dialect}" in build_instructions(tmp_path)


def test_a_long_command_goes_through_a_script_file_and_keeps_its_exit_code(tmp_path: Path) -> None:
    filler = "x" * (MAX_INLINE_CHARS + 100)
    command = native(f"echo first\n: '{filler}'\necho last\nexit 3",
                     f"echo first\r\nrem {filler}\r\necho last\r\nexit /b 3",
                     f"echo first\n# {filler}\necho last\nexit 3")
    with detect_shell().invocation(command) as argv:
        line = argv if isinstance(argv, str) else " ".join(argv)
        assert len(line) < 1000, "the command line names a file, not the command"
        script = Path(re.search(r"[^\s\"]*deepseek-agent-[^\s\"]+", line).group())  # type: ignore[union-attr]
        assert script.is_file()
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    out = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 3 and "first" in out and "last" in out, (done.returncode, out, done.stderr)
    assert not script.exists(), "the script file is removed"
