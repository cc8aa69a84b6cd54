"""Regression tests from real llama.cpp `llama-server` recordings (tests/fixtures/llama/).

They pin the deviations the real-server tier found, so the core keeps handling them without
the server: no `output_index`/`sequence_number`, no `function_call_arguments.done`, truncation
reported as `completed`, a typeless `data: {"error": ...}` ending a failed stream, and JSON
error bodies with numeric codes.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.provider.assembler import TurnAssembler, TurnResult
from core.provider.errors import from_http
from core.provider.sse import iter_events
from tests.support.events import Recorder
from tests.support.paths import FIXTURES
from tests.support.sse_server import Reply, ScriptedServer

LLAMA = FIXTURES / "llama"


def replay(name: str) -> tuple[TurnResult, list[dict], Recorder]:
    raw = (LLAMA / name).read_bytes()
    payloads = [json.loads(e.data) for e in iter_events([raw])]
    emitted = Recorder()
    assembler = TurnAssembler(emitted)
    for payload in payloads:
        if assembler.handle(payload):
            break
    return assembler.result(cut_off=not assembler.terminal), payloads, emitted


def test_text_stream_without_indices_or_sequence_numbers() -> None:
    result, payloads, emitted = replay("smollm2-text-stream.sse")
    assert not any("sequence_number" in p or "output_index" in p for p in payloads)
    deltas = "".join(p["delta"] for p in payloads if p["type"] == "response.output_text.delta")
    assert result.status == "ok" and result.text == deltas != ""
    assert emitted.text() == deltas
    assert result.usage is not None and result.usage.input_tokens > 0


def test_function_call_without_arguments_done() -> None:
    result, payloads, _ = replay("qwen-function-call-stream.sse")
    assert not any(p["type"] == "response.function_call_arguments.done" for p in payloads)
    (call,) = result.calls
    assert call.name == "run_shell" and "echo hello" in json.loads(call.arguments)["command"]
    assert call.call_id.startswith("call_")


def test_truncation_is_reported_as_completed_and_leaves_broken_arguments() -> None:
    result, _, _ = replay("qwen-function-call-truncated-stream.sse")
    assert result.status == "ok"
    for call in result.calls:  # whatever arrived is kept; the tool runner will reject bad JSON clearly
        try:
            json.loads(call.arguments)
        except ValueError:
            break
    result, _, _ = replay("smollm2-max-output-tokens-stream.sse")
    assert result.status == "ok" and result.text


def test_unparsable_model_output_mid_stream_is_a_clear_failure() -> None:
    result, _, _ = replay("qwen-unparsable-output-stream.sse")
    assert result.status == "error"
    assert "does not match the expected" in result.error.message
    # Resending the same request gets the same answer: the loop asks again with a correction instead.
    assert result.error.kind == "model_output" and not result.error.retryable


def test_http_errors_with_numeric_codes() -> None:
    index = json.loads((LLAMA / "index.json").read_text())
    for name, status in (("qwen-previous-response-id", 400), ("qwen-unparsable-output", 500)):
        entry = index[name]
        assert entry["status"] == status
        error = from_http(status, (LLAMA / entry["file"]).read_bytes())
        assert not error.retryable and error.kind == ("model_output" if status == 500 else "invalid_request")
        assert json.loads((LLAMA / entry["file"]).read_text())["error"]["message"] in error.message


def test_the_real_failed_stream_through_the_client_is_not_a_crash(tmp_path: Path) -> None:
    from core.provider.client import ResponsesClient
    from tests.conftest import make_settings

    raw = (LLAMA / "qwen-unparsable-output-stream.sse").read_bytes()
    recorder = Recorder()
    with ScriptedServer([Reply(raw=raw)]) as server:
        client = ResponsesClient(make_settings(server.url, AGENT_MAX_RETRIES="1"))
        result = client.stream({"model": "qwen", "input": "x"}, recorder)
        client.close()
    # Text was already shown, so it is not retried; the error names the server's reason.
    assert result.status == "error" and len(server.requests) == 1
    assert "peg-native" in result.error.message
