"""eslint: errors (with their file header) and the `✖ N problems` summary stay; warnings go when
there are errors, and are capped when there are none.

Understands eslint 8-10 stylish and unix formats. Falls through: json, compact and codeframe formats
(their findings are picked up by the general diagnostics shapes).
"""

from __future__ import annotations

import re
from bisect import bisect_left

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import KEPT, Selection

# stylish: "  12:5  error  'x' is not defined  no-undef"; unix: "src/a.js:12:5: msg [Error/no-undef]"
_STYLISH_RE = re.compile(r"^\s+\d+:\d+\s+(error|warning)\s")
_UNIX_RE = re.compile(r"^\S+:\d+:\d+: .*\[(Error|Warning)/[^\]]*\]$")
_SUMMARY_RE = re.compile(r"^\s*[✖✕x×] \d+ problems? \(")
MAX_WARNINGS = 20
WARNINGS = "lint warnings"


def detect(out: Output) -> int:
    if out.command.runs("eslint") or out.command.subcommand("next") == "lint":
        return COMMAND
    return STRONG_CONTENT if out.has(" problems (", " problem (") and out.has("✖") else 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    header = -1  # the file path line above the current problems
    headers_with_errors: set[int] = set()
    headers: list[int] = []
    warnings: list[int] = []
    for i, line in enumerate(lines):
        m = _STYLISH_RE.match(line) or _UNIX_RE.match(line)
        if m:
            if m.group(1).lower() == "error":
                sel.pin(i)
                headers_with_errors.add(header)
            else:
                warnings.append(i)
        elif _SUMMARY_RE.match(line):
            sel.pin(i)
        elif line and not line[0].isspace():
            header = i
            headers.append(i)
    limit = 0 if headers_with_errors else MAX_WARNINGS
    sel.hide_all(warnings[limit:], WARNINGS)
    shown = headers_with_errors | {_header_of(headers, i) for i in warnings[:limit]}
    for h in headers:
        if h in headers_with_errors:
            sel.pin(h)
        elif h not in shown and _has_problems(lines, h):
            sel.hide(h, "file headers")
    return sel


def _header_of(headers: list[int], i: int) -> int:
    k = bisect_left(headers, i)
    return headers[k - 1] if k else -1


def _has_problems(lines: list[str], header: int) -> bool:
    return header + 1 < len(lines) and _STYLISH_RE.match(lines[header + 1]) is not None


FAMILY = Family("eslint", detect, select)
