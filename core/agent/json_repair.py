"""JSON as small models write it by hand: quotes inside a string left unescaped (a docstring's `\"\"\"`,
an f-string's quotes) and line breaks or tabs written as themselves. A tool call written as text with
either is otherwise right; read strictly, the task stops on it.

A quote ends a string only where JSON could go on after it: a key's quote before its `:`, a value's
quote before the end of its object or array, or before a comma followed by the next key (in an
object) or the next value (in an array). Any other quote is part of the string. When that reading
still fails, the quote that ended a string last before the error is taken as part of the string
instead, a few times over (`{"content": "d = {"a": "x"}"}`). Text that no such reading turns into
JSON stays unreadable. Raw line breaks and tabs are left to a non-strict decoder
(`json.JSONDecoder(strict=False)`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
RETRIES = 16  # quotes taken back into a string after the first reading failed

_KEY_END = re.compile(r'\s*:')
_OBJECT_VALUE_END = re.compile(r'\s*(?:\}|,\s*"(?:[^"\\\n]|\\.)*"\s*:)')
_ARRAY_VALUE_END = re.compile(r'\s*(?:\]|,\s*["{\[\-\d tfn])')


def read_hand_written(text: str, decode: Callable[[str], T]) -> T:
    """`decode` of `text` as a model meant it (see the module); raises the first reading's error
    when no reading decodes."""
    repaired = escape_stray_quotes(text)
    try:
        return decode(repaired)
    except json.JSONDecodeError as first:
        error = first
        for _ in range(RETRIES):
            quote = _last_closing_quote(repaired, error.pos)
            if quote < 0:
                break
            repaired = f'{repaired[:quote]}\\"{repaired[quote + 1:]}'
            try:
                return decode(repaired)
            except json.JSONDecodeError as again:
                error = again
        raise first from None


def _last_closing_quote(text: str, before: int) -> int:
    """The index of the last unescaped quote before `before` that ends a string, or -1."""
    in_string, last = False, -1
    i = 0
    while i < min(before, len(text)):
        if text[i] == "\\" and in_string:
            i += 2
            continue
        if text[i] == '"':
            if in_string:
                last = i
            in_string = not in_string
        i += 1
    return last


def escape_stray_quotes(text: str) -> str:
    """`text` with every quote inside a string that cannot end it escaped (see the module)."""
    out: list[str] = []
    stack: list[str] = []  # "{" or "[" for each open container
    expect_key = False
    in_string = key = False
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if in_string:
            if char == "\\" and i + 1 < end:
                out.append(text[i:i + 2])
                i += 2
                continue
            if char == '"' and _ends_string(text, i + 1, key, stack[-1] if stack else ""):
                in_string = False
                out.append(char)
            else:
                out.append('\\"' if char == '"' else char)
            i += 1
            continue
        if char == '"':
            in_string, key = True, bool(stack) and stack[-1] == "{" and expect_key
        elif char in "{[":
            stack.append(char)
            expect_key = char == "{"
        elif char in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif char == ",":
            expect_key = bool(stack) and stack[-1] == "{"
        elif char == ":":
            expect_key = False
        out.append(char)
        i += 1
    return "".join(out)


def _ends_string(text: str, after: int, key: bool, container: str) -> bool:
    if key:
        return bool(_KEY_END.match(text, after))
    if not container or not text[after:].strip():
        return True
    pattern = _OBJECT_VALUE_END if container == "{" else _ARRAY_VALUE_END
    return bool(pattern.match(text, after))
