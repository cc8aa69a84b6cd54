"""Which sandbox this machine can give commands, chosen once per process, and what it enforces."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

from core.i18n import N_, Deferred, _
from core.sandbox import bwrap, landlock, mountns, seccomp


@dataclass(frozen=True)
class SandboxInfo:
    """The active sandbox: `backend` is "landlock", "bwrap", "wintoken" or "none"; `enforces` lists what the
    kernel holds, in words for the status bar, `--json` and the docs; they and `reason` are kept in English
    and shown translated."""

    backend: str
    abi: int = 0
    enforces: tuple[str, ...] = ()
    reason: str = ""  # why there is none, or why the one asked for was not used

    @property
    def active(self) -> bool:
        return self.backend != "none"

    def describe(self) -> str:
        """Which sandbox, and what it holds, in the interface's language."""
        if not self.active:
            return _("none ({reason})").format(reason=_(self.reason)) if self.reason else "none"
        name = f"landlock ABI {self.abi}" if self.backend == "landlock" else self.backend
        return f"{name}: " + _("; ").join(_(item) for item in self.enforces)


@lru_cache(maxsize=8)
def probe(choice: str = "auto", network: bool | str = True) -> SandboxInfo:
    """The sandbox for `choice` (AGENT_SANDBOX): "auto" takes Landlock, then bubblewrap; on Windows
    only "wintoken" gives one; "off" and a backend this machine lacks give "none" with the reason.
    `network` is AGENT_NETWORK ("proxied", "on", "off"; True is "on", False "off")."""
    network = {True: "on", False: "off"}.get(network, network)  # type: ignore[call-overload]
    if choice == "off":
        return SandboxInfo("none", reason=N_("turned off"))
    if sys.platform == "win32":
        return _windows(choice, network)
    if choice == "wintoken":
        return SandboxInfo("none", reason=N_("the low-integrity token sandbox is Windows'"))
    if not sys.platform.startswith("linux"):
        return SandboxInfo("none", reason=Deferred(N_("no kernel sandbox on {platform} yet"),
                                                   platform=sys.platform))
    version = landlock.abi()
    if choice in ("auto", "landlock") and version >= 1:
        return SandboxInfo("landlock", version, _landlock_enforces(version, network))
    if choice in ("auto", "bwrap") and bwrap.works():
        return SandboxInfo("bwrap", 0, _bwrap_enforces(network))
    if choice == "landlock":
        return SandboxInfo("none", reason=N_("this kernel has no Landlock"))
    if choice == "bwrap":
        return SandboxInfo("none", reason=N_("bwrap is not installed or cannot make namespaces here"))
    return SandboxInfo("none", reason=N_("no Landlock in this kernel and no working bwrap"))


def _windows(choice: str, network: str) -> SandboxInfo:
    """Only when asked by name, and only when it is seen to hold here: the low-integrity token is
    not proven on real Windows yet, so the default stays none (and the mode `ask`)."""
    if choice != "wintoken":
        if choice in ("landlock", "bwrap"):
            unproven = N_("{backend} is Linux's; the Windows sandbox (a low-integrity token) is unproven; "
                          "AGENT_SANDBOX=wintoken tries it")
            return SandboxInfo("none", reason=Deferred(unproven, backend=choice))
        return SandboxInfo("none", reason=N_("the Windows sandbox (a low-integrity token) is unproven; "
                                             "AGENT_SANDBOX=wintoken tries it"))
    from core.sandbox import wintoken

    failed = wintoken.works()
    if failed:
        return SandboxInfo("none", reason=failed)
    return SandboxInfo("wintoken", 0, (N_("writes only in the workspace and temp folders (low integrity, "
                                          "unproven)"),
                                       N_("reads NOT limited: secrets readable"),
                                       N_("network NOT blocked") if network == "off" else N_("network on")))


def _channels() -> list[str]:
    """What the seccomp filter holds on every backend, or that this machine has none."""
    if seccomp.table() is None:
        return [N_("Unix sockets, other processes' limits and inode flags NOT covered (no seccomp filter for "
                   "this CPU)")]
    return [N_("no Unix socket of the session"),
            N_("other processes' limits, priority and affinity out of reach")]


def _landlock_enforces(version: int, network: str) -> tuple[str, ...]:
    said = [N_("writes only in the workspace and its own temp folder"), N_("home folder read by allowlist"),
            N_("the agent's /proc unreadable"), N_("no terminal"), *_channels(),
            N_("git hooks and config read-only")]
    if mountns.available(own_pids=True):
        said.append(N_("own PID namespace"))
    else:
        said.append(N_("other processes' command lines NOT hidden (no PID namespace here)"))
    if version >= 6:
        said.append(N_("signals and abstract sockets stay inside"))
    if network == "on":
        said.append(N_("network on"))
    elif network == "proxied" and mountns.available(own_net=True):
        said.append(N_("network only through the agent's proxy (own network namespace)"))
    elif version >= 4:
        said.append(N_("TCP only to the agent's proxy port (no network namespace here)")
                    if network == "proxied" else N_("TCP off"))
    else:
        said.append(Deferred(N_("network NOT blocked (needs Landlock ABI {needed}, this kernel has "
                                "{version})"), needed=4, version=version))
    return tuple(said)


def _bwrap_enforces(network: str) -> tuple[str, ...]:
    said = [N_("writes only in the workspace and its own temp folder"), N_("home folder read by allowlist"),
            N_("own PID and IPC namespaces"),
            N_("no terminal"), *_channels(), N_("git hooks and config read-only")]
    shown = {"on": N_("network on"), "off": N_("network off"),
             "proxied": N_("network only through the agent's proxy")}
    return (*said, shown[network])
