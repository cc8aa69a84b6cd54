"""The proxy's door into a command's own network namespace.

A command in a fresh network namespace has a loopback of its own and nothing else: no route out,
no DNS, and not the host's 127.0.0.1 where the proxy listens. The door is a listening socket
made inside the namespace, on its 127.0.0.1 at the proxy's port, and handed to the agent over a
socket pair (SCM_RIGHTS): the agent accepts its connections and serves them as the proxy's own
(`Proxy.serve_from`). No process of ours runs in the namespace and no socket file is bound in, so
the command's seccomp filter (no `socket(AF_UNIX)`) and its Landlock rules need no exception.

Under Landlock the child makes the door itself, in system calls prepared here (`child_step`),
right after it entered its namespaces and brought `lo` up, before it drops its capabilities.
Under bubblewrap, which brings `lo` up itself, a few lines of Python run first inside the sandbox
(`wrapped`), make the door the same way and exec the command. The one-file exe has no other Python
and can load no extension module there but ctypes: it makes the door with the Landlock child's
system calls (`deepseek-agent network-door`, core/runtime/network_door.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.network.door_calls import DOOR_COMMAND, door_step

if TYPE_CHECKING:
    from core.network.proxy import Proxy

_WAIT_SECONDS = 10.0  # how long the agent waits for a bubblewrapped command's door

# Run inside bubblewrap before the command: ARGV is FD PORT COMMAND... Python ignores SIGPIPE and
# SIGXFSZ, and exec would hand that on: `yes | head` would never end.
_DOOR_SCRIPT = (
    "import os,signal,socket,sys\n"
    "[signal.signal(s,signal.SIG_DFL) for s in (signal.SIGPIPE,signal.SIGXFSZ)]\n"
    "fd,port=int(sys.argv[1]),int(sys.argv[2])\n"
    "door=socket.create_server(('127.0.0.1',port),backlog=128)\n"
    "channel=socket.socket(fileno=fd)\n"
    "socket.send_fds(channel,[b'd'],[door.fileno()])\n"
    "door.close();channel.close()\n"
    "os.execvp(sys.argv[3],sys.argv[3:])\n"
)


class Door:
    """One command's way to the proxy: make it before the command starts, `open()` once it has
    started, `close()` when it ended (the namespace lives as long as the door's socket)."""

    def __init__(self, proxy: Proxy | None) -> None:
        self.proxy = proxy  # None: the namespace gets no door, so the command has no network at all
        self.port = proxy.port if proxy is not None else 0
        self._ours, self._theirs = socket.socketpair() if proxy is not None else (None, None)
        self._listener: socket.socket | None = None

    @property
    def child_fd(self) -> int:
        """The descriptor the child sends the door on (-1 without a proxy)."""
        return self._theirs.fileno() if self._theirs is not None else -1

    def child_step(self, libc: ctypes.CDLL) -> Callable[[], bool]:
        """What the child calls inside its new network namespace (capabilities still held): `lo` up
        and, with a proxy, the door sent over (`door_step`). False when a step failed."""
        return door_step(libc, self.child_fd, self.port if self.proxy is not None else None)

    def wrapped(self, argv: list[str]) -> list[str]:
        """`argv` behind the few lines that make the door inside bubblewrap (its descriptor must be
        passed on: `child_fd`); `argv` as it is without a proxy."""
        if self.proxy is None:
            return argv
        given = [str(self.child_fd), str(self.port), *argv]
        if getattr(sys, "frozen", False):
            return [sys.executable, DOOR_COMMAND, *given]
        return [sys.executable, "-I", "-S", "-c", _DOOR_SCRIPT, *given]

    def environment(self) -> dict[str, str]:
        """What `wrapped`'s first program needs in its environment, all of which the exe removes
        before the command runs. The exe started by its own process counts itself a sub-process
        and expects the runtime as the parent left it; inside the sandbox it starts as a program of
        its own (PyInstaller's documented reset). Unprivileged bubblewrap maps only the user, so
        root's folders look like nobody's there and the bootloader could not check the runtime's
        path again: it is told the root this agent was started from (hooks/bootloader)."""
        if self.proxy is None or not getattr(sys, "frozen", False):
            return {}
        from core.frozen_imports import started_from_runtime

        home = started_from_runtime()
        checked = {"DEEPSEEK_AGENT_RUNTIME_CHECKED": os.path.dirname(home)} if home else {}
        return {"PYINSTALLER_RESET_ENVIRONMENT": "1", **checked}

    def open(self, wait: bool = False) -> bool:
        """Take the door the child made and serve it; `wait` for one made after the command
        started (bubblewrap). False when there is none (no namespace, or no proxy)."""
        if self._ours is None or self._theirs is None or self.proxy is None:
            return False
        self._theirs.close()
        self._ours.settimeout(_WAIT_SECONDS if wait else 0)
        try:
            _, fds, _, _ = socket.recv_fds(self._ours, 1, 1)
        except OSError:
            return False
        if not fds:
            return False
        self._listener = socket.socket(fileno=fds[0])
        self.proxy.serve_from(self._listener)
        return True

    def close(self) -> None:
        for end in (self._theirs, self._ours):
            if end is not None:
                end.close()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the thread that accepts on it
            self._listener.close()
