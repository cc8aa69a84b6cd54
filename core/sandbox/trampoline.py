"""Starting a program inside the sandbox by exec (`deepseek-agent sandbox-exec`, core/runtime/sandbox_exec.py). For starters that cannot set a child up themselves: the MCP SDK starts stdio servers
through anyio, which takes no `preexec_fn`. The settings the sandbox needs come on the command line,
since the child's environment is the server's own, not the agent's."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from core.config import ConfigError, Settings, load_settings
from core.sandbox.launch import Confinement, confine

# The settings the sandbox is made of, by the names the command line gives them.
SETTINGS = {"AGENT_SANDBOX": "sandbox", "AGENT_NETWORK": "network", "AGENT_SANDBOX_WRITABLE": "sandbox_writable",
            "AGENT_SANDBOX_READABLE": "sandbox_readable", "AGENT_SANDBOX_SOCKETS": "sandbox_sockets",
            "AGENT_SESSIONS_DIR": "sessions_dir"}


def command(workspace: Path, program: str, args: list[str], settings: Settings) -> tuple[str, list[str]]:
    """(command, args) that run `program args` confined as `settings` say, through this very agent.
    A program that cannot be found is left as it is, so its starter says so in its own words."""
    if shutil.which(program) is None:
        return program, args
    agent = [] if getattr(sys, "frozen", False) else [str(Path(__file__).resolve().parents[2] / "agent.py")]
    # A server reaches its own service directly: the proxied network is for commands (docs/network.md).
    values = {**{attr: getattr(settings, attr) for attr in SETTINGS.values()},
              "network": "on" if settings.network == "proxied" else settings.network}
    given = [f"{name}={values[attr]}" for name, attr in SETTINGS.items() if values[attr]]
    return sys.executable, [*agent, "sandbox-exec", *given, str(workspace), "--", program, *args]


class CannotStart(Exception):
    """The program cannot be started confined; the message says why."""


def become(workspace: Path, program: list[str], given: dict[str, str]) -> None:
    """Replace this process with `program` confined to `workspace` (settings `given` by name);
    returns only by raising CannotStart."""
    try:
        confinement = Confinement.for_workspace(workspace, load_settings(overrides=given))
    except ConfigError as exc:
        raise CannotStart(str(exc)) from None
    try:
        with confine(program, confinement) as launch:
            for fd in launch.popen_kwargs.get("pass_fds", ()):
                os.set_inheritable(fd, True)  # bubblewrap reads the seccomp filter from it
            enter = launch.popen_kwargs.get("preexec_fn")
            if enter is not None:
                enter()  # this process takes the Landlock ruleset, and exec keeps it
            os.execvpe(launch.argv[0], launch.argv, launch.environment(os.environ))
    except OSError as exc:
        raise CannotStart(f"cannot run {program[0]}: {exc.strerror or exc}") from None
