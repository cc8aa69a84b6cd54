"""`deepseek-agent sandbox-exec [SETTING=VALUE …] WORKSPACE -- PROGRAM ARGS…`: become PROGRAM inside
the sandbox.

An entry point of the runtime, not a front end: no person runs it. The core starts it itself
(`core.sandbox.trampoline.command` writes its command line) so that MCP stdio servers, which the MCP
SDK starts without a `preexec_fn`, run confined. `agent.py` only routes its arguments here, before
any settings are read, and prints the one line this returns when the program cannot start."""

from __future__ import annotations

from pathlib import Path

from core.sandbox.trampoline import SETTINGS, CannotStart, become

USAGE = "usage: deepseek-agent sandbox-exec [SETTING=VALUE …] WORKSPACE -- PROGRAM [ARGS…]"


def exec_confined(argv: list[str]) -> tuple[int, str]:
    """Replace this process with the program `argv` names, confined; returns only when it cannot:
    (the exit status, the line that says why)."""
    given = {}
    while argv and "=" in argv[0] and argv[0].split("=", 1)[0] in SETTINGS:
        name, _, value = argv.pop(0).partition("=")
        given[name] = value
    if len(argv) < 3 or argv[1] != "--":
        return 2, USAGE
    try:
        become(Path(argv[0]), argv[2:], given)
    except CannotStart as exc:
        return 127, f"sandbox-exec: {exc}"
    return 0, ""
