"""The published `--json` stream: every line carries its type and the protocol version, the checked-in
JSON Schema is the one the dataclasses give, and real runs validate against it."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from core import protocol as ev
from tests.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.test_one_shot import run_agent

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "events.schema.json"


def _validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def test_the_checked_in_schema_is_current() -> None:
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == ev.schema(), \
        "regenerate it: python3 -m ui.jsonl --schema > docs/events.schema.json"


def _sample(cls: type) -> ev.Event:
    """An instance with a value of the right type in every field."""
    values = {int: 1, float: 0.5, str: "文本", bool: True}
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        base = next(t for t in options if t is not type(None))
        origin = typing.get_origin(base)
        kwargs[f.name] = [] if origin is list else {} if origin is dict else values.get(base, "x")
    return cls(**kwargs)


@pytest.mark.parametrize("cls", typing.get_args(ev.Event), ids=lambda c: c.type)
def test_every_event_kind_round_trips_and_validates(cls: type) -> None:
    event = _sample(cls)
    wire = ev.to_wire(event)
    assert list(wire)[:2] == ["type", "v"] and wire["v"] == ev.PROTOCOL_VERSION
    _validator().validate(json.loads(json.dumps(wire, ensure_ascii=False)))
    assert ev.from_wire(wire) == event


@pytest.mark.parametrize("line", [
    {"type": "telemetry", "v": 1, "message": "x"},  # an unknown kind
    {"type": "text", "v": 1, "delta": "x"},  # a required field missing
    {"type": "text", "v": 1, "delta": "x", "item_id": "m", "extra": 1},  # a field no kind has
    {"type": "text", "v": 2, "delta": "x", "item_id": "m"},  # another protocol version
    {"type": "done", "v": 1, "status": "ok", "text": "t", "steps": "three"},  # a wrong type
    {"event": "text", "delta": "x", "item_id": "m"},  # the old unversioned form
])
def test_lines_outside_the_protocol_do_not_validate(line: dict) -> None:
    assert not _validator().is_valid(line)
    if line.get("type") == "telemetry":
        with pytest.raises(ValueError, match="unknown event type"):
            ev.from_wire(line)


def test_every_line_of_real_one_shot_runs_validates(tmp_path: Path) -> None:
    script = [Reply(status=503, body=b"busy"),
              Reply(call_events([("run_shell", {"command": "rm -rf ~"}), ("read_file", {"path": "说明.md"})])),
              Reply(call_events([("write_file", {"path": "a.txt", "content": "你好\n"})])),
              Reply(text_events("完成 done", reasoning="想一想"))]
    lines: list[str] = []
    with ScriptedServer(script) as server:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "说明.md").write_text("内容\n", encoding="utf-8")
        done = run_agent(["--one", "整理", "--json", "--cwd", str(tmp_path / "ws")], server.url, tmp_path)
        lines += done.stdout.decode("utf-8").splitlines()
    with ScriptedServer([Reply(status=400, body=b'{"error":{"message":"bad request"}}')]) as server:
        lines += run_agent(["--one", "x", "--json"], server.url, tmp_path).stdout.decode("utf-8").splitlines()
    validator = _validator()
    kinds = set()
    for line in lines:
        data = json.loads(line)
        errors = [e.message for e in validator.iter_errors(data)]
        assert not errors, (line, errors)
        kinds.add(data["type"])
    assert {"session", "notice", "tool_start", "approval_done", "tool", "checkpoint", "text", "done",
            "usage", "error", "job_started", "job_ended"} <= kinds
