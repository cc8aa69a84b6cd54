"""Confined commands on the proxied network (the default), on each backend, with a real proxy and
real sockets: an allowed host (a stand-in on 127.0.0.1 named by AGENT_NETWORK_ALLOW) answers
through the proxy, another host is refused with a 403 that names it and how to allow it; nothing
reaches a server on an address of this machine that is not loopback, however the command tries
(curl past the proxy, Python's sockets, bash's /dev/tcp and /dev/udp, nc); name lookups fail; a
server the command starts on its own 127.0.0.1 answers it. AGENT_NETWORK=on is open, off has no
proxy at all."""

from __future__ import annotations

import dataclasses
import shutil
import socket
from collections.abc import Iterator

import pytest

from core.network.session import SessionNetwork
from core.sandbox import Confinement, landlock
from tests.support.network_listeners import Catcher, catcher, outside_address, stand_in
from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import confinement, run

MARK = "npm_SeCrEtMaRkEr0123456789abcdefghijklmnop"
ADDRESS = outside_address()


@pytest.fixture
def network() -> Iterator[SessionNetwork]:
    with stand_in() as port:
        session = SessionNetwork("standin.example", (), None,
                                 resolve=lambda host, _: ("127.0.0.1", port))
        try:
            yield session
        finally:
            session.close()


def _proxied(layout: Layout, backend: str, network: SessionNetwork, **env: str) -> Confinement:
    return dataclasses.replace(confinement(layout, backend, **env), proxy=network.proxy())


def _out(command: str, layout: Layout, confined: Confinement) -> tuple[int | None, str]:
    done = run(command, layout, confined, timeout=40)
    return done.exit_code, done.output.decode(errors="replace")


URLLIB = "python3 -c \"import urllib.request as u; print(u.urlopen('http://{host}/{path}', timeout=10).read().decode())\""


@pytest.mark.parametrize("command", [
    "curl -sS --max-time 10 http://standin.example/plain",
    "curl -sS -p --max-time 10 http://standin.example/tunnel",  # through a CONNECT tunnel, as HTTPS goes
    URLLIB.format(host="standin.example", path="urllib"),
    "curl -sS --max-time 10 http://StandIn.Example./dot",  # the name as patterns compare it
])
def test_an_allowed_host_answers_through_the_proxy(layout: Layout, backend: str, network: SessionNetwork,
                                                   command: str) -> None:
    code, shown = _out(command, layout, _proxied(layout, backend, network))
    assert code == 0 and "stand-in answered /" in shown, shown
    assert network.proxy().decisions[-1].allowed


@pytest.mark.parametrize("command", [
    "curl -sS --max-time 10 http://collector.example/",
    "curl -sS -p --max-time 10 http://collector.example/ 2>&1; echo",
    "python3 -c \"import urllib.request as u, urllib.error as e\ntry: u.urlopen('http://collector.example/', timeout=10)\n"
    "except e.HTTPError as x: print(x.code, x.read().decode())\"",
])
def test_another_host_is_refused_and_the_command_told_how_to_allow_it(layout: Layout, backend: str,
                                                                       network: SessionNetwork,
                                                                       command: str) -> None:
    _, shown = _out(command, layout, _proxied(layout, backend, network))
    decision = network.proxy().decisions[-1]
    assert (decision.host, decision.allowed) == ("collector.example", False)
    if "-p" not in command:  # a client of a tunnel shows the status only: run_shell adds the note
        assert "refused a connection to collector.example" in shown and "AGENT_NETWORK_ALLOW=collector.example" in shown


def _direct_tries(address: str, port: int) -> list[str]:
    tries = [
        f"echo {MARK} > $TMPDIR/s; curl -sS --max-time 5 --noproxy '*' --data-binary @$TMPDIR/s http://{address}:{port}/",
        f"echo {MARK} > $TMPDIR/s; curl -sS --max-time 5 --data-binary @$TMPDIR/s http://{address}:{port}/",
        f"python3 -c \"import socket; socket.create_connection(('{address}', {port}), timeout=5).sendall(b'{MARK}')\"",
        f"python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"s.sendto(b'{MARK}', ('{address}', {port}))\"",
        f"bash -c 'echo {MARK} > /dev/tcp/{address}/{port}'",
        f"bash -c 'echo {MARK} > /dev/udp/{address}/{port}'",
    ]
    if shutil.which("nc"):
        tries.append(f"echo {MARK} | nc -w 3 {address} {port}")
    return tries


def _reached(found: Catcher) -> bool:
    return found.connections > 0 or MARK.encode() in found.received


@pytest.mark.skipif(ADDRESS is None, reason="this machine has no IPv4 address but loopback")
def test_nothing_reaches_a_server_on_the_machines_own_address(layout: Layout, backend: str,
                                                               network: SessionNetwork) -> None:
    assert ADDRESS is not None
    confined = _proxied(layout, backend, network)
    with catcher(ADDRESS) as found:
        for command in _direct_tries(ADDRESS, found.port):
            _out(command, layout, confined)
            assert not _reached(found), command
        # the same server is reached with the network open: the tries above could have reached it
        open_ = confinement(layout, backend, AGENT_NETWORK="on")
        _out(_direct_tries(ADDRESS, found.port)[2], layout, open_)
        assert _reached(found)


def test_names_are_not_looked_up(layout: Layout, backend: str, network: SessionNetwork) -> None:
    try:
        socket.getaddrinfo("pypi.org", 443)
    except OSError:
        pytest.skip("this machine resolves no names outside the sandbox either")
    code, shown = _out("python3 -c \"import socket; print(socket.getaddrinfo('pypi.org', 443))\"", layout,
                       _proxied(layout, backend, network))
    assert code != 0 and "gaierror" in shown, shown


def test_a_server_the_command_starts_on_its_loopback_answers_it(layout: Layout, backend: str,
                                                                 network: SessionNetwork) -> None:
    command = ("python3 -m http.server 8766 --bind 127.0.0.1 --directory $TMPDIR >/dev/null 2>&1 & "
               "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.3; "
               "curl -sS -o /dev/null -w 'status %{http_code}' http://127.0.0.1:8766/ && break; done; kill %1")
    _, shown = _out(command, layout, _proxied(layout, backend, network))
    assert "status 200" in shown, shown
    assert not network.proxy().decisions  # loopback went direct, not through the proxy


def test_a_proxied_command_dies_of_a_closed_pipe_as_anywhere(layout: Layout, backend: str,
                                                              network: SessionNetwork) -> None:
    """The door made before the command (bubblewrap's runs in Python, which ignores SIGPIPE) hands
    the command the default signals: a writer into a closed pipe ends instead of erring forever."""
    code, shown = _out("yes | head -n 2; grep SigIgn /proc/self/status", layout, _proxied(layout, backend, network))
    assert code == 0 and shown.startswith("y\ny\n") and "Broken pipe" not in shown, shown
    assert not int(shown.split()[-1], 16) & (1 << 12 | 1 << 24), shown  # SIGPIPE 13, SIGXFSZ 25


def test_network_on_is_open_and_off_has_no_proxy(layout: Layout, backend: str, network: SessionNetwork) -> None:
    proxy = network.proxy()
    with stand_in() as port:
        direct = f"curl -sS --max-time 5 http://127.0.0.1:{port}/direct"
        code, shown = _out(direct, layout, confinement(layout, backend, AGENT_NETWORK="on"))
        assert code == 0 and "stand-in answered /direct" in shown
        off = dataclasses.replace(confinement(layout, backend, AGENT_NETWORK="off"), proxy=proxy)
        code, shown = _out(f"env | grep -ci '^[a-z_]*_proxy='; {direct}; curl -sS --max-time 5 http://127.0.0.1:{proxy.port}/",
                           layout, off)
        assert code != 0 and "stand-in" not in shown and shown.startswith("0"), shown
    assert not proxy.decisions


@pytest.mark.skipif(ADDRESS is None, reason="this machine has no IPv4 address but loopback")
def test_without_a_namespace_landlock_lets_tcp_reach_only_the_proxys_port(
        layout: Layout, network: SessionNetwork, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no network namespace can be made (user namespaces forbidden): Landlock ABI 4's port
    rule. The proxy answers; a server on another port, here or elsewhere, does not."""
    confined = _proxied(layout, "landlock", network)
    if confined.info.abi < 4:
        pytest.skip("TCP port rules need Landlock ABI 4")
    monkeypatch.setattr(landlock, "network_namespace", lambda policy: False)
    assert ADDRESS is not None
    code, shown = _out("curl -sS --max-time 10 http://standin.example/fallback", layout, confined)
    assert code == 0 and "stand-in answered /fallback" in shown, shown
    with catcher(ADDRESS) as found:
        code, shown = _out(_direct_tries(ADDRESS, found.port)[2], layout, confined)
        assert code != 0 and "PermissionError" in shown and not _reached(found), shown
    code, shown = _out("python3 -c \"import socket; print(socket.create_server(('127.0.0.1', 0)).getsockname()[1])\"",
                       layout, confined)
    assert code == 0, shown  # binding stays free
