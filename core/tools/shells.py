"""Which shell `run_shell` uses, and how a command is handed to it.

POSIX: bash, else sh. Windows: Git Bash when Git for Windows is installed (WSL's `bash.exe` shims
are deliberately not used: they run in another filesystem), else PowerShell, else `cmd.exe`. Each
Windows candidate must answer a trivial `echo` before it is chosen: a PowerShell that is only a stub
(wine's) or a broken install would otherwise fail every command, and the model is told the name of
the shell actually used.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.console import console_encoding
from core.tools import helpers

PROBE_WORD = "deepseek-agent-probe"
PROBE_TIMEOUT = 20.0
# cmd.exe takes at most 8191 characters; CreateProcess 32767. Longer commands go through a file.
MAX_INLINE_CHARS = 8000

# PowerShell's -Command turns a native program's exit code into 0/1: pass the real one on.
_POWERSHELL_EXIT = "\n$ok = $?\nif ($ok) { exit 0 } elseif ($LASTEXITCODE) { exit $LASTEXITCODE } else { exit 1 }"


@dataclass(frozen=True)
class Shell:
    path: str
    dialect: str  # shown to the model: "bash", "Git Bash (bash on Windows)", "PowerShell", "cmd.exe ..."
    syntax: str = "posix"  # how commands are parsed: "posix", "powershell" or "cmd"

    @contextmanager
    def invocation(self, command: str) -> Iterator[list[str] | str]:
        """What to hand to Popen for `command`: an argv, or for cmd.exe a command line (cmd does
        its own unquoting). A command too long for a Windows command line goes through a
        temporary script file (on every platform: Linux limits one argument to 128 KB), removed
        afterwards."""
        if len(command) <= MAX_INLINE_CHARS:
            yield self._inline(command)
            return
        # Windows PowerShell reads a script without a BOM in the ANSI code page, cmd in the console's.
        suffix, encoding = {"posix": (".sh", "utf-8"), "powershell": (".ps1", "utf-8-sig"),
                            "cmd": (".cmd", console_encoding() or "utf-8")}[self.syntax]
        handle, name = tempfile.mkstemp(prefix="deepseek-agent-", suffix=suffix)
        try:
            body = command + _POWERSHELL_EXIT if self.syntax == "powershell" else command
            with os.fdopen(handle, "w", encoding=encoding, errors="replace", newline="") as script:
                script.write(("@echo off\r\n" if self.syntax == "cmd" else "") + body)
            yield self._from_file(name)
        finally:
            Path(name).unlink(missing_ok=True)

    def _inline(self, command: str) -> list[str] | str:
        if self.syntax == "cmd":
            return f'"{self.path}" /d /s /c "{command}"'  # /s: the outer quotes go, the rest runs verbatim
        if self.syntax == "powershell":
            return [self.path, "-NoProfile", "-NonInteractive", "-Command", command + _POWERSHELL_EXIT]
        return [self.path, "-c", command]

    def _from_file(self, name: str) -> list[str] | str:
        if self.syntax == "cmd":
            return f'"{self.path}" /d /s /c ""{name}""'
        if self.syntax == "powershell":
            return [self.path, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", name]
        return [self.path, Path(name).as_posix()]


@lru_cache(maxsize=8)
def detect_shell(workspace: Path | None = None) -> Shell:
    """The shell for commands run in `workspace`: found outside it and the temp folders
    (`core.tools.helpers`), where a command could have planted one."""
    avoid = [workspace] if workspace is not None else []
    if sys.platform != "win32":
        bash = helpers.find("bash", avoid)
        return Shell(bash, "bash") if bash else Shell("/bin/sh", "POSIX sh")
    return choose(windows_candidates(os.environ, lambda name: helpers.find(name, avoid)))


def choose(candidates: list[Shell], probe: Callable[[Shell], bool] | None = None) -> Shell:
    """The first candidate that answers the probe; the last one when none does (cmd.exe is part of
    Windows itself: its failure is better reported by the command than hidden here)."""
    probe = probe or answers
    return next((shell for shell in candidates[:-1] if probe(shell)), candidates[-1])


def answers(shell: Shell) -> bool:
    """Whether `shell` runs `echo` and prints the word back."""
    flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    try:
        with shell.invocation(f"echo {PROBE_WORD}") as argv:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT,
                                  creationflags=flags, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and PROBE_WORD.encode() in done.stdout


def windows_candidates(env: Mapping[str, str], which: Callable[[str], str | None]) -> list[Shell]:
    """Git Bash (every install found), then PowerShell, then cmd.exe, best first."""
    shells = [Shell(path, "Git Bash (bash on Windows)") for path in _git_bash_paths(env, which)]
    for name in ("pwsh", "powershell"):
        found = which(name)
        if found:
            shells.append(Shell(found, "PowerShell", "powershell"))
    system_root = env.get("SYSTEMROOT") or env.get("SystemRoot") or r"C:\Windows"
    cmd = env.get("COMSPEC") or env.get("ComSpec") or str(Path(system_root) / "System32" / "cmd.exe")
    shells.append(Shell(cmd, "cmd.exe (Windows Command Prompt: cmd syntax, e.g. `dir`, `type`, `set`)", "cmd"))
    return shells


def _git_bash_paths(env: Mapping[str, str], which: Callable[[str], str | None]) -> list[str]:
    """bash.exe of Git for Windows: beside the git.exe on PATH (`<Git>\\cmd`, `<Git>\\mingw64\\bin`,
    a Scoop shim), a bash.exe on PATH that is not WSL's, Scoop, portable and standard installs."""
    roots: list[Path] = []
    git = which("git")
    if git:
        found = Path(git).resolve()
        roots += list(found.parents)[:3]
    home = env.get("USERPROFILE") or env.get("HOME")
    scoop = env.get("SCOOP") or (home and str(Path(home) / "scoop"))
    if scoop:
        roots.append(Path(scoop) / "apps" / "git" / "current")
    for base in (env.get("PROGRAMFILES"), env.get("PROGRAMW6432"), env.get("PROGRAMFILES(X86)"),
                 env.get("LOCALAPPDATA") and str(Path(env["LOCALAPPDATA"]) / "Programs")):
        if base:
            roots.append(Path(base) / "Git")
    candidates = [root / sub / "bash.exe" for root in roots for sub in ("bin", Path("usr") / "bin")]
    bash = which("bash")
    if bash and not _is_wsl_shim(bash):
        candidates.insert(0, Path(bash))
    paths: list[str] = []
    for candidate in candidates:
        if candidate.is_file() and str(candidate) not in paths:
            paths.append(str(candidate))
    return paths


def _is_wsl_shim(path: str) -> bool:
    """`System32\\bash.exe` and the WindowsApps alias start WSL, not Git Bash."""
    lowered = path.replace("/", "\\").lower()
    return "\\system32\\" in lowered or "\\windowsapps\\" in lowered
