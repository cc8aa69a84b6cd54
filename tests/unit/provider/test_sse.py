"""SSE decoding: framing, tolerance, and the size bound."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.provider.sse import EventTooLarge, SSEDecoder, iter_events

STREAM = (b'event: response.created\r\ndata: {"a":1}\r\n\r\n'
          b": keep-alive\n\n"
          b"data: line one\ndata: line two\n\n"
          b"data:no-space\r\r"
          b"id: 7\nretry: 10\nunknown-field: x\ndata: [DONE]\n\n"
          b"data: last event without blank line")
EXPECTED = [("response.created", '{"a":1}'), ("", "line one\nline two"), ("", "no-space"), ("", "[DONE]"),
            ("", "last event without blank line")]


def test_decodes_events_comments_multiline_and_mixed_line_endings() -> None:
    assert [(e.event, e.data) for e in iter_events([STREAM])] == EXPECTED


@given(st.lists(st.integers(min_value=1, max_value=len(STREAM)), max_size=40))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert [(e.event, e.data) for e in iter_events(chunks)] == EXPECTED


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    events = list(iter_events([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]))
    assert [e.data for e in events] == ["a\nb"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    events = list(iter_events([b"data: \xff\xfe ok\n\n"]))
    assert events[0].data == "\ufffd\ufffd ok"


def test_event_size_is_bounded() -> None:
    decoder = SSEDecoder(max_event_bytes=1024)
    with pytest.raises(EventTooLarge):
        for _ in range(10):
            list(decoder.feed(b"data: " + b"x" * 200 + b"\n"))
    decoder = SSEDecoder(max_event_bytes=1024)
    with pytest.raises(EventTooLarge):
        list(decoder.feed(b"data: " + b"y" * 2000))  # one unfinished line


def test_a_long_line_in_small_chunks_is_linear() -> None:
    """16 MB arriving 64 KB at a time must not rescan the buffer on every chunk."""
    import time

    body = b"data: " + b"z" * (8 * 1024 * 1024) + b"\n\n"
    start = time.perf_counter()
    events = list(iter_events(body[i:i + 65536] for i in range(0, len(body), 65536)))
    assert len(events[0].data) == 8 * 1024 * 1024
    assert time.perf_counter() - start < 2.0
