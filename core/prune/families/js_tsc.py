"""tsc: every `file(3,5): error TS2322: ...` (or pretty `file:3:5 - error TS2322: ...`) line stays,
with its message chain; code frames stay for the first errors only; `Found N errors` is pinned.

Understands tsc 4-5 plain and --pretty output and vue-tsc. Falls through: tsc -b progress (--verbose).
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.rules import is_blank
from core.prune.selection import KEPT, Selection

_ERROR_RE = re.compile(r"^\S.*?(?:\(\d+,\d+\): |:\d+:\d+ - )(?:error|warning|message) TS\d+: ")
_SNIFF_RE = re.compile(_ERROR_RE.pattern, re.M)
_PLAIN_ERROR_RE = re.compile(r"^(?:error|warning) TS\d+: ")  # errors without a file (bad tsconfig)
_FOUND_RE = re.compile(r"^Found \d+ errors?\b")
_TABLE_HEAD = "Errors  Files"
MAX_FRAMES = 3  # errors that keep their code frame; later ones keep their message only
MAX_TABLE_ROWS = 0  # the per-file table repeats the locations above it
FRAME_LINES = "code frame lines"


def detect(out: Output) -> int:
    if out.command.runs("tsc", "vue-tsc", "tsserver"):
        return COMMAND
    return STRONG_CONTENT if out.has("error TS") and _SNIFF_RE.search(out.text[:50_000]) else 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    sel.quiet.add(FRAME_LINES)
    errors = 0
    in_error = in_message = in_table = False
    table_rows = 0
    for i, line in enumerate(lines):
        if "TS" in line and (_ERROR_RE.match(line) or _PLAIN_ERROR_RE.match(line)):
            sel.pin(i)
            errors += 1
            in_error, in_message, in_table = True, True, False
        elif _FOUND_RE.match(line):
            sel.pin(i)
            in_error = False
        elif line.startswith(_TABLE_HEAD):
            in_table, table_rows = True, 0
        elif in_table and line.strip():
            table_rows += 1
            if table_rows > MAX_TABLE_ROWS:
                sel.hide(i, "summary table rows")
        elif in_error:
            if in_message and line.startswith("  ") and not is_blank(line):
                sel.pin(i)  # the message chain: "  Type 'string' is not assignable to type 'number'."
                continue
            in_message = False
            if errors > MAX_FRAMES:
                sel.hide(i, FRAME_LINES)
    return sel


FAMILY = Family("tsc", detect, select)
