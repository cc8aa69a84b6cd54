"""JSON written by hand: stray quotes inside strings and raw line breaks are read as the model meant
them, valid JSON is never changed, and text no reading makes valid stays unreadable."""

from __future__ import annotations

import json
from functools import partial

import pytest

from core.agent.json_repair import escape_stray_quotes, read_hand_written
from core.agent.text_calls import read_text_call
from core.tools import tool_schemas


def _read(text: str) -> object:
    return read_hand_written(text, partial(json.loads, strict=False))


HAND_WRITTEN = {
    "a docstring's quotes": ('{"old_text": "def f():\\n    """Doc."""\\n    return 1", "new_text": "x"}',
                             {"old_text": 'def f():\n    """Doc."""\n    return 1', "new_text": "x"}),
    "call arguments in quotes": ('{"content": "print("a", "b")\\n"}', {"content": 'print("a", "b")\n'}),
    "an f-string": ('{"new_text": "print(f"Hello, {name}")", "path": "g.py"}',
                    {"new_text": 'print(f"Hello, {name}")', "path": "g.py"}),
    "a quoted word before a comma": ('{"c": "say "hi", then go", "d": 1}', {"c": 'say "hi", then go', "d": 1}),
    "chinese quotes of both kinds": ('{"content": "他说"你好"，“再见”"}', {"content": '他说"你好"，“再见”'}),
    "raw line breaks and tabs": ('{"content": "line1\nline2\tend"}', {"content": "line1\nline2\tend"}),
    "multi_edit's array of edits": ('{"path": "a.py", "edits": [{"old_text": "x = "a"", "new_text": "x = "b""}]}',
                                    {"path": "a.py", "edits": [{"old_text": 'x = "a"', "new_text": 'x = "b"'}]}),
    "an array of strings": ('["a"b", "c"]', ['a"b', "c"]),
    "a dict literal in code": ('{"content": "d = {"a": "x"}\n"}', {"content": 'd = {"a": "x"}\n'}),
    "JSON inside JSON": ('{"path": "c.json", "content": "{"debug": true, "ports": [80, 443]}"}',
                         {"path": "c.json", "content": '{"debug": true, "ports": [80, 443]}'}),
}


@pytest.mark.parametrize("text, meant", HAND_WRITTEN.values(), ids=HAND_WRITTEN.keys())
def test_hand_written_json_reads_as_meant(text: str, meant: object) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    assert _read(text) == meant


VALID = [{"a": "x", "b": [1, "two", {"c": None}], "d": 'quote " inside', "e": "\\"},
         {"content": 'd = {"a": "x"}\n', "path": "说明.md"}, ["", "\"", [], {}], "top", {"k": ""}]


@pytest.mark.parametrize("value", VALID)
@pytest.mark.parametrize("indent", [None, 2])
def test_valid_json_is_never_changed(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert escape_stray_quotes(text) == text


@pytest.mark.parametrize("text", ['{"a": "x" "b": 1}', '{"a": tru}', '{"a": "x", "b": }', '{"a": "unclosed}'])
def test_text_no_reading_makes_valid_stays_unreadable(text: str) -> None:
    with pytest.raises(ValueError):
        _read(text)


def test_a_text_call_with_a_docstring_runs_as_the_model_meant_it() -> None:
    reply = ('```json\n{\n  "name": "edit_file",\n  "arguments": {\n    "path": "lists.py",\n'
             '    "old_text": "def last(items):\\n    """The last element."""\\n    return items[len(items)]",\n'
             '    "new_text": "def last(items):\\n    """The last element."""\\n    return items[-1]"\n  }\n}\n```')
    reading = read_text_call(reply, tool_schemas())
    assert reading.call is not None and reading.call.name == "edit_file"
    arguments = json.loads(reading.call.arguments)
    assert arguments["old_text"] == 'def last(items):\n    """The last element."""\n    return items[len(items)]'
    assert arguments["new_text"].endswith("return items[-1]")


def test_a_text_call_whose_json_no_reading_fixes_gets_a_correction() -> None:
    reply = '```json\n{"name": "write_file", "arguments": {"path": "a.py" "content": "x = 1"}}\n```'
    reading = read_text_call(reply, tool_schemas())  # a comma missing: read as one string, content lost
    assert reading.call is None and "missing required argument(s): content" in reading.problem
    unreadable = read_text_call('```json\n{"name": "write_file", "arguments": {"path": }}\n```', tool_schemas())
    assert unreadable.call is None and "not valid JSON" in unreadable.problem


def test_deepseeks_token_form_reads_hand_written_arguments_too() -> None:
    reply = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>'
             '{"path": "a.py", "content": "print("你好")\n"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>')
    reading = read_text_call(reply, tool_schemas())
    assert reading.call is not None
    assert json.loads(reading.call.arguments) == {"path": "a.py", "content": 'print("你好")\n'}
