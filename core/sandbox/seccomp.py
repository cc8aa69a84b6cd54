"""A seccomp filter for confined commands: the system calls that reach past what Landlock holds.

Landlock (up to ABI 7) rules files; it cannot stop a command from connecting to a Unix socket of
the user's session (tmux, ssh-agent, gpg-agent, D-Bus, Docker: servers that act in the user's
name), nor from changing the limits, priority or affinity of a process it may not signal, nor from
setting inode flags and extended attributes. The filter refuses those:

- `socket(AF_UNIX, …)` (`socketpair` stays: it makes a connected pair and reaches no one), unless
  the user allowed a socket by name; io_uring, which can make sockets without `socket()`;
- `prlimit64`, `sched_setaffinity`, `sched_setscheduler`, `sched_setparam`, `sched_setattr` on
  another process than the caller (pid ≠ 0), `setpriority` and `ioprio_set` on another (who ≠ 0);
- `ptrace`, `process_vm_readv`/`writev`, `pidfd_getfd`;
- every `setxattr`/`removexattr` call, and the ioctls that set inode flags (`chattr`) or type into
  a terminal (TIOCSTI, TIOCLINUX). The kernel gives seccomp no path, so these are refused in the
  workspace too. The xattr calls fail with EOPNOTSUPP, what a filesystem without extended attributes
  answers: tools that copy permissions and ACLs (`cp -a`, `sed -i`, `tar --xattrs`) take that as
  "nothing to copy" and go on, where EPERM makes them fail.

Everything else refused fails with EPERM.

A classic BPF program, built in the parent; the child only calls `prctl` before exec (after
`PR_SET_NO_NEW_PRIVS`, which Landlock's entry already set). A system call of another architecture
than the agent's (32-bit `int 0x80`, x32) ends the process: the numbers below would not mean the
same there.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
from collections.abc import Callable
from dataclasses import dataclass

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_NR, _ARCH = 0, 4
_X32_BIT = 0x40000000
AF_UNIX = 1
# The ioctl requests refused: FS_IOC_SETFLAGS (64- and 32-bit), FS_IOC_FSSETXATTR, TIOCSTI, TIOCLINUX.
IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x5412, 0x541C)


@dataclass(frozen=True)
class Table:
    """An architecture's audit number and the numbers of the system calls the filter looks at."""

    audit_arch: int
    socket: int
    ioctl: int
    pid_first: tuple[int, ...]  # refused when the first argument (a pid) is not 0
    who_second: tuple[int, ...]  # refused when the second argument (a pid or group) is not 0
    refused: tuple[int, ...]
    xattrs: tuple[int, ...]  # refused as unsupported
    x32: bool = False


# io_uring_setup/enter/register, pidfd_getfd; setxattrat, removexattrat: the generic numbers, on both.
_NEW = (425, 426, 427, 438)
_NEW_XATTRS = (463, 466)
TABLES = {
    "x86_64": Table(0xC000003E, socket=41, ioctl=16, pid_first=(302, 203, 144, 142, 314), who_second=(141, 251),
                    refused=(101, 310, 311, *_NEW), xattrs=(188, 189, 190, 197, 198, 199, *_NEW_XATTRS), x32=True),
    "aarch64": Table(0xC00000B7, socket=198, ioctl=29, pid_first=(261, 122, 119, 118, 274), who_second=(140, 30),
                     refused=(117, 270, 271, *_NEW), xattrs=(5, 6, 7, 14, 15, 16, *_NEW_XATTRS)),
}
TABLES["amd64"] = TABLES["x86_64"]
TABLES["arm64"] = TABLES["aarch64"]


def table() -> Table | None:
    """The table for this machine; None where the filter has none (the probe says so)."""
    return TABLES.get(platform.machine().lower())


def program(tab: Table, unix_sockets: bool = False) -> bytes:
    """The BPF program, as the kernel reads `struct sock_filter[]`."""
    code: list[tuple[int, str | int, str | int, int]] = []  # (op, true target, false target, k)
    deny, allow, kill = "deny", "allow", "kill"

    def load(offset: int) -> None:
        code.append((_LD_W_ABS, 0, 0, offset))

    def jump_if(value: int, target: str, op: int = _JEQ_K) -> None:
        code.append((op, target, 0, value))

    def arg(n: int) -> int:
        return 16 + 8 * n  # the low half of a 64-bit argument (both architectures are little-endian)

    load(_ARCH)
    code.append((_JEQ_K, 0, kill, tab.audit_arch))
    load(_NR)
    if tab.x32:
        jump_if(_X32_BIT, kill, _JGE_K)
    if not unix_sockets:
        jump_if(tab.socket, "socket")
    for nr in tab.pid_first:
        jump_if(nr, "first")
    for nr in tab.who_second:
        jump_if(nr, "second")
    for nr in tab.refused:
        jump_if(nr, deny)
    for nr in tab.xattrs:
        jump_if(nr, "unsupported")
    jump_if(tab.ioctl, "ioctl")
    labels: dict[str, int] = {}
    code.append((_RET_K, 0, 0, _RET_ALLOW))
    labels["socket"] = len(code)
    load(arg(0))
    code.append((_JEQ_K, deny, allow, AF_UNIX))
    labels["first"] = len(code)
    load(arg(0))
    code.append((_JEQ_K, allow, deny, 0))
    labels["second"] = len(code)
    load(arg(1))
    code.append((_JEQ_K, allow, deny, 0))
    labels["ioctl"] = len(code)
    load(arg(1))
    for request in IOCTLS:
        jump_if(request, deny)
    labels[allow] = len(code)
    code.append((_RET_K, 0, 0, _RET_ALLOW))
    labels[deny] = len(code)
    code.append((_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    labels["unsupported"] = len(code)
    code.append((_RET_K, 0, 0, _RET_ERRNO | errno.EOPNOTSUPP))
    labels[kill] = len(code)
    code.append((_RET_K, 0, 0, _RET_KILL_PROCESS))
    out = bytearray()
    for at, (op, true, false, k) in enumerate(code):
        jt = labels[true] - at - 1 if isinstance(true, str) else true
        jf = labels[false] - at - 1 if isinstance(false, str) else false
        out += struct.pack("=HBBI", op, jt, jf, k)
    return bytes(out)


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def installer(libc: ctypes.CDLL, unix_sockets: bool = False) -> Callable[[], bool] | None:
    """The function the child calls (after no_new_privs) to take the filter; it returns False
    when the kernel refused it. None where this machine has no table."""
    tab = table()
    if tab is None:
        return None
    data = program(tab, unix_sockets)
    code = ctypes.create_string_buffer(data, len(data))
    prog = _Filter(len(data) // 8, ctypes.addressof(code))
    prctl, prog_ref = libc.prctl, ctypes.byref(prog)
    option, mode, zero = ctypes.c_int(_PR_SET_SECCOMP), ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.c_ulong(0)
    keep = (code, prog)  # the buffers must live as long as the function

    def install() -> bool:
        return prctl(option, mode, prog_ref, zero, zero) == 0 and keep is not None

    return install
