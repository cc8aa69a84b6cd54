"""Any tool: errors with context around them, tracebacks, locations, and the head and tail.

Also the last step of the budget: when a family's result is still too long, this is the rule that
knows nothing about the tool and still keeps what looks like an error.

Understands no tool: it is the general layer itself (tracebacks, stack traces of innermost-first
runtimes, diagnostics in their common shapes, test-runner outcomes, error windows, head and tail).
"""

from __future__ import annotations

from core.prune import diagnostics, pytraceback, stacks
from core.prune.families.base import Family
from core.prune.output import Output
from core.prune.rules import (
    COUNTS_RE,
    LOCATION_RE,
    LOG_RECORD_RE,
    TEST_FAILURE_RE,
    WARNING_RE,
    keep_head_tail,
    lines_containing,
)
from core.prune.selection import UNSET, Selection
from core.prune.words import WARNING_WORDS

SHORT_LINES = 40  # below this many lines nothing is worth hiding
HEAD, TAIL = 10, 20
ERROR_HEAD, ERROR_TAIL = 3, 8  # when errors say what went wrong, the start matters less
BEFORE, AFTER = 3, 8
MAX_LOCATIONS = 60
MAX_WARNINGS, ERROR_WARNINGS = 10, 0
SCAN_LINES = 5_000  # locations are looked for near the top only: a scan of every line costs too much


def select(out: Output) -> Selection:
    sel = Selection(out.lines)
    if len(out.lines) <= SHORT_LINES:
        sel.keep_range(0, len(out.lines))
        mark_errors(sel, out)
        return sel
    mark_errors(sel, out)
    if out.error_lines:
        keep_head_tail(sel, ERROR_HEAD, ERROR_TAIL)
    else:
        keep_head_tail(sel, HEAD, TAIL)
    return sel


def mark_errors(sel: Selection, out: Output) -> None:
    """Pin error lines and tracebacks, keep context, a few locations and warnings."""
    spans = pytraceback.apply(sel, out) + stacks.apply(sel, out) + diagnostics.apply(sel, out)
    _pin_outcomes(sel, out)
    inside = bytearray(len(out.lines))
    for start, stop in spans:
        inside[start:stop] = b"\x01" * (stop - start)
    errors = [i for i in out.error_lines if not inside[i]]
    for i in errors:
        sel.pin(i)
    _keep_around(sel, out.lines, errors)
    lines = out.lines
    located = 0
    for i in range(min(len(lines), SCAN_LINES)):
        if sel.level[i] == UNSET and (":" in lines[i] or "(" in lines[i]) and LOCATION_RE.search(lines[i]):
            sel.keep(i)
            located += 1
            if located >= MAX_LOCATIONS:
                break
    warned = 0
    most = ERROR_WARNINGS if errors else MAX_WARNINGS
    for i in lines_containing(out.lower, out.starts, ("warn", *WARNING_WORDS)):
        if warned < most and WARNING_RE.search(lines[i]):
            sel.keep(i)
            warned += 1


FAMILY = Family("generic", lambda out: 1, select)


def _keep_around(sel: Selection, lines: list[str], errors: list[int]) -> None:
    """The lines around each error, but not other log records: an error that is a log record of its
    own gets its details (up to the next record), not the events before and after it."""
    for i in errors:
        if not LOG_RECORD_RE.match(lines[i]):
            sel.keep_range(i - BEFORE, i)
        for j in range(i + 1, min(i + AFTER + 1, len(lines))):
            if LOG_RECORD_RE.match(lines[j]):
                break
            sel.keep(j)


def _pin_outcomes(sel: Selection, out: Output) -> None:
    """Whatever the runner: lines of counts (the summary), failing tests and assertion sides."""
    lines = out.lines
    needles = (", ", " and ", "not ok", "✗", "✕", "✖", "×", "expected", "actual", "received", "got", "want",
               "left", "right", "obtained")
    for i in lines_containing(out.lower, out.starts, needles):
        line = lines[i]
        if len(line) < 300 and (COUNTS_RE.search(line) or TEST_FAILURE_RE.match(line)):
            sel.pin(i)
