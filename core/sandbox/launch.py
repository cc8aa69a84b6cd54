"""How a command is started inside the active sandbox: the argv and the Popen arguments it needs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import Settings
from core.network.child_env import proxy_environment
from core.network.door import Door
from core.network.proxy import Proxy
from core.sandbox import bwrap, landlock
from core.sandbox.environment import without_session_sockets
from core.sandbox.policy import Policy
from core.sandbox.probe import SandboxInfo, probe


@dataclass(frozen=True)
class Confinement:
    """The sandbox a command runs in, and what it may touch there."""

    info: SandboxInfo
    policy: Policy
    proxy: Proxy | None = None  # the session's, for the proxied network; without one: no network

    @classmethod
    def for_workspace(cls, workspace: Path, settings: Settings, proxy: Proxy | None = None) -> Confinement | None:
        """The confinement `settings` ask for (AGENT_SANDBOX, AGENT_NETWORK, ...); None when there is
        no sandbox here or it is turned off. `proxy` is the way out of the proxied network."""
        info = probe(settings.sandbox, network=settings.network)
        return cls(info, Policy.for_workspace(workspace, settings), proxy) if info.active else None


@dataclass(frozen=True)
class Launch:
    """How to start the command: `launch.popen(launch.argv, **kwargs, **launch.popen_kwargs)`;
    `popen` is subprocess.Popen but where the sandbox must make the process itself (a token)."""

    argv: list[str]
    popen_kwargs: dict[str, Any] = field(default_factory=dict)
    popen: Callable[..., subprocess.Popen] = subprocess.Popen
    policy: Policy | None = None
    door: Door | None = None  # the proxied network's way out, to `open()` once the command started

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The command's environment made from `environ`: inside a sandbox it names no socket of
        the user's session and its temp folder is the session's own; on the proxied network its
        tools are sent to the proxy (no proxy at all when it has none)."""
        if self.policy is None:
            return dict(environ)
        env = {**without_session_sockets(environ, self.policy.sockets), **self.policy.temp_environment()}
        if not self.policy.network or self.door is not None:  # a backend without a door leaves the network open
            proxy = self.door.proxy if self.door is not None else None
            env = proxy_environment(env, f"http://127.0.0.1:{proxy.port}" if proxy is not None else None)
        return env


@contextmanager
def confine(argv: list[str], confinement: Confinement | None) -> Iterator[Launch]:
    """Start the process (`launch.popen(launch.argv, **kwargs, **launch.popen_kwargs)`) inside this
    block: a Landlock ruleset lives only until the block ends."""
    if confinement is None:
        yield Launch(argv)
    elif confinement.info.backend == "landlock":
        door = Door(confinement.proxy) if confinement.policy.proxied else None
        with landlock.ruleset(confinement.policy, confinement.info.abi, door) as enter:
            yield Launch(argv, {"preexec_fn": enter}, policy=confinement.policy, door=door)
    elif confinement.info.backend == "bwrap":
        door = Door(confinement.proxy) if confinement.policy.proxied else None
        with bwrap.wrapped(argv, confinement.policy, door) as (wrapped, fds):
            yield Launch(wrapped, {"pass_fds": fds}, policy=confinement.policy, door=door)
    elif confinement.info.backend == "wintoken":
        from core.sandbox import wintoken

        wintoken.label_writable(confinement.policy.writable)
        # `integrity` is TokenPopen's alone: a caller that ignores `popen` fails rather than runs unconfined.
        yield Launch(argv, {"integrity": wintoken.LOW_INTEGRITY}, popen=wintoken.TokenPopen, policy=confinement.policy)
    else:
        yield Launch(argv)
