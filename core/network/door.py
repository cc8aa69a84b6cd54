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
(`wrapped`), make the door the same way and exec the command. The one-file exe has no other Python:
it runs them itself (`deepseek-agent network-door`, core/runtime/network_door.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.network.proxy import Proxy

_AF_INET, _SOCK_STREAM, _SOCK_DGRAM, _SOCK_CLOEXEC = 2, 1, 2, 0o2000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 1
_SOL_SOCKET, _SCM_RIGHTS = 1, 1
_WAIT_SECONDS = 10.0  # how long the agent waits for a bubblewrapped command's door

# Run inside bubblewrap before the command: ARGV is FD PORT COMMAND...
DOOR_COMMAND = "network-door"
DOOR_SCRIPT = (
    "import os,socket,sys\n"
    "fd,port=int(sys.argv[1]),int(sys.argv[2])\n"
    "door=socket.create_server(('127.0.0.1',port),backlog=128)\n"
    "channel=socket.socket(fileno=fd)\n"
    "socket.send_fds(channel,[b'd'],[door.fileno()])\n"
    "door.close();channel.close()\n"
    "os.execvp(sys.argv[3],sys.argv[3:])\n"
)


class _IfReq(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("flags", ctypes.c_short), ("pad", ctypes.c_char * 22)]


class _SockAddrIn(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("port", ctypes.c_uint16), ("addr", ctypes.c_uint32),
                ("zero", ctypes.c_char * 8)]


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _CMsg(ctypes.Structure):
    _fields_ = [("len", ctypes.c_size_t), ("level", ctypes.c_int), ("type", ctypes.c_int), ("fd", ctypes.c_int)]


class _MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.c_void_p),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


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
        """What the child calls inside its new network namespace (capabilities still held): bring
        `lo` up and, with a proxy, listen on 127.0.0.1 at its port and send that socket over.
        False when a step failed."""
        sock, ioctl, bind, listen, sendmsg, close = (libc.socket, libc.ioctl, libc.bind, libc.listen,
                                                     libc.sendmsg, libc.close)
        inet, stream = ctypes.c_int(_AF_INET), ctypes.c_int(_SOCK_STREAM | _SOCK_CLOEXEC)
        dgram, zero = ctypes.c_int(_SOCK_DGRAM | _SOCK_CLOEXEC), ctypes.c_int(0)
        request = _IfReq(b"lo", 0)
        get, set_ = ctypes.c_ulong(_SIOCGIFFLAGS), ctypes.c_ulong(_SIOCSIFFLAGS)
        request_ref = ctypes.byref(request)
        address = _SockAddrIn(_AF_INET, socket.htons(self.port), socket.htonl(0x7F000001), b"")
        address_ref, address_size = ctypes.byref(address), ctypes.c_uint32(ctypes.sizeof(address))
        byte = ctypes.create_string_buffer(b"d", 1)
        iov = _IoVec(ctypes.addressof(byte), 1)
        cmsg = _CMsg(ctypes.sizeof(_CMsg) - 4, _SOL_SOCKET, _SCM_RIGHTS, -1)
        header = _MsgHdr(None, 0, ctypes.addressof(iov), 1, ctypes.addressof(cmsg), ctypes.sizeof(cmsg), 0)
        header_ref, channel, backlog = ctypes.byref(header), ctypes.c_int(self.child_fd), ctypes.c_int(128)
        keep = (byte, iov, cmsg, header, request, address)  # the buffers must live as long as the function
        with_door = self.proxy is not None

        def step() -> bool:
            control = sock(inet, dgram, zero)
            if control < 0 or ioctl(control, get, request_ref) != 0:
                return False
            request.flags |= _IFF_UP
            up = ioctl(control, set_, request_ref) == 0
            close(control)
            if not up or not with_door:
                return up
            listener = sock(inet, stream, zero)
            if listener < 0:
                return False
            cmsg.fd = listener
            sent = (bind(listener, address_ref, address_size) == 0 and listen(listener, backlog) == 0
                    and sendmsg(channel, header_ref, zero) == 1)
            close(listener)
            return sent and keep is not None

        return step

    def wrapped(self, argv: list[str]) -> list[str]:
        """`argv` behind the few lines that make the door inside bubblewrap (its descriptor must be
        passed on: `child_fd`); `argv` as it is without a proxy."""
        if self.proxy is None:
            return argv
        given = [str(self.child_fd), str(self.port), *argv]
        if getattr(sys, "frozen", False):
            return [sys.executable, DOOR_COMMAND, *given]
        return [sys.executable, "-I", "-S", "-c", DOOR_SCRIPT, *given]

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
