"""A session's network: one proxy for all its confined commands, started with the first one, its
questions put through the same approval gate as the agent's others, and the hosts the user
allowed "always, in this workspace" kept beside the workspace's other allow rules."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

from core.network.hosts import Answer, HostRules, normal_host, parse_patterns
from core.network.proxy import Ask, Proxy, Resolve, default_resolve
from core.private import make_folder

# The why of a network question, as the approval gate shows it.
WHY = ("a command wants to connect to a host that is not a package registry or source host; "
       "a command's traffic can carry what it read (your files, tokens) to whoever runs that host")


class RememberedHosts:
    """The hosts allowed for good in one workspace: a small JSON file in the agent's data folder
    (never in the repository, so a project cannot allow itself a host)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.hosts: list[str] = self._load()

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        try:
            hosts = json.loads(self.path.read_text(encoding="utf-8")).get("hosts")
            if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
                return []
            return list(parse_patterns(" ".join(hosts)))
        except (OSError, ValueError, AttributeError):
            return []  # unreadable or damaged: nothing is allowed by it

    def add(self, host: str) -> str | None:
        """Keep `host`; a sentence when it could not be written (it still holds for this session)."""
        with self._lock:
            host = normal_host(host)
            if host not in self.hosts:
                self.hosts.append(host)
            if self.path is None:
                return None
            try:
                make_folder(self.path.parent)
                tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"hosts": self.hosts}, indent=1), encoding="utf-8")
                os.replace(tmp, self.path)
            except OSError as exc:
                return f"the host is allowed for this session only: {self.path} could not be written ({exc})"
        return None


class SessionNetwork:
    """The session's proxy, made on first use (`proxy()`) and stopped by `close()`."""

    def __init__(self, allow: str, remembered: RememberedHosts, ask: Ask | None,
                 resolve: Resolve = default_resolve) -> None:
        self.remembered = remembered
        self._rules = (*parse_patterns(allow), *remembered.hosts)
        self._ask = ask
        self._resolve = resolve
        self._proxy: Proxy | None = None
        self._lock = threading.Lock()

    def proxy(self) -> Proxy:
        with self._lock:
            if self._proxy is None:
                self._proxy = Proxy(HostRules.of(self._rules), self._ask, resolve=self._resolve).start()
            return self._proxy

    def decisions(self) -> int:
        """How many connections the proxy decided on so far (0 before it started)."""
        return len(self._proxy.decisions) if self._proxy is not None else 0

    def close(self) -> None:
        with self._lock:
            if self._proxy is not None:
                self._proxy.close()
                self._proxy = None


def approval_ask(question: Callable[[str, str, str, Callable[[], str | None]], str | None],
                 remembered: RememberedHosts) -> Ask:
    """An `Ask` that puts "connect to HOST:PORT?" through `question(what, why, rule, keep)` (the
    approval gate: None when allowed), where `keep` keeps the host for the workspace."""

    def ask(host: str, port: int) -> Answer:
        kept: list[str] = []

        def keep() -> str | None:
            kept.append(host)
            return remembered.add(host)

        refusal = question(f"let commands connect to {host}:{port}", WHY, f"network host {host}", keep)
        if refusal is not None:
            return Answer.DENY
        return Answer.ALLOW_ALWAYS if kept else Answer.ALLOW_ONCE

    return ask
