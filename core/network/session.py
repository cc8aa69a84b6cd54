"""A session's network: one proxy for all its confined commands, started with the first one, its
questions put through the same approval gate as the agent's others, and the hosts the user
allowed "always, in this workspace" kept with the workspace's allow rules (`core.agent.rules`: in
the agent's data folder, never in the repository, so a project cannot allow itself a host)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from core.i18n import N_, _
from core.network.hosts import Answer, HostRules, normal_host, parse_patterns
from core.network.proxy import Ask, Proxy, Resolve, default_resolve

# The why of a network question, as the approval gate shows it.
WHY = N_("a command wants to connect to a host that is not a package registry or source host; "
         "a command's traffic can carry what it read (your files, tokens) to whoever runs that host")


def valid_hosts(kept: Iterable[str]) -> tuple[str, ...]:
    """The entries of a kept list that are host patterns (a damaged entry allows nothing)."""
    found: list[str] = []
    for entry in kept:
        try:
            found += parse_patterns(entry)
        except ValueError:
            continue
    return tuple(found)


class SessionNetwork:
    """The session's proxy, made on first use (`proxy()`) and stopped by `close()`."""

    def __init__(self, allow: str, kept: Iterable[str], ask: Ask | None, resolve: Resolve = default_resolve) -> None:
        self._rules = (*parse_patterns(allow), *valid_hosts(kept))
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
                 keep_host: Callable[[str], str | None]) -> Ask:
    """An `Ask` that puts "connect to HOST:PORT?" through `question(what, why, rule, keep)` (the
    approval gate: None when allowed), where `keep` keeps the host for the workspace through
    `keep_host` (a sentence when it could not)."""

    def ask(host: str, port: int) -> Answer:
        kept: list[str] = []

        def keep() -> str | None:
            kept.append(host)
            return keep_host(normal_host(host))

        refusal = question(_("let commands connect to {host}:{port}").format(host=host, port=port), WHY,
                           _("network host {host}").format(host=host), keep)
        if refusal is not None:
            return Answer.DENY
        return Answer.ALLOW_ALWAYS if kept else Answer.ALLOW_ONCE

    return ask
