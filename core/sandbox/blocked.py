"""Whether a confined command failed because the sandbox refused it, read from its output.

A denial shows as "Permission denied", "Operation not permitted" or (under bubblewrap) "Read-only
file system" next to a path. It is the sandbox's doing when that path is one the policy keeps
from the command: outside the writable folders, outside what it may read, or a secret place. A
denial inside the workspace is the file's own permissions, and is left alone. Under bubblewrap a
path the command may not read is not there at all ("No such file or directory")."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from core.i18n import N_, _
from core.sandbox.policy import Policy

# glibc's own words too, as a Chinese locale has its commands say them (zh_CN: EACCES, EPERM, EROFS, ENOENT).
_DENIAL = re.compile(r"permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b"
                     r"|\bEROFS\b|权限不够|不允许的操作|只读文件系统", re.IGNORECASE)
_QUOTED = re.compile(r"""['"‘’`“]([^'"‘’`“”\n]{1,4096})['"‘’“”]""")
_BARE = re.compile(r"(?:^|[\s:(=])((?:~|\.{1,2})?/[^\s:'\"),]*|\.{1,2}/[^\s:'\"),]*)")
# Under bubblewrap a hidden path is absent: "missing" is the sandbox's doing when the path exists outside.
_MISSING = re.compile(r"no such file or directory|directory nonexistent|\bENOENT\b|没有那个文件或目录", re.IGNORECASE)
_SIGNAL = re.compile(r"\bkill\b", re.IGNORECASE)
_NETWORK = re.compile(r"connect|bind|socket|network|urlopen|ECONNREFUSED|Failed to connect", re.IGNORECASE)
MAX_SHOWN = 5


SIGNALS = N_("signals to processes outside the sandbox")
NETWORK = N_("network")


@dataclass(frozen=True)
class Blocked:
    """What the sandbox kept the command from: paths it could not write or read, or a kind of
    action (signals to outside processes, network)."""

    paths: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    kept_out: tuple[Path, ...] = ()  # the paths resolved, for `how_to_allow`

    def describe(self, translate: Callable[[str], str] = _) -> str:
        """What was blocked, in the interface's language (`translate=str`: in English, for a note
        written in English)."""
        parts = []
        if self.paths:
            parts.append(translate(N_("access to {paths}")).format(paths=_shown(self.paths)))
        parts.extend(translate(action) for action in self.actions)
        return translate(N_(" and ")).join(parts)


def how_to_allow(kept_out: Iterable[Path], actions: Iterable[str], policy: Policy) -> str:
    """How the user can allow exactly what the sandbox refused, without giving up the rest of it:
    the setting that covers each refusal, then --no-sandbox as the way to drop confinement whole.
    Never --yes: that answers the gate's questions and does not lift the sandbox."""
    ways: list[str] = []
    kept_out = list(kept_out)
    shared_temp = [p for p in kept_out if policy.in_shared_temp(p)] if policy.temp is not None else []
    hint = _("{paths} is in a shared temp folder commands may not write: write to $TMPDIR ({temp}), the session's "
             "own temp folder, instead. ").format(paths=_shown([str(p) for p in shared_temp]), temp=policy.temp) \
        if shared_temp else ""
    secret = [str(p) for p in kept_out if policy.is_denied(p)]
    folders = list(dict.fromkeys(str(_folder(p)) for p in kept_out
                                 if not policy.is_denied(p) and p not in shared_temp))
    if folders:
        ways.append(_("let commands write {paths} by starting the agent with AGENT_SANDBOX_WRITABLE={value} (in the "
                      "environment or the .env)").format(paths=_shown(folders), value=os.pathsep.join(folders[:MAX_SHOWN])))
    unread = list(dict.fromkeys(str(_folder(p)) for p in kept_out if not policy.is_denied(p)
                                and not policy.may_read(p)))
    if unread:
        ways.append(_("let commands read {paths} by starting the agent with AGENT_SANDBOX_READABLE={value} (the home "
                      "folder and the workspace's neighbours are unreadable but for what tools need)").format(
                          paths=_shown(unread), value=os.pathsep.join(unread[:MAX_SHOWN])))
    if secret:
        ways.append(_("{paths} is a secret place no confined command may read; only --no-sandbox lifts that").format(
            paths=_shown(secret)))
    if NETWORK in actions:
        ways.append(_("the network is off for commands (--no-network, AGENT_NETWORK=off); starting without it "
                      "allows it"))
    if SIGNALS in actions:
        ways.append(_("only --no-sandbox lets a command signal processes it did not start"))
    ways.append(_("or run the whole session unconfined with --no-sandbox") if ways
                else _("run the whole session unconfined with --no-sandbox"))
    return hint + _("The user can {ways}.").format(ways=_("; ").join(ways))


def _folder(path: Path) -> Path:
    """The folder to make writable for `path`: the path itself when it is an existing folder, else
    the nearest existing folder above it."""
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


def _shown(items: list[str] | tuple[str, ...]) -> str:
    return ", ".join(items[:MAX_SHOWN]) + (" …" if len(items) > MAX_SHOWN else "")


def sandbox_denial(output: str, exit_code: int | None, policy: Policy, cwd: Path | None = None) -> Blocked | None:
    """The sandbox's refusals in a failed command's `output`, or None when it failed for its own
    reasons (or did not fail)."""
    if exit_code == 0 or exit_code is None:
        return None
    base = cwd or policy.workspace
    paths: dict[str, Path] = {}
    actions: list[str] = []
    for line in output.splitlines():
        if _MISSING.search(line) and not _DENIAL.search(line):
            for shown in _paths_in(line):
                real = _resolved(shown, base)
                if real is not None and real.exists() and not policy.may_read(real):
                    paths.setdefault(shown, real)
            continue
        if not _DENIAL.search(line):
            continue
        found = {p: real for p in _paths_in(line) if (real := _kept_out(p, base, policy)) is not None}
        for shown, real in found.items():
            paths.setdefault(shown, real)
        if not found and _SIGNAL.search(line) and SIGNALS not in actions:
            actions.append(SIGNALS)
        elif not found and not policy.network and _NETWORK.search(line) and NETWORK not in actions:
            actions.append(NETWORK)
    if not paths and not actions:
        return None
    return Blocked(tuple(paths), tuple(actions), tuple(dict.fromkeys(paths.values())))


def _paths_in(line: str) -> list[str]:
    candidates = [m.group(1) for m in _QUOTED.finditer(line)]
    candidates += [m.group(1) for m in _BARE.finditer(line)]
    return [c.rstrip(".,;") for c in candidates if "/" in c or c.startswith(("~", "."))]


def _kept_out(text: str, base: Path, policy: Policy) -> Path | None:
    """The resolved path when the policy keeps the command from `text` (a path as the command
    printed it), else None."""
    path = _resolved(text, base)
    if path is None:
        return None
    if policy.is_denied(path) or not policy.may_read(path):
        return path
    if any(path == d or path.is_relative_to(d) for d in policy.devices):
        return None
    return path if not policy.may_write(path) and _agent_may_write(path) else None


def _resolved(text: str, base: Path) -> Path | None:
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = base / path
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _agent_may_write(path: Path) -> bool:
    """Whether the file's own permissions would have let the command write it (or, for a path
    that does not exist, create it): then only the sandbox stood in the way."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return os.access(path, os.W_OK) or os.access(path.parent, os.W_OK)
