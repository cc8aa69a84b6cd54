"""Tool calls a model wrote as text instead of through the API's function calling.

Small open models behind llama.cpp, Ollama or vLLM often answer with the call itself as text: a
fenced ```json block, a bare JSON object, Qwen/Hermes `<tool_call>` tags or DeepSeek's tool-call
tokens, which the server did not parse and passes on as the answer. Taken for the answer, the task
ends before it began. A reply that is exactly one such call, naming an offered tool with arguments
that fit its schema, is that call. A reply that only looks like one (text around it, two calls, a
tool that is not offered, arguments that do not fit) is not run: the model is told precisely why,
since running a call it only quoted or discussed could change files nobody asked to change.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Any

from core.agent.json_repair import read_hand_written
from core.i18n import N_, _
from core.provider.assembler import TurnResult
from core.provider.errors import ApiError
from core.session.items import AssistantMessage, FunctionCall
from core.tools.base import Tool, ToolError, ToolResult, parse_arguments

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_ALSO_ALLOWED = frozenset({"type", "id", "call_id"})

_FENCE = re.compile(r"```[ \t]*(?:json|tool_call|tool_code)?[ \t]*\r?\n(.*?)\r?\n?[ \t]*```", re.S | re.I)
_TAG_OPEN = "<tool_call>"
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
# DeepSeek's tokens use a full-width bar and U+2581; models served without them as special tokens
# write ASCII look-alikes, so both spellings are read.
_BAR = "[|｜]"
_SEP = "[▁_]"
_DS_BEGIN = re.compile(rf"<{_BAR}tool{_SEP}calls{_SEP}begin{_BAR}>")
_DS_END = re.compile(rf"<{_BAR}tool{_SEP}calls{_SEP}end{_BAR}>\s*\Z")
_DS_CALL = re.compile(
    rf"\s*<{_BAR}tool{_SEP}call{_SEP}begin{_BAR}>"
    rf"(?:\w+<{_BAR}tool{_SEP}sep{_BAR}>(?P<name>[\w.-]+)\s*```(?:json)?\s*(?P<args>.*?)\s*```"  # V3, R1
    rf"|(?P<name2>[\w.-]+)<{_BAR}tool{_SEP}sep{_BAR}>(?P<args2>.*?))"  # V3.1 and later
    rf"\s*<{_BAR}tool{_SEP}call{_SEP}end{_BAR}>",
    re.S,
)
_SCAN_LIMIT = 200  # JSON objects looked at when searching prose for a call


@dataclass(frozen=True)
class TextCall:
    name: str
    arguments: str  # a JSON object, as a function call's arguments
    form: str  # how it was written, for the notice


@dataclass(frozen=True)
class Reading:
    """`call` when the text is one runnable call; `problem` when it looks like a call but is not run;
    neither for an ordinary answer."""

    call: TextCall | None = None
    problem: str = ""


class _Unreadable(ValueError):
    """The text is meant as a call (tags, tokens) but its content cannot be read."""


def recover_text_call(result: TurnResult, tools: list[dict[str, Any]]) -> str | None:
    """Make a reply that is one call written as text into that call, and return the notice that says
    so. A reply that only looks like a call becomes an unreadable answer (kind "model_output"), which
    the loop answers with a correction. A server that failed a response it could not parse is read
    the same way when the text it streamed is a whole call."""
    failed = result.status == "error" and result.error is not None and result.error.kind == "model_output"
    if result.calls or not (result.status == "ok" or failed):
        return None
    reading = read_text_call(result.text, tools)
    if reading.call is not None:
        call = reading.call
        kept = [item for item in result.items if not isinstance(item, AssistantMessage)]
        result.items = [*kept, FunctionCall(f"call_text_{uuid.uuid4().hex[:12]}", call.name, call.arguments)]
        result.status, result.error = "ok", None
        return _("the model wrote its call to {tool} as text ({form}); running it as that call").format(
            tool=call.name, form=_(call.form))
    if reading.problem and not failed:
        result.status = "error"
        result.error = ApiError(reading.problem, kind="model_output")
    return None


def read_text_call(text: str, tools: list[dict[str, Any]]) -> Reading:
    """What a reply's text is: one call to run, a call-like text not to run, or an answer."""
    body = text.strip()
    if not body:
        return Reading()
    try:
        whole = _whole_text_calls(body)
    except _Unreadable as exc:
        return Reading(problem=str(exc))
    if whole is None:
        if _mentions_a_call(body):
            return Reading(
                problem="the reply has a tool call written as text with other text around it; a call "
                "written as text is only run when it is the whole reply"
            )
        return Reading()
    form, calls = whole
    if len(calls) > 1:
        return Reading(
            problem=f"the reply has {len(calls)} tool calls written as text ({form}); only a reply "
            "that is exactly one call is run"
        )
    name, arguments = calls[0]
    return _checked(name, arguments, form, tools)


def _whole_text_calls(body: str) -> tuple[str, list[tuple[str, Any]]] | None:
    """(form, calls) when the whole text is calls in one recognised form; None when it is not."""
    if _DS_BEGIN.match(body):
        return N_("DeepSeek's tool-call tokens"), _deepseek_calls(body)
    if body.startswith(_TAG_OPEN):
        found = _TAGGED.findall(body)
        if _TAGGED.sub("", body).strip():
            raise _Unreadable(
                "the reply has <tool_call> tags with other text around them; a call written as "
                "text is only run when it is the whole reply"
            )
        return N_("<tool_call> tags"), [
            _call_shape(value, "<tool_call> tags")
            for inner in found
            for value in _json_values(_unfenced(inner), "<tool_call> tags")
        ]
    fence = _FENCE.fullmatch(body)
    if fence is not None:
        form, inner = N_("a fenced JSON block"), fence.group(1)
    elif body[0] in "{[":
        form, inner = N_("a JSON object"), body
    else:
        return None
    try:
        values = _json_values(inner, form)
    except _Unreadable:
        if not _mentions_a_call(inner) and re.search(r'"(?:name|tool)"\s*:', inner):
            raise  # a call whose JSON is broken
        return None  # a call with text after it (read as prose), or text that merely starts with a brace
    shapes = [_call_of(value) for value in values]
    if not any(shape is not None for shape in shapes):
        return None  # JSON, but not a call: an answer that is data
    if any(shape is None for shape in shapes):
        raise _Unreadable(
            f"the reply mixes tool calls written as text with other JSON ({form}); only a reply "
            "that is exactly one call is run"
        )
    return form, [shape for shape in shapes if shape is not None]


def _deepseek_calls(body: str) -> list[tuple[str, Any]]:
    rest = _DS_END.sub("", body[_DS_BEGIN.match(body).end() :])  # type: ignore[union-attr]
    calls: list[tuple[str, Any]] = []
    position = 0
    while position < len(rest.rstrip()):
        match = _DS_CALL.match(rest, position)
        if match is None:
            raise _Unreadable(
                "the reply has DeepSeek's tool-call tokens, but not in the form "
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME, a ```json block of arguments, "
                "<｜tool▁call▁end｜>"
            )
        name = match.group("name") or match.group("name2")
        calls.append((name, _arguments(match.group("args") or match.group("args2"), name)))
        position = match.end()
    if not calls:
        raise _Unreadable("the reply opens DeepSeek's tool-call tokens but holds no call")
    return calls


def _unfenced(text: str) -> str:
    fence = _FENCE.fullmatch(text.strip())
    return fence.group(1) if fence else text


def _json_values(text: str, form: str) -> list[Any]:
    """The JSON values in `text`, one after another (a list counts as its items); read strictly,
    else as small models write JSON by hand (core/agent/json_repair.py)."""
    try:
        values = _decoded(text, json.JSONDecoder())
    except ValueError as exc:
        try:
            values = read_hand_written(text, partial(_decoded, decoder=json.JSONDecoder(strict=False)))
        except ValueError:
            raise _Unreadable(
                f"the reply looks like a tool call written as text ({form}), but it is not valid JSON: {exc}"
            ) from None
    if not values:
        raise _Unreadable(f"the reply looks like a tool call written as text ({form}), but it is empty")
    return values


def _decoded(text: str, decoder: json.JSONDecoder) -> list[Any]:
    values: list[Any] = []
    position, end = 0, len(text)
    while True:
        while position < end and text[position] in " \t\r\n,":
            position += 1
        if position >= end:
            return values
        value, position = decoder.raw_decode(text, position)
        values.extend(value if isinstance(value, list) else [value])


def _call_of(value: Any) -> tuple[str, Any] | None:
    """(name, arguments) when a JSON value has the shape of a call, else None."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {"name", "arguments"}}
        value = value["function"]
    names = [value[key] for key in _NAME_KEYS if isinstance(value.get(key), str)]
    given = [key for key in _ARGUMENT_KEYS if key in value]
    if len(names) != 1 or len(given) != 1 or set(value) - {*_NAME_KEYS, *_ARGUMENT_KEYS, *_ALSO_ALLOWED}:
        return None
    return names[0], _arguments(value[given[0]], names[0])


def _call_shape(value: Any, form: str) -> tuple[str, Any]:
    shape = _call_of(value)
    if shape is None:
        raise _Unreadable(
            f"the reply has {form}, but what is inside is not a call of the form "
            '{"name": TOOL, "arguments": {…}}'
        )
    return shape


def _arguments(raw: Any, name: str) -> Any:
    """A call's arguments; a JSON string holding the object is decoded."""
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError as exc:
        with contextlib.suppress(ValueError):
            return read_hand_written(raw, partial(json.loads, strict=False))
        raise _Unreadable(
            f"the reply is a call to {name} written as text, but its arguments are not valid JSON: {exc}"
        ) from None


def _mentions_a_call(text: str) -> bool:
    """Whether text holds something shaped like a call: tags, DeepSeek's tokens, or a JSON call object."""
    if _TAG_OPEN in text or _DS_BEGIN.search(text):
        return True
    decoder = json.JSONDecoder()
    for count, match in enumerate(re.finditer(r"\{", text)):
        if count >= _SCAN_LIMIT:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
            if _call_of(value) is not None:
                return True
        except (ValueError, _Unreadable):
            continue
    return False


def _checked(name: str, arguments: Any, form: str, tools: list[dict[str, Any]]) -> Reading:
    schema = next((tool for tool in tools if tool.get("name") == name), None)
    if schema is None:
        offered = ", ".join(str(tool.get("name")) for tool in tools)
        return Reading(
            problem=f"the reply is a call written as text ({form}) to {name!r}, which is not a tool "
            f"here; the tools are: {offered}"
        )
    if not isinstance(arguments, dict):
        return Reading(
            problem=f"the reply is a call to {name} written as text ({form}), but its arguments are "
            f"not a JSON object"
        )
    text = json.dumps(arguments, ensure_ascii=False)
    try:
        parse_arguments(text, Tool(name, "", schema.get("parameters") or {}, _not_run))
    except ToolError as exc:
        return Reading(
            problem=f"the reply is a call to {name} written as text ({form}), but its arguments do "
            f"not fit the tool: {exc}"
        )
    return Reading(call=TextCall(name, text, form))


def _not_run(args: dict[str, Any], ctx: object) -> ToolResult:
    raise AssertionError("only the arguments are checked here; the call runs through core.tools.run_tool")
