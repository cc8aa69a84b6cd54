"""`deepseek-agent sandbox-exec [SETTING=VALUE …] WORKSPACE -- PROGRAM ARGS…`: become PROGRAM inside
the sandbox. For starters that cannot set a child up themselves: the MCP SDK starts stdio servers
through anyio, which takes no `preexec_fn`. The settings the sandbox needs come on the command line,
since the child's environment is the server's own, not the agent's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from core.config import ConfigError, Settings, load_settings
from core.sandbox.launch import Confinement, confine

# The settings the sandbox is made of, by the names the command line gives them.
SETTINGS = {"AGENT_SANDBOX": "sandbox", "AGENT_NETWORK": "network", "AGENT_SANDBOX_WRITABLE": "sandbox_writable",
            "AGENT_SESSIONS_DIR": "sessions_dir"}


def command(workspace: Path, program: str, args: list[str], settings: Settings) -> tuple[str, list[str]]:
    """(command, args) that run `program args` confined as `settings` say, through this very agent."""
    agent = [] if getattr(sys, "frozen", False) else [str(Path(__file__).resolve().parents[2] / "agent.py")]
    given = [f"{name}={getattr(settings, attr)}" for name, attr in SETTINGS.items() if getattr(settings, attr)]
    return sys.executable, [*agent, "sandbox-exec", *given, str(workspace), "--", program, *args]


def main(argv: list[str]) -> int:
    given = {}
    while argv and "=" in argv[0] and argv[0].split("=", 1)[0] in SETTINGS:
        name, _, value = argv.pop(0).partition("=")
        given[name] = value
    if len(argv) < 3 or argv[1] != "--":
        print("usage: deepseek-agent sandbox-exec [SETTING=VALUE …] WORKSPACE -- PROGRAM [ARGS…]", file=sys.stderr)
        return 2
    workspace, program = Path(argv[0]), argv[2:]
    try:
        confinement = Confinement.for_workspace(workspace, load_settings(overrides=given))
    except ConfigError as exc:
        print(f"sandbox-exec: {exc}", file=sys.stderr)
        return 2
    try:
        with confine(program, confinement) as launch:
            enter = launch.popen_kwargs.get("preexec_fn")
            if enter is not None:
                enter()  # this process takes the Landlock ruleset, and exec keeps it
            os.execvp(launch.argv[0], launch.argv)
    except OSError as exc:
        print(f"sandbox-exec: cannot run {program[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    return 0
