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
namespace's first process must be a child of the one that made it, so the child forks once more,
and that process (PID 1 there) forks the command: see `_pid_one`. Background jobs outlive their
command as they would outside a namespace, until the turn or the session ends them.

Everything is prepared in the parent; the child makes only system calls.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
_CLOSE_RANGE, _WNOHANG = 436, 1  # close_range: the same number on x86_64 and aarch64
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
# statvfs flags a remount must keep (the kernel locks them in a user namespace), as mount flags.
_KEPT = {os.ST_NOSUID: 2, os.ST_NODEV: 4, os.ST_NOEXEC: 8, os.ST_NOATIME: 1024, os.ST_NODIRATIME: 2048,
         os.ST_RELATIME: 1 << 21} if hasattr(os, "ST_NOSUID") else {}
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_O_WRONLY = 1
SHM, PTS, PTMX, PROC = Path("/dev/shm"), Path("/dev/pts"), Path("/dev/ptmx"), Path("/proc")


@lru_cache(maxsize=4)
def available(own_pids: bool = False, own_net: bool = False) -> bool:
    """Whether a child of this process can make a mount namespace (and a tmpfs in it) here; with
    `own_pids`, a PID namespace with a fresh /proc as well; with `own_net`, a network namespace."""
    if not hasattr(os, "getuid") or not SHM.is_dir():
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    make = binder(libc, (), (), ctypes.c_int(0), own_pids, (lambda: True) if own_net else None)

    def must() -> None:
        if not make():
            raise OSError("no mount namespace")

    try:
        return subprocess.run(["true"], preexec_fn=must, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def binder(libc: ctypes.CDLL, protected: tuple[Path, ...], pinned: tuple[Path, ...],
           own_pts: ctypes.c_int, own_pids: bool = False,
           own_net: Callable[[], bool] | None = None) -> Callable[[], bool]:
    """The function the child calls first (before dropping capabilities): in a namespace of its
    own it mounts an empty /dev/shm, binds each `pinned` folder over itself (a mount point cannot
    be renamed) and `protected` read-only. It returns False when the namespace or a mount failed.
    With `own_pids` it forks into a PID namespace first (see the module) and mounts a fresh /proc.
    A devpts of its own is tried last; `own_pts` is set to 1 when it was mounted. With `own_net`
    the namespaces include a network namespace, and `own_net` is called in it as soon as the
    child holds its capabilities there (`core.network.door`)."""
    paths = [p for p in protected if p.exists() and not p.is_symlink()]
    as_root = os.geteuid() == 0
    uid, gid = os.getuid(), os.getgid()
    unshare, mount, open_, write, close = libc.unshare, libc.mount, libc.open, libc.write, libc.close
    flags = ctypes.c_int((_CLONE_NEWNS if as_root else _CLONE_NEWNS | _CLONE_NEWUSER)
                         | (_CLONE_NEWPID if own_pids else 0) | (_CLONE_NEWNET if own_net else 0))
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
        if own_net is not None and not own_net():
            return False
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


def _end_escaped() -> None:
    """In the namespace's init, once the command ended: SIGKILL what left the command's process
    group (`setsid`, a double fork into a session of its own). The command's own background jobs
    (`server &`, same group) run on; what escaped them would otherwise outlive the turn unseen, as
    the agent cannot adopt what lives in the namespace."""
    own = os.getpgid(0)
    for entry in os.listdir(PROC):
        if not entry.isdigit() or entry == "1":
            continue
        try:
            with open(PROC / entry / "stat", "rb") as handle:
                stat = handle.read()
            if int(stat[stat.rfind(b")") + 2:].split()[2]) != own:
                os.kill(int(entry), 9)
        except (OSError, ValueError, IndexError):
            continue


def _pid_one(libc: ctypes.CDLL) -> Callable[[], bool]:
    """After `unshare(CLONE_NEWPID)`: fork twice. The command runs as PID 2 of the new namespace;
    PID 1 is a minimal init that holds no descriptor of the command's, reaps whatever ends in the
    namespace, and passes the command's exit status back to the first child, which waits for it
    and exits with it (Popen sees the command end). Where nothing of the command runs on, the init
    exits with the status itself; where a background job runs on (`server &`), the init writes the
    status to a pipe and stays until the last job ends, so jobs live on after their command, as
    outside a namespace (they end with the turn or the session: `core.sandbox.reaper`).
    False when a fork failed."""
    fork, waitpid, exit_, syscall = libc.fork, libc.waitpid, libc._exit, libc.syscall
    pipe, read, write, close = libc.pipe, libc.read, libc.write, libc.close
    ends = (ctypes.c_int * 2)()
    status, byte = ctypes.c_int(0), ctypes.c_ubyte(0)
    status_ref, byte_ref, one = ctypes.byref(status), ctypes.byref(byte), ctypes.c_size_t(1)
    block, no_hang, no_flags = ctypes.c_int(0), ctypes.c_int(_WNOHANG), ctypes.c_int(0)
    close_range, anyone, last = ctypes.c_long(_CLOSE_RANGE), ctypes.c_int(-1), ctypes.c_uint(0xFFFFFFFF)

    def code_of(raw: int) -> int:
        return (raw >> 8) & 0xFF if raw & 0x7F == 0 else 128 + (raw & 0x7F)

    def keep_only(fd: int) -> None:
        """Close every descriptor but `fd`."""
        if fd > 0:
            syscall(close_range, ctypes.c_uint(0), ctypes.c_uint(fd - 1), no_flags)
        syscall(close_range, ctypes.c_uint(fd + 1), last, no_flags)

    def init(command: int, report: int) -> None:
        keep_only(report)
        while (got := waitpid(anyone, status_ref, block)) != command:
            if got < 0:
                exit_(ctypes.c_int(127))
        byte.value = code_of(status.value)
        for _ in range(5):  # ending one may have let it start another first
            _end_escaped()
            while waitpid(anyone, status_ref, no_hang) > 0:
                pass  # reap what ended with the command
        if waitpid(anyone, status_ref, no_hang) < 0:  # nothing runs on: the init's status is the command's
            exit_(ctypes.c_int(byte.value))
        write(ctypes.c_int(report), byte_ref, one)
        close(ctypes.c_int(report))
        while waitpid(anyone, status_ref, block) > 0:
            pass
        exit_(ctypes.c_int(0))

    def split() -> bool:
        if pipe(ends) != 0:
            return False
        first = fork()
        if first < 0:
            return False
        if first == 0:  # PID 1 of the namespace
            command = fork()
            if command < 0:
                exit_(ctypes.c_int(127))
            if command == 0:  # PID 2: goes on to become the command
                close(ctypes.c_int(ends[0]))
                close(ctypes.c_int(ends[1]))
                return True
            init(command, ends[1])
        keep_only(ends[0])  # Popen waits for its error pipe to close
        if read(ctypes.c_int(ends[0]), byte_ref, one) == 1:
            exit_(ctypes.c_int(byte.value))
        while waitpid(ctypes.c_int(first), status_ref, block) != first:
            pass
        exit_(ctypes.c_int(code_of(status.value)))
        return False  # not reached

    return split
