"""A small threaded HTTP server on 127.0.0.1 that plays a scripted Responses-API model.

Each request takes the next `Reply` from the script (the last one repeats when the script runs
out) and the server records every request body, so tests can assert what the client sent.
Replies can stream SSE (chunked, like DeepSeek), fail with an HTTP status, reset the connection,
stall, drop mid-stream or mid-line, or send any raw bytes: the faults real networks produce.
"""

from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    events: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    event_lines: bool = True  # write `event: <type>` before each `data:` line
    delay: float = 0.0  # seconds between events
    pause_at: int | None = None  # pause `pause` seconds before this event (a stall mid-stream)
    pause: float = 0.0
    stall_before: float = 0.0  # seconds before the first byte
    drop_after: int | None = None  # close the connection after this many events
    cut_mid_line: bool = False  # with drop_after: cut the next event's line in half first
    reset: bool = False  # reset the connection before answering
    raw: bytes | None = None  # send these bytes as the SSE body instead of `events`
    extra_chunks: list[bytes] = field(default_factory=list)  # sent before the events (comments, junk)


_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids)}"


def text_events(text: str, reasoning: str = "", chunks: int = 3) -> list[dict[str, Any]]:
    """A DeepSeek-shaped response: optional reasoning item, then a message streamed in pieces."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": _next_id("resp"), "status": "in_progress"}}]
    index = 0
    if reasoning:
        events += _reasoning(reasoning, index)
        index += 1
    msg_id = _next_id("msg")
    events.append({"type": "response.output_item.added", "output_index": index,
                   "item": {"type": "message", "id": msg_id, "role": "assistant", "content": [], "status": "in_progress"}})
    size = max(1, -(-len(text) // chunks))
    for start in range(0, len(text), size):
        events.append({"type": "response.output_text.delta", "item_id": msg_id, "output_index": index,
                       "content_index": 0, "delta": text[start:start + size]})
    events.append({"type": "response.output_text.done", "item_id": msg_id, "output_index": index,
                   "content_index": 0, "text": text})
    events.append({"type": "response.output_item.done", "output_index": index,
                   "item": {"type": "message", "id": msg_id, "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": text, "annotations": []}]}})
    events.append(completed(input_tokens=100, cached=50, output=20))
    return events


def _reasoning(text: str, index: int) -> list[dict[str, Any]]:
    rid = _next_id("rs")
    return [
        {"type": "response.output_item.added", "output_index": index,
         "item": {"type": "reasoning", "id": rid, "summary": [], "content": []}},
        {"type": "response.reasoning_text.delta", "item_id": rid, "output_index": index, "content_index": 0,
         "delta": text},
        {"type": "response.reasoning_text.done", "item_id": rid, "output_index": index, "content_index": 0,
         "text": text},
        {"type": "response.output_item.done", "output_index": index,
         "item": {"type": "reasoning", "id": rid, "summary": [],
                  "content": [{"type": "reasoning_text", "text": text}]}},
    ]


def call_events(calls: list[tuple[str, dict[str, Any]]], reasoning: str = "think") -> list[dict[str, Any]]:
    """A response whose output is reasoning then one function call per (name, arguments)."""
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": _next_id("resp")}}]
    index = 0
    if reasoning:
        events += _reasoning(reasoning, index)
        index += 1
    for name, arguments in calls:
        fid, call_id = _next_id("fc"), _next_id("call")
        args = json.dumps(arguments, ensure_ascii=False)
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": {"type": "function_call", "id": fid, "call_id": call_id, "name": name,
                                "arguments": "", "status": "in_progress"}})
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            events.append({"type": "response.function_call_arguments.delta", "item_id": fid,
                           "output_index": index, "delta": piece})
        events.append({"type": "response.function_call_arguments.done", "item_id": fid, "output_index": index,
                       "arguments": args})
        events.append({"type": "response.output_item.done", "output_index": index,
                       "item": {"type": "function_call", "id": fid, "call_id": call_id, "name": name,
                                "arguments": args, "status": "completed"}})
        index += 1
    events.append(completed(input_tokens=200, cached=100, output=30, reasoning=5))
    return events


def completed(input_tokens: int = 10, cached: int = 0, output: int = 5, reasoning: int = 0,
              status: str = "completed", **response: Any) -> dict[str, Any]:
    kind = {"completed": "response.completed", "incomplete": "response.incomplete",
            "failed": "response.failed"}[status]
    return {"type": kind, "response": {
        "id": _next_id("resp"), "status": status, **response,
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
                  "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
                  "total_tokens": input_tokens + output}}}


def encode_event(event: dict[str, Any], event_line: bool = True) -> bytes:
    data = json.dumps(event, ensure_ascii=False)
    head = f"event: {event.get('type', 'message')}\n" if event_line else ""
    return f"{head}data: {data}\n\n".encode()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients dropping connections is what the fault tests are about: no tracebacks."""


class ScriptedServer:
    """`with ScriptedServer([Reply(...), ...]) as server:` then point the client at `server.url`."""

    def __init__(self, script: list[Reply] | None = None,
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.script: list[Reply] = list(script or [])
        self.responder = responder  # when set, decides every reply from the request body
        self.keep_requests = True  # a long soak turns it off to keep the server's memory flat
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            if self.keep_requests:
                self.requests.append(body)
                self.headers.append(headers)
                self.times.append(time.monotonic())
            if self.responder is not None:
                return self.responder(body)
            if len(self.script) > 1:
                return self.script.pop(0)
            return self.script[0] if self.script else Reply(status=500, body=b'{"error":{"message":"no script"}}')

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                reply = server._next(body, dict(self.headers))
                if reply.stall_before:
                    time.sleep(reply.stall_before)
                if reply.reset:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if reply.status != 200:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type if reply.content_type != "text/event-stream"
                                     else "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self._stream(reply)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _stream(self, reply: Reply) -> None:
                try:
                    for extra in reply.extra_chunks:
                        self._chunk(extra)
                    if reply.raw is not None:
                        self._chunk(reply.raw)
                    for n, event in enumerate(reply.events):
                        if reply.drop_after is not None and n >= reply.drop_after:
                            if reply.cut_mid_line:
                                data = encode_event(event, reply.event_lines)
                                self._chunk(data[: len(data) // 2])
                            self.close_connection = True
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        if reply.delay and n:
                            time.sleep(reply.delay)
                        if n == reply.pause_at:
                            time.sleep(reply.pause)
                        self._chunk(encode_event(event, reply.event_lines))
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True

        return Handler
