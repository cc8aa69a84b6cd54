"""`deepseek-agent network-door FD PORT COMMAND…`: make the command's door to the proxy, then become
the command.

An entry point of the runtime, not a front end: no person runs it. Under bubblewrap the door is made
inside the sandbox before the command (core/network/door.py); the one-file exe has no other Python,
so `Door.wrapped` has it make the door itself, with the system calls the Landlock child uses
(core/network/door_calls.py): inside the sandbox the exe can load no extension module but ctypes.
`agent.py` routes its arguments here before anything else is loaded and prints the one line this
returns when the door or the command cannot be made."""

from __future__ import annotations

import ctypes
import os
import signal

from core.network.door_calls import DOOR_COMMAND, door_step

USAGE = f"usage: deepseek-agent {DOOR_COMMAND} FD PORT COMMAND [ARGS…]"


def open_door_then_exec(argv: list[str]) -> tuple[int, str]:
    """Make the door, then exec the command; returns only when it cannot: (the exit status, the line
    that says why)."""
    if len(argv) < 3 or not all(arg.isascii() and arg.isdigit() for arg in argv[:2]) or int(argv[1]) > 65535:
        return 2, USAGE
    channel, port = int(argv[0]), int(argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    if not door_step(libc, channel, port)():
        return 127, f"{DOOR_COMMAND}: no door to the proxy: {os.strerror(ctypes.get_errno())}"
    for ignored in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them, and exec would hand that on
        signal.signal(ignored, signal.SIG_DFL)
    try:
        os.close(channel)
        os.execvp(argv[2], argv[2:])
    except OSError as exc:  # as a shell says it: 126 found but not runnable, 127 not found
        return 126 if isinstance(exc, PermissionError) else 127, f"{DOOR_COMMAND}: {argv[2]}: {exc.strerror or exc}"
