"""Moving secrets out of the agent's own environment once its settings are read.

A child command cannot get them through its own environment (`core.tools.shell.child_env` scrubs
it), but it could read its parent's: `/proc/$PPID/environ` and `ps eww` show the block the kernel
copied onto the agent's stack at exec, and on Windows another process can read the agent's
environment block. Python's `os.environ.pop` does not touch that first block on Linux (glibc only
drops its pointer to the entry), so the entries are also overwritten in place, with NUL bytes, in
the range the kernel reads for `/proc/<pid>/environ`.

The values stay in memory only, and every redactor made afterwards recognises them
(`core.secrets.remember_hidden`).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from core.secrets import EnvPolicy, remember_hidden

# Variables the agent's own HTTP client reads (it honours the user's proxy): they leave the block
# children can read, but stay in `os.environ`, which is private memory (children get a scrubbed copy).
_KEPT_IN_PROCESS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@dataclass
class HiddenEnvironment:
    """What `hide_secret_environment` moved, by name; `block_cleared` says whether the block the
    kernel shows as /proc/<pid>/environ was overwritten too (Linux only)."""

    values: dict[str, str] = field(default_factory=dict)
    block_cleared: bool = False


_hidden = HiddenEnvironment()


def secret_names(environ: Mapping[str, str], policy: EnvPolicy) -> list[str]:
    """The variables a child would not get: the same test, so what stays visible is what children
    receive anyway (AGENT_ENV_KEEP names a variable the user hands to commands on purpose)."""
    return [name for name, value in environ.items() if not policy.allows(name, value)]


def hide_secret_environment(keep: str = "", drop: str = "") -> HiddenEnvironment:
    """Remove every secret variable from this process's environment, where children could read it;
    `keep` and `drop` are the user's AGENT_ENV_KEEP and AGENT_ENV_DROP."""
    policy = EnvPolicy.parse(keep, drop)
    names = secret_names(os.environ, policy)
    for name in names:
        value = os.environ[name]
        _hidden.values[name] = value
        if name.upper() in _KEPT_IN_PROCESS:
            os.environ[name] = value  # a fresh copy on the heap: the C environment no longer points into the block
        else:
            del os.environ[name]
        if sys.platform == "win32" and name.upper() not in _KEPT_IN_PROCESS:
            _remove_from_windows_block(name)
    remember_hidden(_hidden.values.values())
    if sys.platform.startswith("linux") and names:
        _hidden.block_cleared = clear_linux_block(set(names))
    return _hidden


def clear_linux_block(names: set[str]) -> bool:
    """Overwrite the entries named `names` in the environment block that `/proc/self/environ` shows.

    The kernel reads that range (mm->env_start..env_end, fields 50 and 51 of /proc/self/stat) at
    every read, so what is written there is what another process sees. Nothing in this process
    points into the cleared entries any more: `os.environ` was changed first (unsetenv or a copy).
    False when the range cannot be found or does not hold the entries the kernel lists."""
    bounds = _environ_bounds()
    if bounds is None:
        return False
    start, end = bounds
    try:
        with open("/proc/self/environ", "rb") as block_file:
            block = block_file.read()
    except OSError:
        return False
    if len(block) != end - start or ctypes.string_at(start, end - start) != block:
        return False  # not the memory the kernel shows: change nothing
    offset = 0
    for entry in block.split(b"\0"):
        name = entry.split(b"=", 1)[0].decode("utf-8", "surrogateescape")
        if entry and name in names:
            ctypes.memset(start + offset, 0, len(entry))
        offset += len(entry) + 1
    return True


def _environ_bounds() -> tuple[int, int] | None:
    """env_start and env_end from /proc/self/stat (after the command name, which may hold spaces)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # fields 50 and 51, counted from 1 with pid and comm
    except (OSError, IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def _remove_from_windows_block(name: str) -> None:
    """Windows children and readers of the process see the block SetEnvironmentVariableW keeps."""
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.SetEnvironmentVariableW.argtypes = [ctypes.c_wchar_p, ctypes.c_wchar_p]
    kernel32.SetEnvironmentVariableW(name, None)
