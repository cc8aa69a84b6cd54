"""Network proxy overhead: one HTTP request to a local upstream, direct against through the proxy, in one run.

Run from the repository root: `python3 -m bench.proxy [--runs 300]`. Each row is the median wall time
of a whole connection (connect, request, response, close) to a stand-in upstream on 127.0.0.1:
direct, through the proxy as a CONNECT tunnel (what HTTPS takes), as plain HTTP forwarding, and as a
tunnel through a door (a listener the proxy serves, as in a confined command's own network namespace).
The rows' runs are interleaved so the machine's load falls on all alike. The upstream's name is an
allowed host mapped to 127.0.0.1 by the proxy's resolver hook, so the proxy's decision is included.
"""

from __future__ import annotations

import argparse
import http.server
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parents[1])
)  # runs as `python3 bench/proxy.py` and as `python3 -m bench.proxy`

from bench.measurements import recorded
from core.network.hosts import HostRules
from core.network.proxy import Proxy

_BODY = b"x" * 1024


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(_BODY)))
        self.end_headers()
        self.wfile.write(_BODY)

    def log_message(self, *_: object) -> None:
        pass


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    sock.sendall(request)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _plain(address: tuple[str, int], request: bytes) -> Callable[[], bytes]:
    def run() -> bytes:
        with socket.create_connection(address) as sock:
            return _exchange(sock, request)

    return run


def _tunnel(proxy: tuple[str, int]) -> Callable[[], bytes]:
    def run() -> bytes:
        with socket.create_connection(proxy) as sock:
            sock.sendall(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n")
            reply = b""
            while b"\r\n\r\n" not in reply:
                reply += sock.recv(4096)
            assert reply.startswith(b"HTTP/1.1 200"), reply
            return _exchange(sock, b"GET /simple/ HTTP/1.0\r\nHost: pypi.org\r\n\r\n")

    return run


def connection_costs(runs: int) -> None:
    """Print the median cost of one connection direct, through the proxy (a tunnel, plain
    forwarding) and through a door (a listener handed to the proxy, as a command's own network
    namespace has), the rows interleaved."""
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    upstream.daemon_threads = True
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    address = upstream.server_address[:2]
    with Proxy(HostRules.of(), resolve=lambda host, port: address) as proxy:
        door = socket.create_server(("127.0.0.1", 0), backlog=128)
        proxy.serve_from(door)
        rows = {
            "direct": _plain(address, b"GET /simple/ HTTP/1.0\r\nHost: pypi.org\r\n\r\n"),
            "CONNECT tunnel": _tunnel(proxy.address),
            "plain HTTP forward": _plain(
                proxy.address, b"GET http://pypi.org/simple/ HTTP/1.0\r\nHost: pypi.org\r\n\r\n"
            ),
            "tunnel via a door": _tunnel(door.getsockname()),
        }
        for run in rows.values():
            assert run().endswith(_BODY)  # each path works before it is timed
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(runs):
            for name, run in rows.items():
                start = time.perf_counter()
                run()
                samples[name].append(time.perf_counter() - start)
        door.shutdown(socket.SHUT_RDWR)
        door.close()
    upstream.shutdown()
    base = statistics.median(samples["direct"]) * 1000
    print(f"one connection with a 1 KiB response from a local upstream, median of {runs} runs:")
    for name, values in samples.items():
        ms = statistics.median(values) * 1000
        print(f"  {name:<19} {ms:7.3f} ms   x{ms / base:5.2f}   (+{ms - base:6.3f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    connection_costs(parser.parse_args().runs)


if __name__ == "__main__":
    with recorded("proxy", "Network proxy: the cost of a connection through it, against direct"):
        main()
