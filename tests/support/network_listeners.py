"""Servers a confined command must or must not reach: a listener on an address of this machine
that is not loopback (what "a server on the network" is to a test with no network), a UDP one, and
an HTTP stand-in for an allowed host."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


def outside_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, or None when it has none. A UDP
    socket "connected" to a documentation address sends nothing; its own address is the one the
    machine would use outward."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.200", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


class Catcher:
    """A TCP and a UDP listener on `address`; `received` holds every byte that reached either."""

    def __init__(self, address: str) -> None:
        self.tcp = socket.create_server((address, 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((address, self.port))
        self.received = bytearray()
        self.connections = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._datagrams, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                while data := conn.recv(65536):
                    with self._lock:
                        self.received += data
            except OSError:
                return

    def _datagrams(self) -> None:
        while True:
            try:
                data = self.udp.recv(65536)
            except OSError:
                return
            with self._lock:
                self.received += data

    def close(self) -> None:
        for sock in (self.tcp, self.udp):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


@contextmanager
def catcher(address: str) -> Iterator[Catcher]:
    found = Catcher(address)
    try:
        yield found
    finally:
        found.close()


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"stand-in answered {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def stand_in() -> Iterator[int]:
    """An HTTP server on 127.0.0.1 answering every GET with its path; yields its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
