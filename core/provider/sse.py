"""Server-sent events decoding, tolerant of what real servers send.

Follows the SSE spec as the OpenAI SDK's decoder does: `:` comment lines (DeepSeek's
`: keep-alive`) are ignored, one space after the colon is stripped, several `data:` lines are joined
with a newline, a blank line dispatches the event, and `\\r\\n`, `\\r` and `\\n` all end lines.
The `event:` line is optional: callers dispatch on the JSON payload's `type`.

One event is bounded in size, so a broken or hostile server cannot make the client buffer
gigabytes: past the bound the decoder raises `EventTooLarge`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAX_EVENT_BYTES = 16 * 1024 * 1024


class EventTooLarge(Exception):
    """An event (or a single line) grew past the decoder's bound."""


@dataclass
class ServerEvent:
    data: str
    event: str = ""
    id: str = ""


class SSEDecoder:
    """Feed bytes in chunks of any size; get complete events out."""

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._max = max_event_bytes
        self._buf = bytearray()
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._id = ""
        self._scan = 0  # bytes of the buffer before this offset hold no line ending

    def feed(self, chunk: bytes) -> Iterator[ServerEvent]:
        buf = self._buf
        buf += chunk
        start = 0
        while True:
            eol = _find_eol(buf, start, self._scan)
            if eol < 0:
                break
            line = bytes(buf[start:eol])
            start = eol + 1
            if buf[eol] == 0x0D and start < len(buf) and buf[start] == 0x0A:
                start += 1
            self._scan = start
            event = self._line(line)
            if event is not None:
                yield event
        del buf[:start]
        # Everything left is one unfinished line: the next search resumes where this one stopped.
        self._scan = max(0, len(buf) - 1)
        if len(buf) + self._data_size > self._max:
            raise EventTooLarge(f"a server event exceeded {self._max // (1024 * 1024)} MB")

    def flush(self) -> Iterator[ServerEvent]:
        """End of stream: a final event without its blank line is still delivered."""
        if self._buf:
            event = self._line(bytes(self._buf))
            self._buf.clear()
            if event is not None:
                yield event
        event = self._line(b"")
        if event is not None:
            yield event

    def _line(self, raw: bytes) -> ServerEvent | None:
        if not raw:
            if not self._data and not self._event:
                return None
            event = ServerEvent(data="\n".join(self._data), event=self._event, id=self._id)
            self._data, self._data_size, self._event = [], 0, ""
            return event
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(raw)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None


def _find_eol(buf: bytearray, start: int, scan: int) -> int:
    """The index of the next line ending at or after max(start, scan), or -1."""
    pos = max(start, scan)
    nl = buf.find(b"\n", pos)
    cr = buf.find(b"\r", pos, nl if nl >= 0 else len(buf))
    if cr >= 0 and nl < 0 and cr + 1 == len(buf):
        return -1  # a trailing \r may be the first half of \r\n: wait for more bytes
    return cr if cr >= 0 else nl


def iter_events(chunks: Iterable[bytes], max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[ServerEvent]:
    """Decode a whole byte stream (used for recorded fixtures and tests)."""
    decoder = SSEDecoder(max_event_bytes)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.flush()
