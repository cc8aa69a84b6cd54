"""Regular expressions written by the model, compiled for a linear-time engine (RE2).

Python's `re` backtracks: `^(a+)+$` over a 40-character line takes hours, holds the GIL, and
ignores Ctrl-C. RE2 (`google-re2`, Google's binding, wheels for every platform) matches in time
linear in the text, so a model's pattern cannot hang the agent on any platform. Its syntax is
ripgrep's: no lookaround, no backreferences, and `\\w`, `\\d`, `\\b` are ASCII (`\\p{Han}`, `\\pL`
for other scripts).
"""

from __future__ import annotations

from typing import Protocol

import re2

SYNTAX = "RE2/ripgrep syntax: no lookaround or backreferences"


class Matcher(Protocol):
    pattern: str

    def search(self, text: str) -> object | None: ...


class PatternError(ValueError):
    """The pattern is not valid RE2; the message is meant for the model."""


def compile_pattern(pattern: str, ignore_case: bool = False) -> Matcher:
    options = re2.Options()
    options.log_errors = False  # the error goes to the model, not to the user's terminal
    options.case_sensitive = not ignore_case
    options.max_mem = 64 << 20  # a huge pattern fails to compile instead of eating memory
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise PatternError(f"invalid regular expression {pattern!r}: {detail} ({SYNTAX})") from None
