"""unittest (and runners that print like it: `python -m unittest`, `django test`, `green -vvv`).

`test_x (pkg.T.test_x) ... ok` lines and the dots go; the `FAIL:`/`ERROR:` headers, their
tracebacks (library frames folded), `Ran N tests` and the `FAILED (failures=1)`/`OK` line stay.

Understands unittest at verbosity 1-2, Django's test runner and green. Falls through: nose2 plugins'
extra sections are context.
"""

from __future__ import annotations

import re

from core.prune import pytraceback
from core.prune.families.base import COMMAND, CONTENT, Family
from core.prune.output import Output
from core.prune.selection import KEPT, Selection

_RESULT_RE = re.compile(r" \.\.\. (ok|skipped\b.*|expected failure)$")
_DOTS_RE = re.compile(r"^[.sxEFu]+$")
_HEAD_RE = re.compile(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): ")
_RAN_RE = re.compile(r"^Ran \d+ tests? in ", re.M)
_VERDICT_RE = re.compile(r"^(?:OK|FAILED|NO TESTS RAN)\b")
_SEPARATOR_RE = re.compile(r"^(?:={20,}|-{20,})$")
SEPARATORS = "separator lines"


def detect(out: Output) -> int:
    if out.command.runs("unittest"):
        return COMMAND
    return CONTENT + 5 if _RAN_RE.search(out.text[-3000:]) else 0


def select(out: Output) -> Selection:
    sel = Selection(out.lines, default=KEPT)
    sel.quiet.add(SEPARATORS)
    headed = out.has("\nFAIL: ", "\nERROR: ")  # the failure blocks name the failing tests again
    for i, line in enumerate(out.lines):
        if line.endswith(("ok", "'", "failure")) and (m := _RESULT_RE.search(line)):
            sel.hide(i, "passing tests" if m.group(1) == "ok" else "skipped tests")
        elif headed and line.endswith((" ... FAIL", " ... ERROR")):
            sel.hide(i, "failing tests (see below)")
        elif _SEPARATOR_RE.match(line):
            sel.hide(i, SEPARATORS)
        elif _DOTS_RE.match(line) and "E" not in line and "F" not in line:
            sel.hide(i, "progress lines")
        elif _HEAD_RE.match(line) or _RAN_RE.match(line) or _VERDICT_RE.match(line):
            sel.pin(i)
    pytraceback.apply(sel, out)
    return sel


FAMILY = Family("unittest", detect, select)
