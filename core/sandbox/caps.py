"""Capabilities a confined command must not keep when the agent runs as root.

Root keeps CAP_PERFMON and CAP_SYS_ADMIN, and with them the kernel lets it read any process's
/proc/<pid>/environ whatever Landlock's ptrace rule says; CAP_MKNOD would let it make a disk's
device node in the workspace and write the disk through it; CAP_SYS_MODULE, CAP_SYS_BOOT and the
like act on the whole machine without touching a file. The child drops them (and clears its
ambient set) before exec; with no_new_privs it cannot regain them.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

_VERSION_3 = 0x20080522
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
NET_ADMIN, NET_RAW, SYS_MODULE, SYS_RAWIO, SYS_PTRACE = 12, 13, 16, 17, 19
SYS_ADMIN, SYS_BOOT, SYS_TIME, MKNOD, MAC_OVERRIDE, MAC_ADMIN, SYSLOG, PERFMON, BPF = (
    21, 22, 25, 27, 32, 33, 34, 38, 39)
SETPCAP = 8
DROPPED = (NET_ADMIN, SYS_MODULE, SYS_RAWIO, SYS_PTRACE, SYS_ADMIN, SYS_BOOT, SYS_TIME, MKNOD, MAC_OVERRIDE,
           MAC_ADMIN, SYSLOG, PERFMON, BPF)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def dropper(libc: ctypes.CDLL, network: bool) -> Callable[[], bool]:
    """A function for the child that drops the capabilities (NET_RAW too when the network is off:
    raw sockets go around Landlock's TCP rules). Built in the parent: the child only makes system
    calls. It returns False when a drop failed."""
    header, data = _Header(_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return lambda: True  # no capability interface: nothing to drop
    drop = DROPPED if network else (*DROPPED, NET_RAW)
    held = (data[0].effective | data[1].effective << 32) | (data[0].permitted | data[1].permitted << 32)
    if not any(held >> cap & 1 for cap in drop):
        return lambda: True  # an ordinary user: nothing to drop
    can_bound = bool((data[0].effective >> SETPCAP) & 1)
    for cap in drop:
        word, bit = divmod(cap, 32)
        for field in ("effective", "permitted", "inheritable"):
            setattr(data[word], field, getattr(data[word], field) & ~(1 << bit))
    capset, prctl = libc.capset, libc.prctl
    header_ref, data_ref = ctypes.byref(header), ctypes.byref(data)
    bounded = [ctypes.c_ulong(cap) for cap in drop] if can_bound else []
    capbset_drop, ambient = ctypes.c_int(_PR_CAPBSET_DROP), ctypes.c_int(_PR_CAP_AMBIENT)
    clear_all, zero = ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0)

    def drop_them() -> bool:
        ok = prctl(ambient, clear_all, zero, zero, zero) == 0
        for cap in bounded:
            ok = prctl(capbset_drop, cap, zero, zero, zero) == 0 and ok
        return capset(header_ref, data_ref) == 0 and ok

    return drop_them
