"""Finding credentials by their shape (`core.secret_shapes`), in plain text and in the spellings a
command can print one in without naming it: reversed, hex (also `\\x67`, `%67`, `0x67`), base64
and URL-safe base64 (also wrapped over lines).

Everything runs in time linear in the text: the patterns are RE2, a shape's pattern runs only when
one of its literals occurs, and each hex or base64 run is decoded once and searched like plain text.
Encoded runs are decoded from their first character: base64 glued to other base64 letters is read
at the wrong alignment and not recognised.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass

import re2

from core.secret_shapes import SHAPES, Shape

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.max_mem = 64 << 20


@dataclass(frozen=True)
class _Compiled:
    shape: Shape
    regex: re2._Regexp
    group: int  # the index of group `s` (re2's Match.span takes no names)
    literals: tuple[str, ...]  # lower-cased when the shape folds case


_TABLE = tuple(
    _Compiled(
        shape,
        regex := re2.compile(shape.pattern, _OPTIONS),
        regex.groupindex["s"],
        tuple(lit.lower() if shape.fold else lit for lit in shape.literals),
    )
    for shape in SHAPES
)
# Every literal once, with whether it is compared lower-cased and the row it opens; reversed text
# holds a literal where the text holds it backwards.
_FORWARD = tuple((lit, e.shape.fold, i) for i, e in enumerate(_TABLE) for lit in e.literals)
_BACKWARD = tuple((lit[::-1], e.shape.fold, i) for i, e in enumerate(_TABLE) for lit in e.literals)
_B64_RUN = re2.compile(r"(?:[A-Za-z0-9+/_-]{4,}={0,2}\r?\n)*[A-Za-z0-9+/_-]{16,}={0,2}", _OPTIONS)
_HEX_BYTE = r"(?:\\x|%|0x)?[0-9A-Fa-f]{2}"
# Bytes apart by spaces, colons or commas, or a line break with indentation (`xxd -p`, `od -An -tx1`).
_HEX_RUN = re2.compile(rf"{_HEX_BYTE}(?:(?:[ \t:,]{{1,3}}|[ \t]*\r?\n[ \t]*)?{_HEX_BYTE}){{7,}}", _OPTIONS)
_HEX_PAIR = re.compile(r"(?:\\x|%|0x)?([0-9A-Fa-f]{2})")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TAIL_CAP = 8192  # streamed text held back for being one unbroken run, at most

# Values of a `name=value` pair that are code, not a secret: literals, types, placeholders.
_CODE_WORDS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "str",
        "string",
        "bytes",
        "int",
        "optional",
        "any",
        "secretstr",
        "required",
        "os",
        "env",
        "self",
        "this",
        "yes",
        "no",
    }
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SECRET_WORD = re.compile(r"(?i)pass|pwd|secret|token|key|auth")
_PLACEHOLDER = ("$", "%", "{", "*", "/", "~/", "./", "…", "...", "[REDACTED]")
_VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # "DEEPSEEK_API_KEY" names a secret, is none


def looks_like_code(value: str, following: str) -> bool:
    """Whether the value of a `password=…` pair is code (a name, a call, a type, a placeholder)
    rather than a secret written out. A quoted value is a secret unless it is a placeholder."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return (
            inner.startswith(("$", "{", "%", "<", "…"))
            or set(inner) <= {"*", "x", "X", "."}
            or bool(_VARIABLE_NAME.fullmatch(inner))
        )
    if value.lower() in _CODE_WORDS or value.startswith(_PLACEHOLDER) or following == "(":
        return True
    return bool(_IDENTIFIER.fullmatch(value)) and ("." in value or bool(_SECRET_WORD.search(value)))


def _matches(text: str, entry: _Compiled) -> Iterator[tuple[int, int]]:
    for match in entry.regex.finditer(text):
        start, end = match.span(entry.group)
        if start < 0:
            continue
        value = text[start:end]
        if entry.shape.kind == "pair" and looks_like_code(value, text[end : end + 1]):
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            start, end = start + 1, end - 1  # the quotes stay, the secret goes
        yield start, end


def _rows(text: str, lowered: str, literals: tuple[tuple[str, bool, int], ...]) -> list[int]:
    """The rows of the table one of whose literals occurs in the text."""
    return sorted({row for lit, fold, row in literals if lit in (lowered if fold else text)})


def _plain_spans(text: str, rows: list[int] | None = None) -> list[tuple[int, int]]:
    if rows is None:
        rows = _rows(text, text.lower(), _FORWARD)
    return [span for row in rows for span in _matches(text, _TABLE[row])]


def _reversed_spans(text: str, lowered: str) -> list[tuple[int, int]]:
    rows = _rows(text, lowered, _BACKWARD)
    if not rows:
        return []
    size = len(text)
    return [(size - end, size - start) for start, end in _plain_spans(text[::-1], rows)]


def _decoded(run: str, hexadecimal: bool) -> str:
    if hexadecimal:
        raw = bytes.fromhex("".join(_HEX_PAIR.findall(run)))
    else:
        letters = "".join(run.split()).rstrip("=").replace("-", "+").replace("_", "/")
        letters = letters[: len(letters) - len(letters) % 4] if len(letters) % 4 == 1 else letters
        try:
            raw = base64.b64decode(letters + "=" * (-len(letters) % 4))
        except (binascii.Error, ValueError):
            return ""
    return raw.decode("latin-1")


def _encoded_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for regex, hexadecimal in ((_HEX_RUN, True), (_B64_RUN, False)):
        for match in regex.finditer(text):
            run = match.group()
            if _plain_spans(_decoded(run, hexadecimal)):
                spans.append(match.span())
    return spans


def _matchable(text: str) -> str:
    """`text` as RE2 can read it: RE2 reads UTF-8, so a lone surrogate (an undecodable byte of a file
    name) becomes U+FFFD, one character for one, and every span stays where it was."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a credential by its shape, as sorted, merged (start, end) spans."""
    text = _matchable(text)
    lowered = text.lower()
    spans = sorted(
        _plain_spans(text, _rows(text, lowered, _FORWARD))
        + _reversed_spans(text, lowered)
        + _encoded_spans(text)
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        elif end > start:
            merged.append((start, end))
    return merged


def redact_shapes(text: str, mark: str, open_end: bool = False) -> str:
    """`text` with every credential `secret_spans` finds replaced by `mark`. With `open_end` (more
    text follows), a credential that reaches the end is left for when it is whole: `open_tail`
    holds it back, and redacting a part would hide the rest from the next look."""
    spans = secret_spans(text)
    if open_end and spans and spans[-1][1] == len(text):
        spans.pop()
    if not spans:
        return text
    pieces, last = [], 0
    for start, end in spans:
        pieces += [text[last:start], mark]
        last = end
    return "".join(pieces) + text[last:]


def has_shape(text: str) -> bool:
    """Whether `text` holds a credential by its shape, in any spelling `secret_spans` knows."""
    return bool(secret_spans(text))


def open_tail(text: str) -> int:
    """Length of the end of streamed `text` that could still grow into a credential: the last unbroken
    run of non-space characters, a credential that reaches the end, and the text after a literal of
    a shape whose match crosses spaces and is not yet complete."""
    window = _matchable(text[-_TAIL_CAP:])
    start = len(window)
    while start and not window[start - 1].isspace():
        start -= 1
    spans = secret_spans(window)
    if spans and spans[-1][1] == len(window):
        start = min(start, spans[-1][0])
    lowered = window.lower()
    for entry in _TABLE:
        if not entry.shape.span:
            continue
        haystack = lowered if entry.shape.fold else window
        for lit in entry.literals:
            found = haystack.rfind(lit, max(0, len(window) - entry.shape.span - len(lit)))
            if found < 0:
                continue
            while found and not window[found - 1].isspace():
                found -= 1
            match = entry.regex.search(window[found:])
            if match is None or found + match.end() == len(window):
                start = min(start, found)
    return len(window) - start
