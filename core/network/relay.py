"""Copying bytes both ways between two sockets: the proxy's tunnels."""

from __future__ import annotations

import contextlib
import selectors
import socket

_CHUNK = 64 * 1024
_IDLE_SECONDS = 300.0  # a connection with no traffic either way for this long is closed


def relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides have finished sending (or nothing moves for a while)."""
    for sock in (a, b):
        sock.settimeout(None)
    with selectors.DefaultSelector() as selector:
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        open_sides = 2
        while open_sides:
            ready = selector.select(_IDLE_SECONDS)
            if not ready:
                return
            for key, _ in ready:
                source, sink = key.fileobj, key.data
                try:
                    data = source.recv(_CHUNK)  # type: ignore[union-attr]
                    if data:
                        sink.sendall(data)
                        continue
                except OSError:
                    return
                selector.unregister(source)
                open_sides -= 1
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)
