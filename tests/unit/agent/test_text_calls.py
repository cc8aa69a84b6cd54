"""A tool call written as text: exactly one call in a known form runs; anything that only looks like
one is not run and says why."""

from __future__ import annotations

import json

import pytest

from core.agent.text_calls import read_text_call, recover_text_call
from core.provider.assembler import TurnResult
from core.provider.errors import ApiError
from core.session.items import AssistantMessage, FunctionCall
from core.tools import tool_schemas

TOOLS = tool_schemas()
EDIT = {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}
EDIT_JSON = json.dumps(EDIT)
DS = {
    "begin": "<｜tool▁calls▁begin｜>",
    "call": "<｜tool▁call▁begin｜>",
    "sep": "<｜tool▁sep｜>",
    "end": "<｜tool▁call▁end｜>",
    "close": "<｜tool▁calls▁end｜>",
}

RUNNABLE = {
    "fenced json": f'```json\n{{"name": "edit_file", "arguments": {EDIT_JSON}}}\n```',
    "fenced, no language, CRLF": f'```\r\n{{"name": "edit_file", "arguments": {EDIT_JSON}}}\r\n```',
    "bare object": f'{{"name": "edit_file", "arguments": {EDIT_JSON}}}',
    "bare, surrounding blank lines": f'\n\n  {{"name": "edit_file", "arguments": {EDIT_JSON}}}  \n',
    "tool + parameters": f'{{"tool": "edit_file", "parameters": {EDIT_JSON}}}',
    "function with a JSON string": json.dumps({"function": {"name": "edit_file", "arguments": EDIT_JSON}}),
    "openai tool_calls item": json.dumps(
        {"id": "c1", "type": "function", "function": {"name": "edit_file", "arguments": EDIT_JSON}}
    ),
    "one-item list": f'[{{"name": "edit_file", "arguments": {EDIT_JSON}}}]',
    "qwen tags": f'<tool_call>\n{{"name": "edit_file", "arguments": {EDIT_JSON}}}\n</tool_call>',
    "qwen tags, unclosed": f'<tool_call>\n{{"name": "edit_file", "arguments": {EDIT_JSON}}}',
    "qwen tags around a fence": f'<tool_call>\n```json\n{{"name": "edit_file", "arguments": {EDIT_JSON}}}\n```\n</tool_call>',
    "deepseek v3": (
        f"{DS['begin']}{DS['call']}function{DS['sep']}edit_file\n```json\n{EDIT_JSON}\n```"
        f"{DS['end']}{DS['close']}"
    ),
    "deepseek v3.1": f"{DS['begin']}{DS['call']}edit_file{DS['sep']}{EDIT_JSON}{DS['end']}{DS['close']}",
    "deepseek ascii look-alikes": (
        f"<|tool_calls_begin|><|tool_call_begin|>function<|tool_sep|>edit_file\n"
        f"```json\n{EDIT_JSON}\n```<|tool_call_end|><|tool_calls_end|>"
    ),
    "chinese arguments": '{"name": "write_file", "arguments": {"path": "说明.md", "content": "你好\\n"}}',
}


@pytest.mark.parametrize("text", RUNNABLE.values(), ids=RUNNABLE.keys())
def test_one_call_in_a_known_form_is_read_as_that_call(text: str) -> None:
    reading = read_text_call(text, TOOLS)
    assert reading.problem == "" and reading.call is not None
    if reading.call.name == "write_file":
        assert json.loads(reading.call.arguments) == {"path": "说明.md", "content": "你好\n"}
    else:
        assert reading.call.name == "edit_file" and json.loads(reading.call.arguments) == EDIT


NOT_RUN = {
    "prose before": (
        f'I will fix it now:\n```json\n{{"name": "edit_file", "arguments": {EDIT_JSON}}}\n```',
        "other text around it",
    ),
    "prose after": (
        f'{{"name": "edit_file", "arguments": {EDIT_JSON}}}\nThat should fix the bug.',
        "other text around it",
    ),
    "quoted in a discussion": (
        f'You could call `{{"name": "edit_file", "arguments": {EDIT_JSON}}}` yourself.',
        "other text around it",
    ),
    "two calls on two lines": (
        f'{{"name": "read_file", "arguments": {{"path": "a.py"}}}}\n'
        f'{{"name": "edit_file", "arguments": {EDIT_JSON}}}',
        "2 tool calls",
    ),
    "two tagged calls": (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n'
        '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>',
        "2 tool calls",
    ),
    "two deepseek calls": (
        f'{DS["begin"]}{DS["call"]}read_file{DS["sep"]}{{"path": "a"}}{DS["end"]}'
        f'{DS["call"]}read_file{DS["sep"]}{{"path": "b"}}{DS["end"]}{DS["close"]}',
        "2 tool calls",
    ),
    "unknown tool": (
        '```json\n{"name": "README.md", "arguments": {}}\n```',
        "'README.md', which is not a tool",
    ),
    "missing argument": (
        '{"name": "edit_file", "arguments": {"path": "calc.py"}}',
        "missing required argument",
    ),
    "unknown argument": (
        '{"name": "read_file", "arguments": {"path": "a", "colour": "red"}}',
        "unknown argument(s): colour",
    ),
    "wrong type": ('{"name": "read_file", "arguments": {"path": 3}}', "path must be a string"),
    "arguments not an object": ('{"name": "read_file", "arguments": ["a.py"]}', "not a JSON object"),
    "arguments string not JSON": ('{"name": "read_file", "arguments": "path=a.py"}', "not valid JSON"),
    "broken JSON in a fence": (
        '```json\n{"name": "read_file", "arguments": {"path": "a.py"}\n```',
        "not valid JSON",
    ),
    "tags around prose": ("<tool_call>I should read the file first</tool_call>", "not valid JSON"),
    "tags with text after": (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call> done',
        "other text around",
    ),
    "deepseek tokens, garbled": (
        f"{DS['begin']}read the file please{DS['close']}",
        "DeepSeek's tool-call tokens",
    ),
    "call mixed with other JSON": (
        '{"name": "read_file", "arguments": {"path": "a"}}\n{"answer": 42}',
        "mixes tool calls",
    ),
}


@pytest.mark.parametrize(("text", "why"), NOT_RUN.values(), ids=NOT_RUN.keys())
def test_what_only_looks_like_a_call_is_not_run_and_says_why(text: str, why: str) -> None:
    reading = read_text_call(text, TOOLS)
    assert reading.call is None
    assert why in reading.problem


ANSWERS = {
    "plain prose": "The bug is in add: it subtracts. I changed it to a + b.",
    "chinese prose": "已修复：add 现在返回 a + b。",
    "json data as the answer": '{"name": "my-package", "version": "1.0.0"}',
    "a python fence": "```python\ndef add(a, b):\n    return a + b\n```",
    "a fence of data": '```json\n{"name": "demo", "dependencies": {}}\n```',
    "a bracketed status line": "[1/3] tests pass",
    "tool names in prose": "I used read_file and edit_file to fix calc.py.",
    "empty": "   ",
}


@pytest.mark.parametrize("text", ANSWERS.values(), ids=ANSWERS.keys())
def test_an_ordinary_answer_is_left_alone(text: str) -> None:
    assert read_text_call(text, TOOLS) == read_text_call("", TOOLS)
    assert read_text_call(text, TOOLS).call is None and read_text_call(text, TOOLS).problem == ""


def test_a_recovered_reply_becomes_the_call_and_loses_its_text() -> None:
    result = TurnResult(items=[AssistantMessage(RUNNABLE["fenced json"])])
    notice = recover_text_call(result, TOOLS)
    assert notice is not None and "edit_file" in notice and "fenced JSON block" in notice
    assert result.status == "ok" and result.error is None and result.text == ""
    (call,) = result.calls
    assert call.name == "edit_file" and json.loads(call.arguments) == EDIT and call.call_id


def test_a_call_like_reply_becomes_an_unreadable_answer() -> None:
    result = TurnResult(items=[AssistantMessage(NOT_RUN["prose before"][0])])
    assert recover_text_call(result, TOOLS) is None
    assert result.status == "error" and result.error is not None and result.error.kind == "model_output"
    assert "other text around it" in result.error.message


def test_a_server_failure_is_recovered_when_its_streamed_text_is_a_whole_call() -> None:
    failure = ApiError("The server could not parse the model's answer: does not match", kind="model_output")
    whole = TurnResult(items=[AssistantMessage(RUNNABLE["fenced json"])], status="error", error=failure)
    assert recover_text_call(whole, TOOLS) is not None and whole.status == "ok" and len(whole.calls) == 1
    cut = TurnResult(items=[AssistantMessage("```json\n")], status="error", error=failure)
    assert recover_text_call(cut, TOOLS) is None
    assert cut.status == "error" and cut.error is failure  # the server's own reason stays


@pytest.mark.parametrize("status", ["incomplete", "aborted"])
def test_a_cut_or_interrupted_reply_is_never_run(status: str) -> None:
    result = TurnResult(items=[AssistantMessage(RUNNABLE["bare object"])], status=status)
    assert recover_text_call(result, TOOLS) is None and result.calls == []


def test_a_reply_with_real_calls_is_left_alone() -> None:
    real = FunctionCall("c1", "read_file", '{"path": "a"}')
    result = TurnResult(items=[AssistantMessage(RUNNABLE["bare object"]), real])
    assert recover_text_call(result, TOOLS) is None and result.calls == [real]


def test_an_mcp_tool_offered_in_the_session_is_recognised() -> None:
    mcp = {
        "type": "function",
        "name": "docs__search",
        "description": "",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    }
    reading = read_text_call('{"name": "docs__search", "arguments": {"q": "路由"}}', [*TOOLS, mcp])
    assert reading.call is not None and json.loads(reading.call.arguments) == {"q": "路由"}
