"""JavaScript test runners: jest, vitest, mocha, node's test runner and TAP.

Passing suites and ✓ lines go. A failing suite's `●` blocks (or vitest's `FAIL file > test`
blocks) stay whole except for stack frames inside node_modules and node internals; the closing
`Tests:` / `Test Files` / `N passing` lines are pinned.

Understands jest 27-30, vitest 1-3, mocha 10 spec, node --test (spec and TAP) and plain TAP.
Falls through: ava and jasmine reporters keep their error lines and counts through the general layer.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import KEPT, Selection

_SUITE_RE = re.compile(r"(PASS|FAIL)\s+\S")  # these match the line with its indentation stripped
_PASS_MARKS = ("✓", "√", "✔")
_FAIL_MARKS = ("✕", "×", "✖", "✗")
_SUMMARY_RE = re.compile(
    r"Test Suites:|Tests:|Snapshots:|Time:|Ran all test suites|Test Files\s|Tests\s{2,}|Duration\s"
    r"|ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\b|\d+ (?:passing|failing|pending)\b"
    r"|# (?:tests|pass|fail)\b"
)
_LIBRARY_FRAME_RE = re.compile(r"at .*(?:node_modules[/\\]|node:internal|\(internal/|\(<anonymous>\)|"
                               r"processTicksAndRejections)")
_TAP_OK_RE = re.compile(r"ok \d+ ")
_TAP_NOT_OK_RE = re.compile(r"not ok \d+ ")
MAX_PINNED_BODY = 80
_SUMMARY_FIRST = set("TSRDℹ#0123456789")

# A code frame's lines other than the failing one: `      21 |     const o = ...`, `         |   ^`.
_FRAME_CONTEXT_RE = re.compile(r"^\s+(?:\d+ \||\|\s+\^)")
CODE_FRAME = "code frame lines"
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
    sel.quiet.add(CODE_FRAME)
    errors = out.error_set
    mode = "top"  # "pass": inside a passing suite; "fail": inside a failing one; "body": a failure
    pinned_in_body = 0
    for i, line in enumerate(out.lines):
        s = line.lstrip()
        first = s[:1]
        if first in "PF" and (m := _SUITE_RE.match(s)):
            if m.group(1) == "PASS":
                mode = "pass"
                sel.hide(i, PASSING_SUITES)
            else:
                mode, pinned_in_body = "body", 0
                sel.pin(i)
        elif first in _SUMMARY_FIRST and _SUMMARY_RE.match(s):
            mode = "top"
            sel.pin(i)
        elif first in _PASS_MARKS or (first == "o" and _TAP_OK_RE.match(s)):
            sel.hide(i, PASSING)
        elif mode == "pass":
            sel.hide(i, PASSING_SUITES)
        elif first in _FAIL_MARKS or (first == "n" and _TAP_NOT_OK_RE.match(s)):
            sel.pin(i)
        elif first == "●":
            if s.startswith("● Console"):
                mode = "fail"
            else:
                mode, pinned_in_body = "body", 0
                sel.pin(i)
        elif first == "a" and _LIBRARY_FRAME_RE.match(s):
            sel.hide(i, LIBRARY_FRAMES)
        elif mode == "body" and _FRAME_CONTEXT_RE.match(line):
            sel.hide(i, CODE_FRAME)  # the `>` line says which statement failed; its neighbours go
        elif mode == "body" and pinned_in_body < MAX_PINNED_BODY:
            sel.pin(i)
            pinned_in_body += 1
        elif i in errors:
            sel.pin(i)
    if not out.failed and out.exit_code is not None:  # all passed: the counts say it
        for i in range(len(sel)):
            if sel.level[i] == KEPT and sel.lines[i].strip():
                sel.hide(i, PASSING_SUITES)
    return sel


FAMILY = Family("js-test", detect, select)
