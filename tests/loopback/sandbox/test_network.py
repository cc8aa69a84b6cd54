"""AGENT_NETWORK=off: a confined command opens no TCP connection to a server on 127.0.0.1; on, it
does; proxied (the default; without a proxy here), it does not either: only the proxy leads out."""

from __future__ import annotations

import socket
import threading
import uuid

import pytest

from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import confinement, run


def _listener() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        try:
            while True:
                server.accept()[0].close()
        except OSError:
            return  # closed at the end of the test

    threading.Thread(target=accept, daemon=True).start()
    return server, server.getsockname()[1]


def test_network_off_refuses_tcp_and_on_allows_it(layout: Layout, backend: str) -> None:
    server, port = _listener()
    with server:
        connect = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)\""
        assert run(connect, layout, confinement(layout, backend, AGENT_NETWORK="on")).exit_code == 0
        assert run(connect, layout, confinement(layout, backend)).exit_code != 0
        off = confinement(layout, backend, AGENT_NETWORK="off")
        assert "network on" not in off.info.describe()
        assert run(connect, layout, off).exit_code != 0
        if backend == "landlock":  # bubblewrap gives a network of its own, where binding harms nothing
            bind = "python3 -c \"import socket; socket.create_server(('127.0.0.1', 0))\""
            assert run(bind, layout, off).exit_code != 0


def test_abstract_unix_sockets_outside_are_out_of_reach(layout: Layout) -> None:
    """Landlock ABI 6 scopes abstract sockets: a D-Bus-like listener of the agent's cannot be reached."""
    confined = confinement(layout, "landlock")
    if confined.info.abi < 6:
        pytest.skip("abstract socket scoping needs Landlock ABI 6")
    name = f"sandbox-test-{uuid.uuid4().hex}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(4)
    with server:
        connect = (f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
                   f"s.connect('\\\\0{name}')\"")
        assert run(connect, layout, None).exit_code == 0
        refused = run(connect, layout, confined)
        assert refused.exit_code != 0 and b"Operation not permitted" in refused.output
