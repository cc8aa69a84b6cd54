"""The one sanitiser for every string shown to a person: secrets redacted, control sequences defused.

Text from the model or from a command can carry terminal escape sequences. Printed raw, they can
erase a line and draw another (a forged approval prompt), retitle the window, write the clipboard
(OSC 52) or hide text (SGR 8). Front ends therefore never print such text as it is: it passes
through `shown()` first, which redacts secrets and makes every control character visible as an
escape (`\\x1b`, `\\r`, `\\u202e`), so what is on screen is what the text really contains.

Command output is the exception that is *formatted*, not forged: its colour and cursor sequences
are removed and `\\r` redraws resolved (`output=True`), the way the pruner cleans it, before the
rest is defused the same way.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from core.prune.clean import resolve_redraws, strip_ansi

# C0 controls except tab and newline, DEL, C1 controls (0x9b is a one-byte CSI on some terminals),
# Unicode bidirectional overrides and isolates (they reorder what is displayed: "Trojan Source"),
# and lone surrogates (undecodable bytes that would crash an encoder).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x00": "\\x00", "\x08": "\\x08", "\x07": "\\x07"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def defuse(text: str, *, output: bool = False) -> str:
    """`text` with every control character made visible; `output=True` first drops the colour and
    cursor sequences of command output and resolves its `\\r` redraws (nothing is forged by them
    once they are gone)."""
    if output:
        text = strip_ansi(text)
        if "\r" in text:
            text = "\n".join(resolve_redraws(line)[0] for line in text.split("\n"))
    return _UNSAFE.sub(_visible, text) if _UNSAFE.search(text) else text


def shown(text: str, redact: Callable[[str], str] | None = None, *, output: bool = False) -> str:
    """What may be put on a screen: `text` redacted (when a redactor is given), then defused."""
    return defuse(redact(text) if redact else text, output=output)


def shown_deep(value: object, redact: Callable[[str], str] | None = None, *, output: bool = False) -> object:
    """`shown()` applied to every string inside a JSON-like value (an event payload)."""
    if isinstance(value, str):
        return shown(value, redact, output=output)
    if isinstance(value, dict):
        return {k: shown_deep(v, redact, output=output) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_deep(v, redact, output=output) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a row inside an event
        return type(value)(**{f.name: shown_deep(getattr(value, f.name), redact, output=output)
                              for f in dataclasses.fields(value)})
    return value
