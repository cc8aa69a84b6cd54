"""Read-only binds of the workspace's protected files, and an empty /dev/shm, in a mount namespace
of the command's own.

Landlock only allows, and git needs `.git` writable, so under Landlock the protected files
(`core.sandbox.policy.PROTECTED`) are held by a mount namespace where the kernel lets the agent
make one: as root directly, otherwise inside a user namespace that maps the user to itself (the
command still sees its own uid). Each existing protected path is bound over itself read-only; the
command loses CAP_SYS_ADMIN (root) or never had it outside its namespace, and a namespace it makes
itself inherits the binds locked, so it cannot undo them. Where no namespace can be made the child
goes on without it, and `core.sandbox.protected` puts back what a command changed.

/dev/shm is shared memory of every process of the user; POSIX semaphores live there, so Python's
multiprocessing needs it writable. In a namespace the command gets an empty tmpfs of its own
there, which Landlock then lets it write (a rule on the mount point covers what is mounted on it);
without one, /dev/shm stays read-only. Likewise a new devpts instance on /dev/pts (its own ptmx
bound on /dev/ptmx) gives programs that make a pseudo-terminal (`script`, pexpect) their own, where
none of the user's terminals exists.

Where the kernel allows it the command also gets a PID namespace with a fresh /proc: `ps -eo args`
and /proc/*/cmdline show only its own processes, not another program's `--password=…`. The new
namespace's first process must be a child of the one that made it, so the child forks once more:
the command runs in the grandchild (PID 1 there, killed when its parent dies), and the child only
waits for it, holding no descriptor, and exits with its status. As under bubblewrap, background
jobs end with the command: when PID 1 of a namespace exits, the kernel ends the rest.

Everything is prepared in the parent; the child makes only system calls.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
_CLOSE_RANGE, _PR_SET_PDEATHSIG, _SIGKILL = 436, 1, 9  # close_range: the same number on x86_64 and aarch64
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
# statvfs flags a remount must keep (the kernel locks them in a user namespace), as mount flags.
_KEPT = {os.ST_NOSUID: 2, os.ST_NODEV: 4, os.ST_NOEXEC: 8, os.ST_NOATIME: 1024, os.ST_NODIRATIME: 2048,
         os.ST_RELATIME: 1 << 21} if hasattr(os, "ST_NOSUID") else {}
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_O_WRONLY = 1
SHM, PTS, PTMX, PROC = Path("/dev/shm"), Path("/dev/pts"), Path("/dev/ptmx"), Path("/proc")


@lru_cache(maxsize=2)
def available(own_pids: bool = False) -> bool:
    """Whether a child of this process can make a mount namespace (and a tmpfs in it) here; with
    `own_pids`, a PID namespace with a fresh /proc as well."""
    if not hasattr(os, "getuid") or not SHM.is_dir():
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    make = binder(libc, (), (), ctypes.c_int(0), own_pids)

    def must() -> None:
        if not make():
            raise OSError("no mount namespace")

    try:
        return subprocess.run(["true"], preexec_fn=must, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def binder(libc: ctypes.CDLL, protected: tuple[Path, ...], pinned: tuple[Path, ...],
           own_pts: ctypes.c_int, own_pids: bool = False) -> Callable[[], bool]:
    """The function the child calls first (before dropping capabilities): in a namespace of its
    own it mounts an empty /dev/shm, binds each `pinned` folder over itself (a mount point cannot
    be renamed) and `protected` read-only. It returns False when the namespace or a mount failed.
    With `own_pids` it forks into a PID namespace first (see the module) and mounts a fresh /proc.
    A devpts of its own is tried last; `own_pts` is set to 1 when it was mounted."""
    paths = [p for p in protected if p.exists() and not p.is_symlink()]
    as_root = os.geteuid() == 0
    uid, gid = os.getuid(), os.getgid()
    unshare, mount, open_, write, close = libc.unshare, libc.mount, libc.open, libc.write, libc.close
    flags = ctypes.c_int((_CLONE_NEWNS if as_root else _CLONE_NEWNS | _CLONE_NEWUSER)
                         | (_CLONE_NEWPID if own_pids else 0))
    become_pid_one = _pid_one(libc) if own_pids else (lambda: True)
    proc_type, proc = ctypes.c_char_p(b"proc"), ctypes.c_char_p(os.fsencode(PROC))
    proc_flags = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    maps = [(ctypes.c_char_p(b"/proc/self/setgroups"), b"deny"),
            (ctypes.c_char_p(b"/proc/self/uid_map"), f"{uid} {uid} 1".encode()),
            (ctypes.c_char_p(b"/proc/self/gid_map"), f"{gid} {gid} 1".encode())]
    maps_c = [(name, ctypes.c_char_p(data), ctypes.c_size_t(len(data))) for name, data in maps]
    root, none = ctypes.c_char_p(b"/"), ctypes.c_char_p(None)
    private = ctypes.c_ulong(_MS_REC | _MS_PRIVATE)
    binds = [(ctypes.c_char_p(os.fsencode(p)), ctypes.c_ulong(_MS_BIND), None) for p in pinned]
    for path in paths:
        kept = 0
        try:
            found = os.statvfs(path).f_flag
            kept = sum(flag for st, flag in _KEPT.items() if found & st)
        except OSError:
            pass
        raw = ctypes.c_char_p(os.fsencode(path))
        binds.append((raw, ctypes.c_ulong(_MS_BIND), ctypes.c_ulong(_MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)))
    wronly = ctypes.c_int(_O_WRONLY)
    tmpfs, shm = ctypes.c_char_p(b"tmpfs"), ctypes.c_char_p(os.fsencode(SHM))
    shm_flags, shm_mode = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV), ctypes.c_char_p(b"mode=1777")
    devpts, pts, ptmx = ctypes.c_char_p(b"devpts"), ctypes.c_char_p(os.fsencode(PTS)), ctypes.c_char_p(b"/dev/ptmx")
    pts_ptmx, pts_flags = ctypes.c_char_p(os.fsencode(PTS / "ptmx")), ctypes.c_ulong(_MS_NOSUID | _MS_NOEXEC)
    pts_options, bind_only = ctypes.c_char_p(b"newinstance,ptmxmode=0666,mode=0620"), ctypes.c_ulong(_MS_BIND)

    def bind() -> bool:
        if unshare(flags) != 0:
            return False
        if not as_root:
            for name, data, size in maps_c:
                fd = open_(name, wronly)
                if fd < 0 or write(fd, data, size) < 0:
                    return False
                close(fd)
        if not become_pid_one():
            return False
        if mount(none, root, none, private, none) != 0 or mount(tmpfs, shm, tmpfs, shm_flags, shm_mode) != 0:
            return False
        if own_pids and mount(proc_type, proc, proc_type, proc_flags, none) != 0:
            return False
        ok = True
        for path, bind_flags, remount_flags in binds:
            ok = mount(path, path, none, bind_flags, none) == 0 and ok
            if remount_flags is not None:
                ok = mount(none, path, none, remount_flags, none) == 0 and ok
        if ok and mount(devpts, pts, devpts, pts_flags, pts_options) == 0:
            if mount(pts_ptmx, ptmx, none, bind_only, none) == 0:
                own_pts.value = 1
            else:
                return False  # the user's terminals are hidden, but /dev/ptmx would make one among them
        return ok

    return bind


def _pid_one(libc: ctypes.CDLL) -> Callable[[], bool]:
    """After `unshare(CLONE_NEWPID)`: fork; the child goes on as PID 1 of the new namespace (killed
    when its parent dies), the parent closes every descriptor (Popen waits for its error pipe to
    close) and exits with the child's status once it ends. False when the fork failed."""
    fork, waitpid, exit_, syscall, prctl = libc.fork, libc.waitpid, libc._exit, libc.syscall, libc.prctl
    status = ctypes.c_int(0)
    status_ref, zero, no_flags = ctypes.byref(status), ctypes.c_int(0), ctypes.c_int(0)
    close_range, first, last = ctypes.c_long(_CLOSE_RANGE), ctypes.c_uint(0), ctypes.c_uint(0xFFFFFFFF)
    pdeathsig, kill, unused = ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(_SIGKILL), ctypes.c_ulong(0)

    def split() -> bool:
        pid = fork()
        if pid < 0:
            return False
        if pid == 0:
            return prctl(pdeathsig, kill, unused, unused, unused) == 0
        syscall(close_range, first, last, no_flags)
        while waitpid(ctypes.c_int(pid), status_ref, zero) != pid:
            pass
        code = status.value
        exit_(ctypes.c_int((code >> 8) & 0xFF if code & 0x7F == 0 else 128 + (code & 0x7F)))
        return False  # not reached

    return split
