"""How a command is started inside the active sandbox: the argv and the Popen arguments it needs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import Settings
from core.sandbox import bwrap, landlock
from core.sandbox.environment import without_session_sockets
from core.sandbox.policy import Policy
from core.sandbox.probe import SandboxInfo, probe


@dataclass(frozen=True)
class Confinement:
    """The sandbox a command runs in, and what it may touch there."""

    info: SandboxInfo
    policy: Policy

    @classmethod
    def for_workspace(cls, workspace: Path, settings: Settings) -> Confinement | None:
        """The confinement `settings` ask for (AGENT_SANDBOX, AGENT_NETWORK, ...); None when there is
        no sandbox here or it is turned off."""
        info = probe(settings.sandbox, network=settings.network != "off")
        return cls(info, Policy.for_workspace(workspace, settings)) if info.active else None


@dataclass(frozen=True)
class Launch:
    """How to start the command: `launch.popen(launch.argv, **kwargs, **launch.popen_kwargs)`;
    `popen` is subprocess.Popen but where the sandbox must make the process itself (a token)."""

    argv: list[str]
    popen_kwargs: dict[str, Any] = field(default_factory=dict)
    popen: Callable[..., subprocess.Popen] = subprocess.Popen
    policy: Policy | None = None

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The command's environment made from `environ`: inside a sandbox it names no socket of
        the user's session and its temp folder is the session's own."""
        if self.policy is None:
            return dict(environ)
        return {**without_session_sockets(environ, self.policy.sockets), **self.policy.temp_environment()}


@contextmanager
def confine(argv: list[str], confinement: Confinement | None) -> Iterator[Launch]:
    """Start the process (`launch.popen(launch.argv, **kwargs, **launch.popen_kwargs)`) inside this
    block: a Landlock ruleset lives only until the block ends."""
    if confinement is None:
        yield Launch(argv)
    elif confinement.info.backend == "landlock":
        with landlock.ruleset(confinement.policy, confinement.info.abi) as enter:
            yield Launch(argv, {"preexec_fn": enter}, policy=confinement.policy)
    elif confinement.info.backend == "bwrap":
        with bwrap.wrapped(argv, confinement.policy) as (wrapped, fds):
            yield Launch(wrapped, {"pass_fds": fds}, policy=confinement.policy)
    elif confinement.info.backend == "wintoken":
        from core.sandbox import wintoken

        wintoken.label_writable(confinement.policy.writable)
        # `integrity` is TokenPopen's alone: a caller that ignores `popen` fails rather than runs unconfined.
        yield Launch(argv, {"integrity": wintoken.LOW_INTEGRITY}, popen=wintoken.TokenPopen, policy=confinement.policy)
    else:
        yield Launch(argv)
