"""go test / go build / go vet.

`=== RUN` and `--- PASS` lines go, with the log lines of tests that passed. A failing test's
`--- FAIL:` line, its `x_test.go:12: got 1, want 2` lines, panics (the first frames of the
goroutine), compile errors and the `FAIL`/`ok` package lines stay.

Understands go 1.18+ `go test` (-v or not), go vet and build errors. Falls through: gotestsum's own
formats and `-json` output go to the general layer's counts and error anchors.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import KEPT, Selection

_RUN_RE = re.compile(r"^\s*=== (?:RUN|PAUSE|CONT|NAME)\s")
_STATUS_RE = re.compile(r"^\s*--- (PASS|FAIL|SKIP): ")
_LOG_RE = re.compile(r"^\s+\S+\.go:\d+: ")
_COMPILE_RE = re.compile(r"^\S+\.go:\d+:\d+: |^# \S+|^vet: ")
_PACKAGE_RE = re.compile(r"^(?:ok|FAIL|---|\?)\s+\S+\s|^(?:FAIL|PASS|ok)$|^exit status \d+")
_PANIC_RE = re.compile(r"^(?:panic: |fatal error: |\s*goroutine \d+ \[)")
MAX_PANIC_LINES = 30


def detect(out: Output) -> int:
    if out.command.runs("go", "gotestsum", "richgo"):
        return COMMAND
    return STRONG_CONTENT if out.has("--- FAIL: ", "=== RUN ", "\nok  \t") else 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    next_status = _next_status(lines)
    after_fail = False  # log lines printed under a `--- FAIL:` line (non-verbose runs)
    panic_left = 0
    for i, line in enumerate(lines):
        if panic_left:
            panic_left -= 1
            sel.pin(i)
        elif m := _STATUS_RE.match(line):
            after_fail = m.group(1) == "FAIL"
            if after_fail:
                sel.pin(i)
            else:
                sel.hide(i, "passing tests" if m.group(1) == "PASS" else "skipped tests")
        elif _RUN_RE.match(line):
            after_fail = False
            sel.hide(i, "test run lines")
        elif _LOG_RE.match(line):
            if after_fail or next_status[i] == "FAIL":
                sel.pin(i)
            else:
                sel.hide(i, "passing test logs")
        elif _PANIC_RE.match(line):
            sel.pin(i)
            panic_left = MAX_PANIC_LINES if line.startswith(("panic", "fatal")) else 0
        elif _COMPILE_RE.match(line) or _PACKAGE_RE.match(line):
            sel.pin(i)
    return sel


def _next_status(lines: list[str]) -> list[str | None]:
    """For each line, the status of the nearest `--- X:` line below it (go -v prints logs first)."""
    result: list[str | None] = [None] * len(lines)
    status = None
    for i in range(len(lines) - 1, -1, -1):
        if m := _STATUS_RE.match(lines[i]):
            status = m.group(1)
        result[i] = status
    return result


FAMILY = Family("go", detect, select)
