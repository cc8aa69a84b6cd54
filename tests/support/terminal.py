"""The agent in a real terminal: tmux runs it (the full-screen TUI, or the plain REPL with --plain),
send-keys types, capture-pane reads."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY
from tests.support.agent_process import AGENT
from tests.support.paths import ROOT
from tests.support.sse_server import Reply, ScriptedServer

# Skips a test that drives a real terminal in tmux, saying why it cannot here.
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux drives a POSIX terminal; Windows has none"
                                if sys.platform == "win32" else "tmux is not installed (.ci/run installs it)")


class Terminal:
    """A detached tmux session running `command`; it stays open 30 s after the command exits, with
    `[exited N]` on screen."""

    def __init__(self, command: str, env: dict[str, str], width: int = 160, height: int = 50) -> None:
        self.name = f"da-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        start = ["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                 f"env {exports} {command}; echo '[exited' $?']'; sleep 30"]
        for attempt in range(3):  # the last session's server may still be exiting: "server exited unexpectedly"
            started = subprocess.run(start, capture_output=True, text=True, check=False)
            if started.returncode == 0:
                break
            time.sleep(0.2 * (attempt + 1))
        else:
            raise RuntimeError(f"tmux could not start a session: {started.stderr.strip()}")
        # tmux holds a bare Esc for 500 ms by default, waiting for a sequence; users are told to lower it.
        subprocess.run(["tmux", "set-option", "-s", "escape-time", "10"], check=False)

    def resize(self, width: int, height: int) -> None:
        subprocess.run(["tmux", "resize-window", "-t", self.name, "-x", str(width), "-y", str(height)], check=True)

    def scrollback(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", self.name],
                              capture_output=True, text=True, check=False).stdout

    def send(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", self.name], capture_output=True,
                              text=True, check=False).stdout

    def wait_for(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)


def terminal_env(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The agent's environment in tmux: the test key and server, sessions under `tmp_path`."""
    return {"DEEPSEEK_BASE_URL": url, "DEEPSEEK_API_KEY": TEST_KEY, "AGENT_SESSIONS_DIR": str(tmp_path / "s"),
            "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "LANG": "C.UTF-8", "DEEPSEEK_LANG": "en", **extra}


def agent_command(workspace: Path, *flags: str, agent: Path = AGENT) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))} --cwd {shlex.quote(str(workspace))} {' '.join(flags)}"


def app_copy(tmp_path: Path) -> Path:
    """The product copied to a scratch folder, for tests that write beside agent.py (the first run's .env)."""
    app = tmp_path / "app"
    for package in ("core", "ui"):
        shutil.copytree(ROOT / package, app / package, ignore=shutil.ignore_patterns("__pycache__"))
    for module in ("agent.py", "tui.py"):
        shutil.copy(ROOT / module, app / module)
    return app


@contextmanager
def agent_terminal(script: list[Reply], tmp_path: Path, workspace: Path, *flags: str, ready: str = "Type a task",
                   agent: Path = AGENT, width: int = 160, height: int = 50,
                   env: dict[str, str] | None = None) -> Iterator[tuple[Terminal, ScriptedServer]]:
    """The agent (with `flags`, e.g. --plain, and `env` over the usual environment) in tmux against a
    server playing `script`, once `ready` is on screen; the tmux session is closed however the test ends."""
    with ScriptedServer(script) as server:
        term = Terminal(agent_command(workspace, *flags, agent=agent), terminal_env(server.url, tmp_path, **(env or {})),
                        width=width, height=height)
        try:
            term.wait_for(ready)
            yield term, server
        finally:
            term.close()
