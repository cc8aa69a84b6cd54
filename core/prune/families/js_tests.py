"""JavaScript test runners: jest, vitest, mocha, node's test runner and TAP.

Passing suites and ✓ lines go. A failing suite's `●` blocks (or vitest's `FAIL file > test`
blocks) stay whole except for stack frames inside node_modules and node internals; the closing
`Tests:` / `Test Files` / `N passing` lines are pinned.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.rules import is_error_line
from core.prune.selection import KEPT, Selection

_SUITE_RE = re.compile(r"^\s*(PASS|FAIL)\s+\S")
_PASS_MARKS = ("✓", "√", "✔")
_FAIL_MARKS = ("✕", "×", "✖", "✗")
_SUMMARY_RE = re.compile(
    r"^\s*(?:Test Suites:|Tests:|Snapshots:|Time:|Ran all test suites|Test Files\s|Tests\s{2,}|Duration\s"
    r"|ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\b|\d+ (?:passing|failing|pending)\b"
    r"|# (?:tests|pass|fail)\b)"
)
_LIBRARY_FRAME_RE = re.compile(r"^\s+at .*(?:node_modules[/\\]|node:internal|\(internal/|\(<anonymous>\)|"
                               r"processTicksAndRejections)")
_TAP_OK_RE = re.compile(r"^\s*ok \d+ ")
_TAP_NOT_OK_RE = re.compile(r"^\s*not ok \d+ ")
MAX_PINNED_BODY = 80

PASSING = "passing tests"
PASSING_SUITES = "passing suite lines"
LIBRARY_FRAMES = "library stack frames"


def detect(out: Output) -> int:
    if out.command.runs("jest", "vitest", "mocha", "ava", "tap", "jasmine"):
        return COMMAND
    if out.has("Test Suites:", " Test Files ", "ℹ tests ") or (out.has(" passing (") and out.has("✔")):
        return STRONG_CONTENT
    return 0


def select(out: Output) -> Selection:
    sel = Selection(out.lines, default=KEPT)
    mode = "top"  # "pass": inside a passing suite; "fail": inside a failing one; "body": a failure
    pinned_in_body = 0
    for i, line in enumerate(out.lines):
        s = line.lstrip()
        if m := _SUITE_RE.match(line):
            if m.group(1) == "PASS":
                mode = "pass"
                sel.hide(i, PASSING_SUITES)
            else:
                mode, pinned_in_body = "body", 0
                sel.pin(i)
        elif _SUMMARY_RE.match(line):
            mode = "top"
            sel.pin(i)
        elif s.startswith(_PASS_MARKS) or _TAP_OK_RE.match(line):
            sel.hide(i, PASSING)
        elif mode == "pass":
            sel.hide(i, PASSING_SUITES)
        elif s.startswith(_FAIL_MARKS) or _TAP_NOT_OK_RE.match(line):
            sel.pin(i)
        elif s.startswith("● "):
            if s.startswith("● Console"):
                mode = "fail"
            else:
                mode, pinned_in_body = "body", 0
                sel.pin(i)
        elif _LIBRARY_FRAME_RE.match(line):
            sel.hide(i, LIBRARY_FRAMES)
        elif mode == "body" and pinned_in_body < MAX_PINNED_BODY:
            sel.pin(i)
            pinned_in_body += 1
        elif is_error_line(line):
            sel.pin(i)
    return sel


FAMILY = Family("js-test", detect, select)
