"""The proxy's door inside a command's own network namespace.

A command in a fresh network namespace has a loopback of its own and nothing else: the host's
127.0.0.1, where the proxy would listen, is out of reach. The proxy listens on a socket file
instead, bound into the sandbox, and this bridge, started inside the namespace before the command,
listens on the namespace's 127.0.0.1 and copies each connection to that file. The command's
HTTP_PROXY names the bridge (`core.network.child_env.proxy_environment`).

    python3 -m core.network.bridge SOCKET_FILE PORT
"""

from __future__ import annotations

import argparse
import socket
import socketserver
import sys
from pathlib import Path

from core.network.relay import relay


class _Forward(socketserver.BaseRequestHandler):
    server: Bridge

    def handle(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as upstream:
            try:
                upstream.connect(str(self.server.target))
            except OSError:
                return  # the proxy is gone: the client sees its connection closed
            relay(self.request, upstream)


class Bridge(socketserver.ThreadingTCPServer):
    """Listens on 127.0.0.1:`port` (0 picks one) and copies every connection to `target`."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, target: Path, port: int = 0) -> None:
        self.target = target
        super().__init__(("127.0.0.1", port), _Forward)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m core.network.bridge", description=__doc__.splitlines()[0]
    )
    parser.add_argument("socket_file", type=Path)
    parser.add_argument("port", type=int)
    args = parser.parse_args(argv)
    try:
        bridge = Bridge(args.socket_file, args.port)
    except OSError as exc:
        raise SystemExit(f"bridge: cannot listen on 127.0.0.1:{args.port}: {exc}") from None
    with bridge:
        bridge.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
