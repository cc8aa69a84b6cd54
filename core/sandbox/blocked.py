"""Whether a confined command failed because the sandbox refused it, read from its output.

A denial shows as "Permission denied", "Operation not permitted" or (under bubblewrap) "Read-only
file system" next to a path. It is the sandbox's doing when that path is one the policy keeps
from the command: outside the writable folders, or a secret place. A denial inside the workspace
is the file's own permissions, and is left alone."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.sandbox.policy import Policy

_DENIAL = re.compile(r"permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b"
                     r"|\bEROFS\b", re.IGNORECASE)
_QUOTED = re.compile(r"""['"‘’`“]([^'"‘’`“”\n]{1,4096})['"‘’“”]""")
_BARE = re.compile(r"(?:^|[\s:(=])((?:~|\.{1,2})?/[^\s:'\"),]*|\.{1,2}/[^\s:'\"),]*)")
_SIGNAL = re.compile(r"\bkill\b", re.IGNORECASE)
_NETWORK = re.compile(r"connect|bind|socket|network|urlopen|ECONNREFUSED|Failed to connect", re.IGNORECASE)
MAX_SHOWN = 5


@dataclass(frozen=True)
class Blocked:
    """What the sandbox kept the command from: paths it could not write or read, or a kind of
    action (signals to outside processes, network)."""

    paths: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = []
        if self.paths:
            shown = ", ".join(self.paths[:MAX_SHOWN]) + (" …" if len(self.paths) > MAX_SHOWN else "")
            parts.append(f"access to {shown}")
        parts.extend(self.actions)
        return " and ".join(parts)


def sandbox_denial(output: str, exit_code: int | None, policy: Policy, cwd: Path | None = None) -> Blocked | None:
    """The sandbox's refusals in a failed command's `output`, or None when it failed for its own
    reasons (or did not fail)."""
    if exit_code == 0 or exit_code is None:
        return None
    base = cwd or policy.workspace
    paths: list[str] = []
    actions: list[str] = []
    for line in output.splitlines():
        if not _DENIAL.search(line):
            continue
        found = [p for p in _paths_in(line) if _kept_out(p, base, policy)]
        paths.extend(p for p in found if p not in paths)
        if not found and _SIGNAL.search(line) and "signals to processes outside the sandbox" not in actions:
            actions.append("signals to processes outside the sandbox")
        elif not found and not policy.network and _NETWORK.search(line) and "network" not in actions:
            actions.append("network")
    if not paths and not actions:
        return None
    return Blocked(tuple(paths), tuple(actions))


def _paths_in(line: str) -> list[str]:
    candidates = [m.group(1) for m in _QUOTED.finditer(line)]
    candidates += [m.group(1) for m in _BARE.finditer(line)]
    return [c.rstrip(".,;") for c in candidates if "/" in c or c.startswith(("~", "."))]


def _kept_out(text: str, base: Path, policy: Policy) -> bool:
    """Whether the policy keeps the command from `text` (a path as the command printed it)."""
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = base / path
    try:
        path = path.resolve()
    except (OSError, RuntimeError):
        return False
    if policy.is_denied(path):
        return True
    if any(path == d or path.is_relative_to(d) for d in policy.devices):
        return False
    return not policy.may_write(path) and _agent_may_write(path)


def _agent_may_write(path: Path) -> bool:
    """Whether the file's own permissions would have let the command write it (or, for a path
    that does not exist, create it): then only the sandbox stood in the way."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return os.access(path, os.W_OK) or os.access(path.parent, os.W_OK)
