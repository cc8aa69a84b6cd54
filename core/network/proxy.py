"""A local HTTP proxy that lets allowed hosts through and asks for the others.

A confined command's tools (pip, npm, git, cargo, go, curl) send every request to it: plain HTTP as
an absolute URL, HTTPS as a CONNECT tunnel whose bytes it relays without reading. For each
connection it decides by host name: a host on the rules passes; a host the user answered this
session gets that answer; any other is put to `ask(host, port)`. Without anyone to ask (`--one`)
the answer is no, and the command gets a 403 whose body says which host was refused and how the
user could allow it, so the model can tell them. Every decision is kept (`decisions`) and handed
to `on_decision`.

It only decides by name: a host's address is looked up after the decision (`resolve`, which tests
replace to reach a stand-in on 127.0.0.1), and the request's own Host header is not consulted.
"""

from __future__ import annotations

import contextlib
import re
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from core.network.hosts import Answer, HostRules, normal_host
from core.network.relay import relay

Ask = Callable[[str, int], Answer]
Resolve = Callable[[str, int], tuple[str, int]]

_HEAD_LIMIT = 64 * 1024  # a request head longer than this is refused
_CHUNK = 64 * 1024
_CONNECT_SECONDS = 30.0
_HOP_HEADERS = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")


@dataclass(frozen=True)
class Decision:
    """One connection the proxy decided on."""

    host: str
    port: int
    method: str
    allowed: bool
    reason: str
    at: float = field(default_factory=time.time)


def refusal_text(host: str, port: int, reason: str) -> str:
    """What a refused command reads in the 403's body: the host, why, and how to allow it."""
    return (
        f"deepseek-agent's network proxy refused a connection to {host}:{port}: {reason}.\n"
        + _how_to_allow([host])
    )


def refusal_note(decisions: list[Decision]) -> str:
    """A note for the model about the connections `decisions` refused ("" when none was), to go with
    a command's output: a client of HTTPS shows only "CONNECT tunnel failed, response 403", not the
    body that says how to allow the host."""
    refused = {(d.host, d.port): d.reason for d in decisions if not d.allowed}
    if not refused:
        return ""
    lines = [
        f"deepseek-agent's network proxy refused {host}:{port}: {reason}."
        for (host, port), reason in refused.items()
    ]
    return "\n".join(lines) + "\n" + _how_to_allow(list(dict.fromkeys(host for host, _ in refused)))


# How a direct connection, or a name lookup, fails in a command's own network namespace.
_NO_ROUTE = re.compile(r"network is unreachable|ENETUNREACH|could not resolve|name or service not known"
                       r"|temporary failure in name resolution|EAI_AGAIN|getaddrinfo|no address associated"
                       r"|couldn't connect to server",
                       re.IGNORECASE)


def direct_note(output: str) -> str:
    """A note for the model when a command on the proxied network seems to have tried the network
    directly ("" when its output shows no such failure)."""
    if not _NO_ROUTE.search(output):
        return ""
    return ("Commands reach the network only through deepseek-agent's proxy (HTTP_PROXY/HTTPS_PROXY in their "
            "environment, which pip, npm, git, cargo, go, curl and urllib use): direct connections, UDP and DNS "
            "lookups fail, and servers the command starts itself on 127.0.0.1 work. Use a tool that honours "
            "the proxy variables; a host that is not a package registry or source host needs the user's yes.\n")


def _how_to_allow(hosts: list[str]) -> str:
    named = ",".join(hosts)
    return (
        "Commands reach package registries and source hosts; any other host needs the user's yes.\n"
        f"The user can allow it by adding it to AGENT_NETWORK_ALLOW (AGENT_NETWORK_ALLOW={named}),\n"
        "by answering 'always' when asked in an interactive session, or open the network for all\n"
        "commands with AGENT_NETWORK=on.\n"
    )


def default_resolve(host: str, port: int) -> tuple[str, int]:
    return host, port


class Proxy:
    """The proxy; `start()` serves on a thread, `close()` stops it. `listen` is (host, port) on the
    loopback (port 0 picks one) or the path of a Unix socket."""

    def __init__(
        self,
        rules: HostRules,
        ask: Ask | None = None,
        *,
        remember: Callable[[str], None] | None = None,
        on_decision: Callable[[Decision], None] | None = None,
        resolve: Resolve = default_resolve,
        listen: tuple[str, int] | Path = ("127.0.0.1", 0),
    ) -> None:
        self.rules = rules
        self.ask = ask
        self.remember = remember
        self.on_decision = on_decision
        self.resolve = resolve
        self.decisions: list[Decision] = []
        self._answers: dict[str, Answer] = {}  # this session's answers, by host
        self._ask_lock = threading.Lock()  # one question at a time, and one per host
        self._log_lock = threading.Lock()
        self._server = _server_for(listen, self)
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int] | str:
        return self._server.server_address

    @property
    def url(self) -> str:
        """The URL children put in HTTP_PROXY (only for a TCP listener)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        """The loopback port (only for a TCP listener); a command's own namespace gets its door there."""
        return int(self._server.server_address[1])

    def serve_from(self, listener: socket.socket) -> None:
        """Serve the connections of another listening socket too (a door into a command's own
        network namespace, `core.network.door`), until it is shut down."""

        def accept() -> None:
            while True:
                try:
                    connection, address = listener.accept()
                except OSError:
                    return
                self._server.process_request(connection, address)

        threading.Thread(target=accept, name="network-proxy-door", daemon=True).start()

    def start(self) -> Proxy:
        """Serve on one thread; starting again is a no-op (a second loop would outlive `close`,
        polling a closed socket)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, name="network-proxy", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if isinstance(self._server.server_address, str):
            with contextlib.suppress(OSError):
                Path(self._server.server_address).unlink()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    def decisions_since(self, count: int) -> list[Decision]:
        """The decisions after the first `count` (take `len(proxy.decisions)` before a command runs)."""
        with self._log_lock:
            return self.decisions[count:]

    def decide(self, host: str, port: int, method: str) -> Decision:
        """Whether a connection to `host:port` may go, and why; asks when no rule or answer says."""
        host = normal_host(host)
        reason = self.rules.reason(host)
        if reason is not None:
            return self._log(Decision(host, port, method, True, f"allowed by {reason}"))
        with self._ask_lock:
            answer = self._answers.get(host)
            if answer is None:
                if self.ask is None:
                    return self._log(
                        Decision(
                            host,
                            port,
                            method,
                            False,
                            "the host is not on the allowed list and no one could be asked",
                        )
                    )
                answer = self._put_question(host, port)
                self._answers[host] = answer
                if answer is Answer.ALLOW_ALWAYS and self.remember is not None:
                    self.remember(host)
                how = {
                    Answer.ALLOW_ONCE: "allowed by the user for this session",
                    Answer.ALLOW_ALWAYS: "allowed by the user for this workspace",
                    Answer.DENY: "the user refused it",
                }[answer]
            else:
                how = (
                    "refused earlier by the user in this session"
                    if answer is Answer.DENY
                    else "allowed earlier by the user"
                )
        return self._log(Decision(host, port, method, answer is not Answer.DENY, how))

    def _put_question(self, host: str, port: int) -> Answer:
        assert self.ask is not None
        try:
            answer = self.ask(host, port)
        except Exception:  # a failing question is a no, never an open door
            return Answer.DENY
        return answer if isinstance(answer, Answer) else Answer.DENY

    def _log(self, decision: Decision) -> Decision:
        with self._log_lock:
            self.decisions.append(decision)
        if self.on_decision is not None:
            self.on_decision(decision)
        return decision


class _Handler(socketserver.BaseRequestHandler):
    server: _TCPServer | _UnixServer

    def handle(self) -> None:
        client: socket.socket = self.request
        client.settimeout(_CONNECT_SECONDS)
        try:
            head, rest = _read_head(client)
        except (OSError, ValueError) as exc:
            _reply(client, 400, f"bad request: {exc}\n")
            return
        try:
            method, target, version, headers = _parse_head(head)
            host, port, origin_target = _destination(method, target)
        except ValueError as exc:
            _reply(client, 400, f"{exc}\n")
            return
        decision = self.server.proxy.decide(host, port, method)
        if not decision.allowed:
            _reply(client, 403, refusal_text(decision.host, port, decision.reason))
            return
        try:
            upstream = socket.create_connection(
                self.server.proxy.resolve(decision.host, port), _CONNECT_SECONDS
            )
        except OSError as exc:
            _reply(client, 502, f"could not connect to {decision.host}:{port}: {exc}\n")
            return
        with upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(_forwarded_head(method, origin_target, version, headers))
            if rest:
                upstream.sendall(rest)
            relay(client, upstream)


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _HEAD_LIMIT:
            raise ValueError("the request head is too long")
        chunk = client.recv(_CHUNK)
        if not chunk:
            raise ValueError("the connection closed before the request head ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ValueError(f"not an HTTP request line: {lines[0][:200]!r}")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"not a header line: {line[:200]!r}")
        headers.append((name.strip(), value.strip()))
    return parts[0].upper(), parts[1], parts[2], headers


def _destination(method: str, target: str) -> tuple[str, int, str]:
    """(host, port, the request target to send upstream) of a proxy request."""
    if method == "CONNECT":
        host, sep, port = target.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise ValueError(f"CONNECT needs host:port, not {target[:200]!r}")
        return normal_host(host), int(port), ""
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        raise ValueError(
            f"a proxy request needs an absolute http:// URL (HTTPS goes through CONNECT), "
            f"not {target[:200]!r}"
        )
    try:
        port = url.port or 80
    except ValueError as exc:
        raise ValueError(f"bad port in {target[:200]!r}") from exc
    origin = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return normal_host(url.hostname), port, origin


def _forwarded_head(method: str, target: str, version: str, headers: list[tuple[str, str]]) -> bytes:
    kept = [f"{name}: {value}" for name, value in headers if name.lower() not in _HOP_HEADERS]
    return "\r\n".join([f"{method} {target} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")


def _reply(client: socket.socket, status: int, body: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    data = body.encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.sendall(head.encode("latin-1") + data)


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], proxy: Proxy) -> None:
        self.proxy = proxy
        super().__init__(address, _Handler)


if hasattr(socketserver, "ThreadingUnixStreamServer"):  # not on Windows

    class _UnixServer(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True
        request_queue_size = 128

        def __init__(self, path: Path, proxy: Proxy) -> None:
            self.proxy = proxy
            super().__init__(str(path), _Handler)


def _server_for(listen: tuple[str, int] | Path, proxy: Proxy) -> _TCPServer | _UnixServer:
    if isinstance(listen, Path):
        if "_UnixServer" not in globals():
            raise OSError(f"cannot listen on the socket file {listen}: this platform has no Unix stream servers")
        return _UnixServer(listen, proxy)
    return _TCPServer(listen, proxy)
