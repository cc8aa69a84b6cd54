"""The system calls that make a command's door to the proxy (core/network/door.py), prepared ahead with
ctypes alone: the Landlock child runs them between fork and exec, where Python must not allocate,
and the one-file exe inside bubblewrap, where it can load no extension module but ctypes
(core/runtime/network_door.py)."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

_AF_INET, _SOCK_STREAM, _SOCK_DGRAM, _SOCK_CLOEXEC = 2, 1, 2, 0o2000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 1
_SOL_SOCKET, _SCM_RIGHTS = 1, 1
_LOOPBACK = 0x7F000001
# deepseek-agent's own command that makes the door inside bubblewrap (core/runtime/network_door.py)
DOOR_COMMAND = "network-door"


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


def _network_order(value: int, size: int) -> int:
    """`value` as the struct field holds it in network byte order (socket.htons without socket)."""
    return int.from_bytes(value.to_bytes(size, "big"), sys.byteorder)


def door_step(libc: ctypes.CDLL, channel_fd: int, port: int | None) -> Callable[[], bool]:
    """What a process calls inside a new network namespace: bring `lo` up where it is down (bubblewrap
    brings it up itself, and leaves no capability to) and, with a `port`, listen on 127.0.0.1 there
    and send that socket over `channel_fd`. False when a step failed."""
    sock, ioctl, bind, listen, sendmsg, close = (libc.socket, libc.ioctl, libc.bind, libc.listen,
                                                 libc.sendmsg, libc.close)
    inet, stream = ctypes.c_int(_AF_INET), ctypes.c_int(_SOCK_STREAM | _SOCK_CLOEXEC)
    dgram, zero = ctypes.c_int(_SOCK_DGRAM | _SOCK_CLOEXEC), ctypes.c_int(0)
    request = _IfReq(b"lo", 0)
    get, set_ = ctypes.c_ulong(_SIOCGIFFLAGS), ctypes.c_ulong(_SIOCSIFFLAGS)
    request_ref = ctypes.byref(request)
    address = _SockAddrIn(_AF_INET, _network_order(port or 0, 2), _network_order(_LOOPBACK, 4), b"")
    address_ref, address_size = ctypes.byref(address), ctypes.c_uint32(ctypes.sizeof(address))
    byte = ctypes.create_string_buffer(b"d", 1)
    iov = _IoVec(ctypes.addressof(byte), 1)
    cmsg = _CMsg(ctypes.sizeof(_CMsg) - 4, _SOL_SOCKET, _SCM_RIGHTS, -1)
    header = _MsgHdr(None, 0, ctypes.addressof(iov), 1, ctypes.addressof(cmsg), ctypes.sizeof(cmsg), 0)
    header_ref, channel, backlog = ctypes.byref(header), ctypes.c_int(channel_fd), ctypes.c_int(128)
    keep = (byte, iov, cmsg, header, request, address)  # the buffers must live as long as the function
    with_door = port is not None

    def step() -> bool:
        control = sock(inet, dgram, zero)
        if control < 0:
            return False
        up = ioctl(control, get, request_ref) == 0
        if up and not request.flags & _IFF_UP:
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
