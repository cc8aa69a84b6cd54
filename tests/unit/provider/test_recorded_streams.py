"""Every recorded Responses stream, replayed through the SSE decoder and the assembler.

Expected values are computed independently from the raw events of each recording (deltas joined,
`output_item.done` calls, the terminal event's usage), plus facts listed in SOURCES.md.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.protocol import discard
from core.provider.assembler import TurnAssembler
from core.provider.sse import iter_events
from core.session.items import AssistantMessage, FunctionCall, Reasoning
from tests.support.events import Recorder
from tests.support.paths import FIXTURES

RECORDED = FIXTURES / "recorded"


def _streams(path: Path) -> list[list[dict[str, Any]]]:
    """The event payloads of each stream in a recording (a .jsonl may hold several, concatenated)."""
    if path.suffix == ".sse":
        raw = path.read_bytes()
        payloads = [json.loads(e.data) for e in iter_events([raw[i:i + 97] for i in range(0, len(raw), 97)])
                    if e.data.strip() and e.data.strip() != "[DONE]"]
    else:
        payloads = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    streams: list[list[dict[str, Any]]] = []
    for payload in payloads:
        if payload.get("type") == "response.created" or not streams:
            streams.append([])
        streams[-1].append(payload)
    return streams


def _expected(events: list[dict[str, Any]]) -> dict[str, Any]:
    def joined(kind: str) -> str:
        return "".join(e["delta"] for e in events if e["type"] == kind)

    calls = [(e["item"]["name"], e["item"]["call_id"], e["item"]["arguments"]) for e in events
             if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"]
    terminal = events[-1]
    usage = (terminal.get("response") or {}).get("usage") or {}
    return {"text": joined("response.output_text.delta"), "reasoning": joined("response.reasoning_text.delta"),
            "summary": joined("response.reasoning_summary_text.delta"), "calls": calls, "usage": usage,
            "terminal": terminal["type"]}


RESPONSE_FILES = sorted(p for p in RECORDED.iterdir() if p.suffix in (".sse", ".jsonl"))


def _facts(path: Path) -> dict[str, Any]:
    """What each recording shows, measured from its raw events and from the assembler's replay of
    it; per-stream facts are lists with one entry per stream."""
    streams = _streams(path)
    results = []
    for events in streams:
        assembler = TurnAssembler(discard)
        for payload in events:
            if assembler.handle(payload):
                break
        results.append(assembler.result())
    every = [e for events in streams for e in events]
    facts: dict[str, Any] = {
        "streams": len(streams),
        "events": [len(events) for events in streams],
        "sequence_numbers": ("absent" if all("sequence_number" not in e for e in every) else
                             "0.. in each stream" if all([e.get("sequence_number") for e in events] ==
                                                        list(range(len(events))) for events in streams)
                             else "irregular"),
        "deltas": [{t.removeprefix("response.").removesuffix(".delta"): n for t, n in
                    sorted(Counter(e["type"] for e in events if e["type"].endswith(".delta")).items())}
                   for events in streams],
        "terminal": [events[-1]["type"].removeprefix("response.") for events in streams],
        "calls": [[c.name for c in r.calls] for r in results],
        "usage": [(r.usage.input_tokens, r.usage.cached_tokens, r.usage.output_tokens, r.usage.reasoning_tokens)
                  if r.usage else None for r in results],
        "encrypted_reasoning": [any(isinstance(i, Reasoning) and i.encrypted_content for i in r.items)
                                for r in results],
        "error_kind": [r.error.kind if r.error else None for r in results],
        "arguments_done_has_name": any("name" in e for e in every
                                       if e["type"] == "response.function_call_arguments.done"),
        "message_phases": sorted({e["item"].get("phase", "") for e in every if e["type"] ==
                                  "response.output_item.done" and e["item"]["type"] == "message"}),
        "obfuscation": any("obfuscation" in e for e in every),
        "encrypted_changes_on_done": _encrypted_changes(every),
    }
    if path.suffix == ".sse":
        text = path.read_text(encoding="utf-8")
        lines = [line.removeprefix("event: ") for line in text.splitlines() if line.startswith("event: ")]
        facts["event_lines_match_type"] = lines == [e["type"] for e in every]
        facts["done_sentinel"] = "data: [DONE]" in text
    return facts


def _encrypted_changes(events: list[dict[str, Any]]) -> bool:
    added = {e["item"]["id"]: e["item"].get("encrypted_content") for e in events
             if e["type"] == "response.output_item.added" and e["item"]["type"] == "reasoning"}
    return any(e["item"].get("encrypted_content") != added.get(e["item"]["id"]) for e in events
               if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
               and e["item"].get("encrypted_content"))


# Each recording's quirks, from SOURCES.md: what it is there to show. A new recording needs its row.
QUIRKS: dict[str, dict[str, Any]] = {
    "deepseek-responses-stream-reasoning-function-call.sse": {
        "events": [34], "sequence_numbers": "0.. in each stream", "event_lines_match_type": True,
        "done_sentinel": False, "deltas": [{"function_call_arguments": 9, "reasoning_text": 14}],
        "calls": [["get_temperature"]], "arguments_done_has_name": False, "encrypted_reasoning": [False],
        "usage": [(366, 256, 59, 14)]},
    "deepseek-responses-stream-text-after-tool-output.sse": {
        "message_phases": ["final_answer"], "deltas": [{"output_text": 13}], "calls": [[]],
        "usage": [(440, 384, 14, 0)], "event_lines_match_type": True},
    "deepseek-responses-stream-reasoning-text.sse": {
        "events": [27], "sequence_numbers": "0.. in each stream", "message_phases": ["final_answer"],
        "deltas": [{"output_text": 7, "reasoning_text": 7}], "calls": [[]], "usage": [(90, 0, 15, 7)]},
    "openai-responses-stream-function-call-legacy-no-seq.sse": {
        "sequence_numbers": "absent", "deltas": [{"function_call_arguments": 5}], "calls": [["get_capital"]],
        "usage": [(255, 0, 16, 0)]},
    "openai-responses-stream-reasoning-encrypted-function-call.sse": {
        "sequence_numbers": "0.. in each stream", "events": [14], "encrypted_reasoning": [True],
        "deltas": [{"function_call_arguments": 6}], "calls": [["final_result"]], "usage": [(53, 0, 469, 448)]},
    "openai-responses-stream-reasoning-summary-function-call.jsonl": {
        "streams": 4, "sequence_numbers": "0.. in each stream", "encrypted_changes_on_done": True,
        "obfuscation": True, "encrypted_reasoning": [True, False, False, False],
        "calls": [["calculator"], ["calculator"], ["calculator"], []],
        "terminal": ["completed"] * 4},
    "openai-responses-stream-error-event-then-failed.jsonl": {
        "events": [4], "terminal": ["failed"], "error_kind": ["balance"], "calls": [[]], "usage": [None]},
}


def test_every_responses_recording_is_covered() -> None:
    """Every recording has its quirks asserted (and is described in SOURCES.md); no quirk row
    names a recording that is gone or a fact that is not measured."""
    sources = (RECORDED / "SOURCES.md").read_text(encoding="utf-8")
    names = {p.name for p in RESPONSE_FILES}
    assert names == set(QUIRKS)
    assert all(f"`{name}`" in sources for name in names)
    measured = set(_facts(RESPONSE_FILES[0])) | {"event_lines_match_type", "done_sentinel"}
    for name, quirks in QUIRKS.items():
        assert len(quirks) >= 4 and set(quirks) <= measured, name


@pytest.mark.parametrize("name", sorted(QUIRKS))
def test_each_recording_shows_its_quirks(name: str) -> None:
    facts = _facts(RECORDED / name)
    for fact, want in QUIRKS[name].items():
        assert facts[fact] == want, fact


@pytest.mark.parametrize("path", RESPONSE_FILES, ids=lambda p: p.name)
def test_recording_replays_to_the_recorded_values(path: Path) -> None:
    for events in _streams(path):
        recorder = Recorder()
        assembler = TurnAssembler(recorder)
        terminal_seen = False
        for payload in events:
            terminal_seen = assembler.handle(payload)
            if terminal_seen:
                break
        assert terminal_seen, "every recorded stream ends with a terminal event"
        result = assembler.result()
        want = _expected(events)
        text = "".join(i.text for i in result.items if isinstance(i, AssistantMessage))
        reasoning = [i for i in result.items if isinstance(i, Reasoning)]
        assert text == want["text"]
        assert "".join(r.text for r in reasoning) == want["reasoning"]
        assert "".join(r.summary for r in reasoning).replace("\n\n", "") == want["summary"].replace("\n\n", "")
        assert [(c.name, c.call_id, c.arguments) for c in result.calls] == want["calls"]
        streamed_text = recorder.text()
        assert streamed_text == want["text"]
        if want["terminal"] == "response.completed":
            usage = want["usage"]
            assert result.status == "ok"
            assert result.usage is not None
            assert result.usage.input_tokens == usage["input_tokens"]
            assert result.usage.output_tokens == usage["output_tokens"]
            assert result.usage.cached_tokens == usage.get("input_tokens_details", {}).get("cached_tokens", 0)
            assert result.usage.reasoning_tokens == usage.get("output_tokens_details", {}).get("reasoning_tokens", 0)
        # Calls are replayed after reasoning and text.
        kinds = [type(i) for i in result.items]
        assert kinds == sorted(kinds, key=[Reasoning, AssistantMessage, FunctionCall].index)


def _one(name: str) -> Any:
    events = _streams(RECORDED / name)[0]
    assembler = TurnAssembler(discard)
    for payload in events:
        if assembler.handle(payload):
            break
    return assembler.result()


def test_deepseek_function_call_facts_from_sources_md() -> None:
    result = _one("deepseek-responses-stream-reasoning-function-call.sse")
    assert [c.name for c in result.calls] == ["get_temperature"]
    assert result.calls[0].call_id.startswith("call_00_")
    assert json.loads(result.calls[0].arguments)  # arguments assembled into valid JSON
    assert (result.usage.input_tokens, result.usage.cached_tokens, result.usage.output_tokens,
            result.usage.reasoning_tokens) == (366, 256, 59, 14)
    reasoning = result.items[0]
    assert isinstance(reasoning, Reasoning) and reasoning.text and reasoning.encrypted_content is None


def test_deepseek_text_stream_facts() -> None:
    result = _one("deepseek-responses-stream-reasoning-text.sse")
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.reasoning_tokens) == (90, 15, 7)
    assert result.text and not result.calls


def test_openai_legacy_stream_without_sequence_numbers() -> None:
    raw = (RECORDED / "openai-responses-stream-function-call-legacy-no-seq.sse").read_text()
    assert "sequence_number" not in raw
    result = _one("openai-responses-stream-function-call-legacy-no-seq.sse")
    assert len(result.calls) == 1 and json.loads(result.calls[0].arguments) is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (255, 16)


def test_openai_encrypted_reasoning_is_kept_from_output_item_done() -> None:
    events = _streams(RECORDED / "openai-responses-stream-reasoning-summary-function-call.jsonl")[0]
    done = next(e["item"] for e in events if e["type"] == "response.output_item.done"
                and e["item"]["type"] == "reasoning")
    added = next(e["item"] for e in events if e["type"] == "response.output_item.added"
                 and e["item"]["type"] == "reasoning")
    assert done["encrypted_content"] != added["encrypted_content"]
    result = _one("openai-responses-stream-reasoning-summary-function-call.jsonl")
    reasoning = next(i for i in result.items if isinstance(i, Reasoning))
    assert reasoning.encrypted_content == done["encrypted_content"]
    assert reasoning.summary
    replay = reasoning.to_input()
    assert replay["encrypted_content"] == done["encrypted_content"] and replay["summary"][0]["text"]


def test_nested_error_event_fails_the_turn_with_the_provider_message() -> None:
    result = _one("openai-responses-stream-error-event-then-failed.jsonl")
    assert result.status == "error"
    assert result.error is not None and result.error.kind == "balance"
    assert "quota" in result.error.message.lower()


def test_accepted_roundtrip_request_matches_our_replay_shape() -> None:
    """Our items serialise to the shapes DeepSeek accepted in the recorded request."""
    body = json.loads((RECORDED / "deepseek-responses-request-tool-output-roundtrip.json").read_text())
    kinds = [item.get("type", "message") for item in body["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    recorded = body["input"]
    reasoning = Reasoning(id=recorded[1]["id"], text=recorded[1]["content"][0]["text"])
    call = FunctionCall(call_id=recorded[2]["call_id"], name=recorded[2]["name"], arguments=recorded[2]["arguments"])
    ours = [reasoning.to_input(), call.to_input()]
    for mine, theirs in zip(ours, recorded[1:3], strict=True):
        for key, value in mine.items():
            assert theirs[key] == value, key
    assert all(tool["type"] == "function" and "name" in tool and "function" not in tool for tool in body["tools"])
