"""Bubblewrap, where the kernel has no Landlock: the command sees a read-only view of "/" with the
writable folders bound back, the home folders and the workspace's parent as empty ones with only
what it may read bound back read-only, the secret places covered by empty ones, the protected files of the
workspace bound read-only, an empty, read-only /tmp and /var/tmp (the session's temp folder bound
inside; a write elsewhere there fails as a write outside does, rather than vanish with the
command), a fresh /dev (no terminal of the user's), PID and IPC namespaces of its own (it
cannot see or signal the agent, nor read its /proc entries, nor reach the user's System V IPC),
a session of its own (no TIOCSTI into a terminal), and the same seccomp filter as under Landlock."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from core.network.door import Door
from core.sandbox import seccomp
from core.sandbox.policy import TEMP_FOLDERS, Policy


def path() -> str | None:
    return shutil.which("bwrap")


@lru_cache(maxsize=1)
def works() -> bool:
    """Whether bwrap can make its namespaces here (a container may forbid user namespaces)."""
    program = path()
    if program is None:
        return False
    try:
        done = subprocess.run([program, "--ro-bind", "/", "/", "--unshare-pid", "--", "true"],
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@contextmanager
def wrapped(argv: list[str], policy: Policy, door: Door | None = None) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """(bwrap's argv, the descriptors it must inherit) for `argv` under `policy`: the seccomp
    filter goes to bwrap through a pipe, closed when the block ends. On the proxied network the
    command runs behind `door` (`core.network.door`), in a network namespace of its own."""
    if door is not None:
        argv = door.wrapped(argv)
    passed = (door.child_fd,) if door is not None and door.child_fd >= 0 else ()
    environment = door.environment() if door is not None else {}
    tab = seccomp.table()
    if tab is None:
        yield wrap(argv, policy, environment=environment), passed
        return
    read, write = os.pipe()
    try:
        os.write(write, seccomp.program(tab, unix_sockets=bool(policy.sockets)))  # far below a pipe's buffer
        os.close(write)
        write = -1
        yield wrap(argv, policy, read, environment), (read, *passed)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def wrap(argv: list[str], policy: Policy, filter_fd: int | None = None,
         environment: dict[str, str] | None = None) -> list[str]:
    """`argv` run inside bwrap under `policy`, with `environment` added to what it inherits.
    Background jobs end with the command: bwrap's PID namespace ends when its first process does."""
    args = [path() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
            "--unshare-ipc", "--new-session", "--die-with-parent"]
    if not policy.network or policy.proxied:
        args.append("--unshare-net")
    temp = [Path(t) for t in TEMP_FOLDERS if Path(t).is_dir() and not Path(t).is_relative_to("/dev")]
    for folder in temp:
        args += ["--tmpfs", str(folder)]
    hidden = sorted((h for h in policy.hidden if not any(h == t or h.is_relative_to(t) for t in temp)),
                    key=lambda h: len(h.parts))  # an outer one first: a later tmpfs would cover an inner one
    for folder in hidden:
        args += ["--tmpfs", str(folder)]
    for allowed in policy.readable:
        args += ["--ro-bind", str(allowed), str(allowed)]
    for folder in policy.writable:
        if not folder.is_relative_to("/dev") and not folder.is_relative_to("/proc"):
            args += ["--bind", str(folder), str(folder)]
    for secret in policy.denied:
        if secret.is_relative_to("/dev"):
            continue  # the fresh /dev has no terminal of the user's
        if secret.is_dir():
            args += ["--tmpfs", str(secret), "--remount-ro", str(secret)]
        else:
            args += ["--ro-bind", "/dev/null", str(secret)]
    for allowed in policy.sockets:
        args += ["--bind", str(allowed), str(allowed)]
    for folder in policy.pinned:
        args += ["--bind", str(folder), str(folder)]
    for kept in policy.protected:
        if kept.exists():
            args += ["--ro-bind", str(kept), str(kept)]
    for folder in [*temp, *hidden]:  # after the binds, which may need mount points made in it
        args += ["--remount-ro", str(folder)]
    if filter_fd is not None:
        args += ["--seccomp", str(filter_fd)]
    for name, value in (environment or {}).items():
        args += ["--setenv", name, value]
    return [*args, "--", *argv]
