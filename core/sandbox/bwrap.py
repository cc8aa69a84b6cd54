"""Bubblewrap, where the kernel has no Landlock: the command sees a read-only view of "/" with the
writable folders bound back, the secret places covered by empty ones, and a PID namespace of its
own (so it cannot see or signal the agent, nor read its /proc entries)."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache

from core.sandbox.policy import Policy


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


def wrap(argv: list[str], policy: Policy) -> list[str]:
    """`argv` run inside bwrap under `policy`. Background jobs end with the command: bwrap's PID
    namespace ends when its first process does."""
    args = [path() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
            "--die-with-parent"]
    if not policy.network:
        args.append("--unshare-net")
    for folder in policy.writable:
        if not folder.is_relative_to("/dev") and not folder.is_relative_to("/proc"):
            args += ["--bind", str(folder), str(folder)]
    for secret in policy.denied:
        if secret.is_dir():
            args += ["--tmpfs", str(secret), "--remount-ro", str(secret)]
        else:
            args += ["--ro-bind", "/dev/null", str(secret)]
    return [*args, "--", *argv]
