"""`agent.py` as a subprocess with the test key, pointed at a scripted server: what the end-to-end
tier runs, and the shell-neutral commands its scripts send."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.tools.shells import detect_shell
from tests.conftest import TEST_KEY
from tests.support.paths import ROOT

AGENT = ROOT / "agent.py"


def native(posix: str, cmd: str, powershell: str) -> str:
    """The command in the syntax of the shell `run_shell` uses on this machine (cmd.exe under wine,
    where there is no Git Bash and PowerShell is a stub)."""
    return {"posix": posix, "cmd": cmd, "powershell": powershell}[detect_shell().syntax]


def env_to_file(name: str) -> str:
    """A command that writes the environment it got to `name`, one NAME=value a line."""
    return native(f"env > {name}", f"set > {name}",
                  f'Get-ChildItem env: | ForEach-Object {{ "$($_.Name)=$($_.Value)" }} | Set-Content {name}')


def run_agent(args: list[str], server_url: str, tmp_path: Path, stdin: bytes | None = None,
              env: dict[str, str] | None = None, timeout: float = 60, launcher: tuple[str, ...] = (),
              creationflags: int = 0) -> subprocess.CompletedProcess[bytes]:
    """agent.py in a subprocess with the test key and server; `launcher`: Python options before it."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_"))}
    environ.update({"DEEPSEEK_BASE_URL": server_url, "DEEPSEEK_API_KEY": TEST_KEY,
                    "AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), "AGENT_RETRY_BASE_DELAY": "0.05",
                    "PYTHONUTF8": "0", "NO_COLOR": "1", "DEEPSEEK_LANG": "en", **(env or {})})
    done = subprocess.run([sys.executable, *launcher, str(AGENT), "--cwd", str(workspace), *args], input=stdin,
                          capture_output=True, env=environ, timeout=timeout, check=False, creationflags=creationflags)
    # Windows ends printed lines with \r\n: compare text, not line endings.
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.replace(b"\r\n", b"\n"),
                                       done.stderr.replace(b"\r\n", b"\n"))
