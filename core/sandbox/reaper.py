"""Descendants end with the session, even those that left their command's process group.

`setsid cmd &` or a double fork puts a process in a session of its own, out of reach of the
process-group kill that ends a command. Once the agent is a child subreaper, such orphans become
its children instead of init's. When the session closes, every adopted orphan is ended and
reaped, whatever it did to its environment, except the agent's own helpers (a clipboard server
the TUI started, serving the copied text): those were started with `helper_environment()`, which
carries a token made at random for this process. Commands never get the token and cannot read it
from a helper (its /proc entries are out of a confined command's reach), so no command can pass
for a helper; the agent's process id is handed to no one."""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 5  # ending one orphan can orphan its own children: they are adopted in turn
HELPER = "DEEPSEEK_AGENT_HELPER"  # in the environment of the agent's own helpers only
_TOKEN = secrets.token_hex(16)


def helper_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a helper of the agent's own that may outlive its call and must be
    left running when the session closes."""
    return {**(os.environ if environ is None else environ), HELPER: _TOKEN}


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(_PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) == 0


def adopted(keep_groups: frozenset[int] = frozenset()) -> list[int]:
    """This process's children in another session than its own that are not its helpers (they
    carry the token in the environment they started with) nor in `keep_groups`, or are dead (a
    zombie to reap)."""
    me, session = os.getpid(), os.getsid(0)
    mark = f"{HELPER}={_TOKEN}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rfind(")") + 2:].split()
            if int(fields[1]) != me or int(fields[3]) == session:
                continue
            if fields[0] != "Z" and int(fields[2]) in keep_groups:
                continue
        except (OSError, IndexError, ValueError):
            continue
        if fields[0] == "Z" or not _carries(entry, mark):
            found.append(int(entry.name))
    return found


def _carries(entry: Path, mark: bytes) -> bool:
    """Whether the process started with `mark`; one that hid its environment (not dumpable) does not."""
    try:
        return mark in (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def end_adopted(grace: float = 0.5, keep_groups: frozenset[int] = frozenset()) -> int:
    """SIGTERM the adopted descendants (and their process groups) but those in `keep_groups`,
    SIGKILL those still there after `grace` seconds, and reap them. Returns how many were ended."""
    if not sys.platform.startswith("linux"):
        return 0
    ended = 0
    for _ in range(_ROUNDS):
        pids = adopted(keep_groups)
        if not pids:
            break
        ended += len(pids)
        _signal_all(pids, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while (pids := [p for p in pids if not _reaped(p)]) and time.monotonic() < deadline:
            time.sleep(0.02)
        _signal_all(pids, signal.SIGKILL)
        for pid in pids:
            _reap(pid)
    return ended


def _signal_all(pids: list[int], sig: int) -> None:
    own_group = os.getpgid(0)
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != own_group:
                os.killpg(group, sig)
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reaped(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
