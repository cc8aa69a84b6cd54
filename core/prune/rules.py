"""Line patterns and selection helpers that several families share.

Finding error lines is the hot path of the generic rules: a regex over every line of a 10 MB log
costs a third of a second, so candidate lines are found first with `str.find` over the lowercased
text (C speed) and only those are checked with the exact pattern.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from itertools import accumulate

from core.prune.selection import Selection
from core.prune.words import ERROR_ALTERNATION, WARNING_ALTERNATION, ZERO_ALTERNATION

# Words that make a line worth keeping in any tool's output. Class names (`KeyError`,
# `IOException`) count; `errors=0`, `0 failed`, `no errors` and `No syntax errors` do not (see _ZERO_RE).
ERROR_RE = re.compile(
    r"\b(?:error|errors|ERROR|ERRORS|Error|Errors|FAIL|FAILED|FAILURE|FAILURES|Fail|Failed|failed|failure|failures"
    r"|Failure|FATAL|Fatal|fatal|PANIC|panic|panicked|Traceback|CRITICAL|Exception|exception|Aborted|Killed"
    r"|[Cc]annot|[Uu]nable to)\b"
    r"|\w(?:Error|Exception|Failure)\b|Segmentation fault|core dumped|undefined reference|No such file or directory"
    r"|Permission denied|command not found|not found\b|timed out|Connection refused|can't|\bERR!|\bERR_"
    r"|is not recognized as an internal or external command|Access is denied"
    r"|" + ERROR_ALTERNATION
)
_ZERO_RE = re.compile(
    r"\b(?:0|no|zero|No) (?:[a-z]+ )?(?:errors?|failures?|failed|fatal)\b|\b(?:errors?|failures?|failed)[=:] ?0\b|" + ZERO_ALTERNATION,
)
# Lowercase needles: every ERROR_RE match contains one of them.
_ERROR_NEEDLES = ("error", "fail", "fatal", "panic", "traceback", "critical", "exception", "abort", "killed",
                  "cannot", "unable to", "segmentation", "core dumped", "undefined reference",
                  "no such file", "permission denied", "not found", "timed out", "refused", "can't", "err!", "err_",
                  "not recognized", "access is denied")
# The translated words, found in one pass: a `find` per word over a long log costs a second.
_TRANSLATED_ERROR_RE = re.compile(ERROR_ALTERNATION)
WARNING_RE = re.compile(r"\b(?:warning|warnings|Warning|WARNING|WARN|warn|Warn)\b|\w+Warning\b|" + WARNING_ALTERNATION)
# `src/app.ts:3:5`, `main.c:12: error`, `File "x.py", line 3`, `app.ts(3,5)`, ` --> src/main.rs:4:5`
LOCATION_RE = re.compile(
    r"(?:^|[\s(\[\"'])(?:[\w.~@+-]*[/\\])*[\w.@+-]+\.[A-Za-z][\w]{0,9}(?::\d+(?::\d+)?|\(\d+,\d+\))"
    r"|File \"[^\"]+\", line \d+"
)
# A line that is only a marker under source code: `    ^^^^^`, `  ~~~~^~~~`, `     |`.
CARET_RE = re.compile(r"^\s*[\^~]+[\s\^~]*$")
MAX_NOTE_KINDS = 6
# A successful build shows this many compiler warnings whole and counts the rest by kind.
FULL_WARNINGS = 3
WARNING_LINES = "compiler warning lines"
# A line of counts, which is how tools of every kind sum up: `3 failed, 316 passed in 0.37s`,
# `0 upgraded, 5 newly installed, 0 to remove`, `12 errors, 3 warnings`, `Tests: 1 failed, 84 passed`.
COUNTS_RE = re.compile(r"\b\d[\d,.]* [A-Za-z][\w -]{0,30}?(?:,| and)\s+(?:and )?\d[\d,.]* [A-Za-z]"
                       r"|\b[A-Z][A-Za-z ]{1,20}: \d+, [A-Z][A-Za-z ]{1,20}: \d+")  # Tests run: 5, Failures: 1
# What any test runner prints for a failure: a failing test (`not ok 3 - parses dates`, `✗ adds`), and
# the two sides of an assertion (`expected: 3`, `Received: 4`, `got 1, want 2`, `left: [..]`).
TEST_FAILURE_RE = re.compile(
    r"^\s*(?:not ok \d+|[✗✕✖×] \S)"
    r"|^\s*[-+]?\s*(?:[Ee]xpected|[Aa]ctual|[Rr]eceived|[Gg]ot|[Ww]ant(?:ed)?|[Ll]eft|[Rr]ight|[Oo]btained)\b\s*[:=]"
)
# The start of a new log record or prompt: a timestamp, a `[tag]`, a level name, `logger:LEVEL:`, `$ `.
LOG_RECORD_RE = re.compile(r"^(?:\[?\d|\[\w|(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b|\w+:\w[\w.]*:|\$ )")
SEPARATOR_RE = re.compile(r"^\s*([=\-_*#~─━═])(?:\s?\1){9,}\s*$")


def is_error_line(line: str) -> bool:
    m = ERROR_RE.search(line)
    if m is None:
        return False
    if _ZERO_RE.search(line) is None:
        return True
    return ERROR_RE.search(_ZERO_RE.sub("", line)) is not None


def line_starts(lines: list[str]) -> list[int]:
    """Offset of each line in "\\n".join(lines)."""
    return list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))


def lines_containing(lower_text: str, starts: list[int], needles: Iterable[str]) -> list[int]:
    """Indices of lines whose lowercased text contains any needle, in order, without duplicates."""
    found: set[int] = set()
    for needle in needles:
        pos = lower_text.find(needle)
        while pos >= 0:
            line = bisect_right(starts, pos) - 1
            found.add(line)
            # jump to the next line: one hit per line is enough
            nxt = starts[line + 1] if line + 1 < len(starts) else len(lower_text)
            pos = lower_text.find(needle, nxt)
    return sorted(found)


def find_error_lines(lines: list[str], lower_text: str, starts: list[int]) -> list[int]:
    found = set(lines_containing(lower_text, starts, _ERROR_NEEDLES))
    found.update(bisect_right(starts, m.start()) - 1 for m in _TRANSLATED_ERROR_RE.finditer(lower_text))
    return [i for i in sorted(found) if is_error_line(lines[i])]


def keep_windows(sel: Selection, indices: Iterable[int], before: int, after: int) -> None:
    """Keep `before` lines above and `after` lines below each index (the index itself too)."""
    for i in indices:
        sel.keep_range(i - before, i + after + 1)


def keep_head_tail(sel: Selection, head: int, tail: int) -> None:
    n = len(sel)
    sel.keep_range(0, min(head, n))
    sel.keep_range(max(n - tail, 0), n)


def kinds_note(label: str, kinds: Counter) -> str:
    """`[24 compiler warnings not shown: -Wsign-compare ×8, -Wunused-variable ×8, ...]`."""
    parts = ", ".join(f"{kind} ×{n:,}" for kind, n in kinds.most_common(MAX_NOTE_KINDS))
    more = len(kinds) - MAX_NOTE_KINDS
    return f"[{sum(kinds.values()):,} {label} not shown: {parts}{f', {more:,} more kinds' if more > 0 else ''}]"


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def is_blank(line: str) -> bool:
    return not line.strip()
