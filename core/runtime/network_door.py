"""`deepseek-agent network-door FD PORT COMMAND…`: make the command's door to the proxy, then become
the command.

An entry point of the runtime, not a front end: no person runs it. Under bubblewrap a few lines of
Python make the door inside the sandbox before the command (core/network/door.py); the one-file exe
has no other Python, so `Door.wrapped` has it run them itself. `agent.py` routes its arguments here
before anything else is loaded (the sandbox lets the exe read only its own files) and prints the one
line this returns when the door or the command cannot be made."""

from __future__ import annotations

import sys

from core.network.door import DOOR_COMMAND, DOOR_SCRIPT

USAGE = f"usage: deepseek-agent {DOOR_COMMAND} FD PORT COMMAND [ARGS…]"


def open_door_then_exec(argv: list[str]) -> tuple[int, str]:
    """Run the door script on `argv`; returns only when it cannot: (the exit status, the line that
    says why)."""
    if len(argv) < 3 or not all(arg.isdigit() for arg in argv[:2]):
        return 2, USAGE
    sys.argv = [DOOR_COMMAND, *argv]
    try:
        exec(DOOR_SCRIPT, {"__name__": DOOR_COMMAND})
    except OSError as exc:
        return 127, f"{DOOR_COMMAND}: {argv[2]}: {exc.strerror or exc}"
    return 127, f"{DOOR_COMMAND}: {argv[2]} did not start"
