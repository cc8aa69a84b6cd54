"""The published `--json` stream: every line carries its type and the protocol version, the checked-in
JSON Schema is the one the dataclasses give, and it refuses what is not the protocol (real runs
validating against it: tests/e2e/test_json_stream.py)."""

from __future__ import annotations

import ast
import dataclasses
import json
import types
import typing

import pytest

from core import protocol as ev
from tests.support.event_schema import SCHEMA_FILE, as_v1_reader_sees, event_validator, v1_validator
from tests.support.paths import ROOT


def test_the_checked_in_schema_is_current() -> None:
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == ev.schema(), \
        "regenerate it: python3 -m ui.jsonl --schema > docs/events.schema.json"


def _sample(cls: type) -> ev.Event:
    """An instance with a value of the right type in every field (rows inside it included)."""
    values = {int: 1, float: 0.5, str: "文本", bool: True}
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        base = next(t for t in options if t is not type(None))
        origin = typing.get_origin(base)
        if origin is typing.Literal:
            kwargs[f.name] = typing.get_args(base)[-1]
        elif origin is list:
            (item,) = typing.get_args(base)
            kwargs[f.name] = [_sample(item)] if dataclasses.is_dataclass(item) else []
        else:
            kwargs[f.name] = {} if origin is dict else values.get(base, "x")
    return cls(**kwargs)


@pytest.mark.parametrize("cls", typing.get_args(ev.Event), ids=lambda c: c.type)
def test_every_event_kind_round_trips(cls: type) -> None:
    event = _sample(cls)
    wire = ev.to_wire(event)
    assert list(wire)[:2] == ["type", "v"] and wire["v"] == ev.PROTOCOL_VERSION == 2
    assert ev.from_wire(json.loads(json.dumps(wire, ensure_ascii=False))) == event


@pytest.mark.parametrize("cls", ev.PUBLISHED, ids=lambda c: c.type)
def test_every_published_line_validates_and_a_version_1_reader_reads_it(cls: type) -> None:
    event = _sample(cls)
    line = json.loads(json.dumps(ev.publish(event), ensure_ascii=False))
    event_validator().validate(line)
    assert ev.from_wire(line) == (dataclasses.replace(event, trace="") if cls is ev.InternalError else event)
    seen = as_v1_reader_sees(line)
    if seen is not None:  # a kind version 1 had: every field it named is there, as it was
        v1_validator().validate(seen)


@pytest.mark.parametrize("event", [ev.RequestSent(attempt=1, max_attempts=3), ev.FirstByte(latency=0.2),
                                   ev.JobStarted(kind="task", text="go", op_id="op-1"),
                                   ev.JobEnded(kind="command", op_id="op-2")], ids=lambda e: e.type)
def test_internal_events_are_not_published(event: ev.Event) -> None:
    assert ev.publish(event) is None
    assert not event_validator().is_valid(ev.to_wire(event))


def test_a_traceback_is_not_published() -> None:
    trace = 'Traceback (most recent call last):\n  File "/home/dev/core/x.py", line 3\nKeyError: 1'
    line = ev.publish(ev.InternalError(message="KeyError: 1", trace=trace))
    assert line == {"type": "internal_error", "v": 2, "message": "KeyError: 1", "trace": ""}


def test_version_1_lines_are_still_read() -> None:
    """Lines as version 1 wrote them, internal kinds and tracebacks included."""
    lines = [{"type": "request_sent", "v": 1, "attempt": 1, "max_attempts": 3},
             {"type": "job_started", "v": 1, "kind": "task", "text": "修复", "op_id": "op-1"},
             {"type": "internal_error", "v": 1, "message": "boom", "trace": "Traceback …"},
             {"type": "tool", "v": 1, "call_id": "c1", "name": "run_shell", "arguments": {"command": "ls"},
              "result": "exit code 0", "status": "ok", "duration": 0.1, "model_result": "exit code 0",
              "server": ""},
             {"type": "done", "v": 1, "status": "ok", "text": "好", "steps": 2}]
    for line in lines:
        v1_validator().validate(line)
    events = [ev.from_wire(line) for line in lines]
    assert events[2] == ev.InternalError(message="boom", trace="Traceback …")
    finished = events[3]
    assert isinstance(finished, ev.ToolFinished) and finished.pruned_from is None and finished.status == "ok"
    with pytest.raises(ValueError, match="protocol version 3"):
        ev.from_wire({**lines[-1], "v": 3})


@pytest.mark.parametrize("line", [
    {"type": "telemetry", "v": 2, "message": "x"},  # an unknown kind
    {"type": "text", "v": 2, "delta": "x"},  # a required field missing
    {"type": "text", "v": 2, "delta": "x", "item_id": "m", "extra": 1},  # a field no kind has
    {"type": "text", "v": 1, "delta": "x", "item_id": "m"},  # another protocol version
    {"type": "done", "v": 2, "status": "ok", "text": "t", "steps": "three"},  # a wrong type
    {"type": "first_byte", "v": 2, "latency": 0.1},  # an internal kind
    {"event": "text", "delta": "x", "item_id": "m"},  # the old unversioned form
])
def test_lines_outside_the_protocol_do_not_validate(line: dict) -> None:
    assert not event_validator().is_valid(line)
    if line.get("type") == "telemetry":
        with pytest.raises(ValueError, match="unknown event type"):
            ev.from_wire(line)


def _variant(kind: str) -> dict:
    return next(v for v in ev.schema()["oneOf"] if v["properties"]["type"]["const"] == kind)


@pytest.mark.parametrize(("kind", "name", "value"), [
    ("tool", "status", "refused"), ("approval", "kind", "unconfined"), ("approval_done", "decision", "workspace"),
    ("approval_done", "by", "interrupt"), ("session", "mode", "auto"), ("notice", "kind", "retry"),
    ("notice", "error_kind", "rate_limit"), ("error", "kind", "context_overflow"), ("done", "status", "step_limit"),
    ("compaction_done", "status", "aborted"), ("mcp_changed", "action", "allow"),
])
def test_enum_like_fields_list_their_values_and_refuse_others(kind: str, name: str, value: str) -> None:
    field_schema = json.dumps(_variant(kind)["properties"][name])
    assert '"enum"' in field_schema and f'"{value}"' in field_schema
    cls = next(c for c in typing.get_args(ev.Event) if c.type == kind)
    wire = ev.to_wire(dataclasses.replace(_sample(cls), **{name: value}))
    assert event_validator().is_valid(wire)
    assert not event_validator().is_valid({**wire, name: value.upper()})


def _constant_kinds(call_names: set[str]) -> set[str]:
    """Every constant `kind=` given to a call of one of `call_names` anywhere in core/."""
    found = set()
    for path in (ROOT / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in call_names:
                found |= {k.value.value for k in node.keywords
                          if k.arg == "kind" and isinstance(k.value, ast.Constant)}
    return found


def test_every_error_and_notice_kind_the_core_emits_is_in_the_protocol() -> None:
    errors, notices = _constant_kinds({"ApiError", "Error"}), _constant_kinds({"Notice"})
    assert {"auth", "network", "stuck", "step_limit"} <= errors  # the walk found the core's errors
    assert errors <= set(typing.get_args(ev.ErrorKind)), errors - set(typing.get_args(ev.ErrorKind))
    assert notices and notices <= set(typing.get_args(ev.NoticeKind)), notices
