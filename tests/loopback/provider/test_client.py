"""The client against a real HTTP server on 127.0.0.1: streaming, errors and retries."""

from __future__ import annotations

import json

from core import protocol as ev
from core.provider.client import ResponsesClient
from tests.conftest import TEST_KEY, make_settings
from tests.support.events import Recorder
from tests.support.paths import FIXTURES
from tests.support.sse_server import Reply, ScriptedServer, call_events, encode_event, text_events

BODY = {"model": "m", "input": [{"role": "user", "content": "hi"}]}


def _stream(server: ScriptedServer, recorder: Recorder, **env: str):
    client = ResponsesClient(make_settings(server.url, **env))
    try:
        return client.stream(BODY, recorder)
    finally:
        client.close()


def test_streams_text_and_sends_a_proper_request(recorder: Recorder) -> None:
    with ScriptedServer([Reply(text_events("你好, world!", reasoning="hmm"))]) as server:
        result = _stream(server, recorder)
    assert result.status == "ok" and result.text == "你好, world!"
    assert recorder.text() == "你好, world!"
    assert [d.delta for d in recorder.of(ev.ReasoningDelta)] == ["hmm"]
    assert server.requests[0]["stream"] is True and server.requests[0]["model"] == "m"
    assert server.headers[0]["Authorization"] == f"Bearer {TEST_KEY}"
    assert result.usage is not None and result.usage.cached_tokens == 50


def test_429_with_retry_after_is_retried_once_after_waiting(recorder: Recorder) -> None:
    script = [Reply(status=429, body=b'{"error":{"message":"slow down"}}', headers={"Retry-After": "1"}),
              Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        result = _stream(server, recorder)
    assert result.status == "ok" and result.text == "ok"
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 1.0
    notices = [d.message for d in recorder.of(ev.Notice) if d.kind == "retry"]
    assert len(notices) == 1 and "retrying in 1.0 s, attempt 2 of 5" in notices[0] and "slow down" in notices[0]


def test_retry_after_ms_is_honoured(recorder: Recorder) -> None:
    script = [Reply(status=429, body=b"{}", headers={"retry-after-ms": "300", "Retry-After": "9"}),
              Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        result = _stream(server, recorder)
    assert result.text == "ok" and 0.3 <= server.times[1] - server.times[0] < 5


def test_503_twice_then_success(recorder: Recorder) -> None:
    busy = Reply(status=503, body=b'{"error":{"message":"Server overloaded","type":"service_unavailable_error"}}')
    with ScriptedServer([busy, busy, Reply(text_events("done"))]) as server:
        result = _stream(server, recorder)
    assert result.status == "ok" and len(server.requests) == 3
    notices = [n.message for n in recorder.of(ev.Notice)]
    assert len(notices) == 2 and "Server overloaded" in notices[0]
    assert notices[0].endswith("attempt 2 of 5") and notices[1].endswith("attempt 3 of 5")


def test_connection_reset_before_first_byte_is_retried(recorder: Recorder) -> None:
    with ScriptedServer([Reply(reset=True), Reply(text_events("after reset"))]) as server:
        result = _stream(server, recorder)
    assert result.text == "after reset" and len(server.requests) == 2


def test_drop_after_text_is_not_retried_and_keeps_the_partial_text(recorder: Recorder) -> None:
    events = text_events("one two three four", chunks=4)
    with ScriptedServer([Reply(events, drop_after=4), Reply(text_events("never"))]) as server:
        result = _stream(server, recorder)
    assert len(server.requests) == 1
    assert result.status == "error" and result.error is not None
    assert "not retried" in result.error.message and "kept" in result.error.message
    assert recorder.text() == result.text != ""
    assert result.items[-1].status == "incomplete"


def test_drop_before_anything_was_shown_is_retried(recorder: Recorder) -> None:
    events = text_events("hello")
    with ScriptedServer([Reply(events, drop_after=1), Reply(text_events("hello"))]) as server:
        result = _stream(server, recorder)
    assert result.text == "hello" and len(server.requests) == 2 and recorder.text() == "hello"


def test_401_is_not_retried_and_names_the_key_source(recorder: Recorder) -> None:
    body = b'{"error":{"message":"Authentication Fails, Your api key is invalid","type":"authentication_error"}}'
    with ScriptedServer([Reply(status=401, body=body), Reply(text_events("x"))]) as server:
        result = _stream(server, recorder)
    assert len(server.requests) == 1 and result.status == "error"
    assert result.error.kind == "auth"
    assert "rejected" in result.error.message and "DEEPSEEK_API_KEY" in result.error.message
    assert "Authentication Fails" in result.error.message


def test_402_says_the_balance_is_exhausted(recorder: Recorder) -> None:
    body = b'{"error":{"message":"Insufficient Balance","type":"unknown_error"}}'
    with ScriptedServer([Reply(status=402, body=body)]) as server:
        result = _stream(server, recorder)
    assert len(server.requests) == 1 and result.error.kind == "balance" and "balance" in result.error.message


def test_400_octet_stream_shows_the_provider_message(recorder: Recorder) -> None:

    body = (FIXTURES / "recorded/deepseek-responses-error-400-no-tool-output.json").read_bytes()
    with ScriptedServer([Reply(status=400, body=body, content_type="application/octet-stream")]) as server:
        result = _stream(server, recorder)
    assert len(server.requests) == 1
    assert "No tool output found for tool call call-a." in result.error.message
    assert result.error.kind == "invalid_request"


def test_tolerates_keepalives_done_unknown_events_and_malformed_json(recorder: Recorder) -> None:
    events = call_events([("read_file", {"path": "a.txt"})])
    noise = [b": keep-alive\n\n", b"data: {not json\n\n", encode_event({"type": "response.new_thing", "x": 1}),
             b"data: [DONE]\n\n"]
    # No `event:` lines and no sequence numbers, like some third-party servers.
    with ScriptedServer([Reply(events, extra_chunks=noise, event_lines=False)]) as server:
        result = _stream(server, recorder)
    assert result.status == "ok"
    assert [(c.name, json.loads(c.arguments)) for c in result.calls] == [("read_file", {"path": "a.txt"})]
    assert any("malformed" in n.message for n in recorder.of(ev.Notice))


def test_stream_without_terminal_event_is_an_error(recorder: Recorder) -> None:
    events = [e for e in text_events("cut") if not e["type"].startswith("response.completed")]
    with ScriptedServer([Reply(events)]) as server:
        result = _stream(server, recorder, AGENT_MAX_RETRIES="0")
    assert result.status == "error" and "ended before the response was complete" in result.error.message


def test_oversized_event_fails_the_turn_clearly(recorder: Recorder) -> None:
    huge = b"data: " + b"x" * (20 * 1024 * 1024) + b"\n\n"
    with ScriptedServer([Reply(raw=huge)]) as server:
        result = _stream(server, recorder)
    assert result.status == "error" and "exceeded 16 MB" in result.error.message
    assert len(server.requests) == 1


def test_incomplete_response_reports_its_reason(recorder: Recorder) -> None:
    from tests.support.sse_server import completed

    events = [*text_events("partial")[:-1],
              completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"})]
    with ScriptedServer([Reply(events)]) as server:
        result = _stream(server, recorder)
    assert result.status == "incomplete" and result.incomplete_reason == "max_output_tokens"


def test_failed_response_in_stream_is_retried_when_nothing_was_shown(recorder: Recorder) -> None:
    from tests.support.sse_server import completed

    failed = [{"type": "response.created", "response": {"id": "r"}},
              completed(status="failed", error={"code": "server_error", "message": "boom"})]
    with ScriptedServer([Reply(failed), Reply(text_events("fine"))]) as server:
        result = _stream(server, recorder)
    assert result.text == "fine" and len(server.requests) == 2


def _closed_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_nothing_listening_on_loopback_is_not_retried_and_names_the_url(recorder: Recorder) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    client = ResponsesClient(make_settings(url))
    try:
        result = client.stream(BODY, recorder)
    finally:
        client.close()
    assert result.error is not None and result.error.kind == "network" and not result.error.retryable
    assert f"DEEPSEEK_BASE_URL={url} (from the environment)" in result.error.message
    assert "Nothing is listening" in result.error.message
    assert recorder.of(ev.Notice) == []  # no retry announced


def _failing_lookup(monkeypatch, code: int, text: str) -> None:
    import socket

    def getaddrinfo(*args, **kwargs):
        raise socket.gaierror(code, text)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_name_that_does_not_resolve_is_not_retried(recorder: Recorder, monkeypatch) -> None:
    import socket

    _failing_lookup(monkeypatch, socket.EAI_NONAME, "Name or service not known")
    client = ResponsesClient(make_settings("https://api.deepseek.con"))
    try:
        result = client.stream(BODY, recorder)
    finally:
        client.close()
    assert result.error is not None and not result.error.retryable
    message = result.error.message
    assert "DEEPSEEK_BASE_URL=https://api.deepseek.con" in message and "does not exist" in message
    assert "spelling" in message and recorder.of(ev.Notice) == []


def test_a_temporary_lookup_failure_is_retried_and_says_why(recorder: Recorder, monkeypatch) -> None:
    import socket

    _failing_lookup(monkeypatch, socket.EAI_AGAIN, "Temporary failure in name resolution")
    client = ResponsesClient(make_settings("https://api.deepseek.com", AGENT_MAX_RETRIES="2"), sleep=lambda s: None)
    try:
        result = client.stream(BODY, recorder)
    finally:
        client.close()
    notices = [n.message for n in recorder.of(ev.Notice) if n.kind == "retry"]
    assert len(notices) == 2 and all("name server may be down" in n and "retrying in" in n for n in notices)
    assert result.error is not None and "DEEPSEEK_BASE_URL=https://api.deepseek.com (from the environment)" in result.error.message


def test_a_remote_server_refusing_is_retried_because_it_may_be_restarting(recorder: Recorder, monkeypatch) -> None:
    from core import config

    monkeypatch.setattr(config, "is_loopback", lambda url: False)  # stands in for a remote host
    port = _closed_port()
    client = ResponsesClient(make_settings(f"http://127.0.0.1:{port}", AGENT_MAX_RETRIES="1"), sleep=lambda s: None)
    try:
        result = client.stream(BODY, recorder)
    finally:
        client.close()
    notices = [n.message for n in recorder.of(ev.Notice) if n.kind == "retry"]
    assert len(notices) == 1 and "refused the connection; it may be restarting; retrying in" in notices[0]
    assert result.error is not None and f"127.0.0.1:{port}" in result.error.message
