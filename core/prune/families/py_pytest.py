"""pytest: failures, errors and the summaries stay; passing tests, the session header and the test
source that pytest reprints above each failing line go.

pytest's report is a sequence of `=== title ===` sections. The progress section lists every test;
FAILURES/ERRORS hold one `___ test id ___` block per failure, each a chain of frames that end in a
`path:line: Exception` location; "short test summary info" repeats the failing ids; the last
`=== ... in 0.37s ===` line is the summary.

Understands pytest 7-9 default, -v, -q, -rA, --tb=long/short/line, pytest-cov and xdist output.
Falls through: --tb=native tracebacks are handled as Python tracebacks; -p no:terminal output is general.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.pytraceback import LIBRARY_FRAMES as LIBRARY
from core.prune.pytraceback import is_library
from core.prune.rules import CARET_RE, SEPARATOR_RE
from core.prune.selection import KEPT, Selection

_SECTION_RE = re.compile(r"^={3,} (.+?) ={3,}$")
_FINAL_RE = re.compile(r"\b(?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|no tests ran)\b"
                       r".* in [\d.]+s\b")
_FINAL_LINE_RE = re.compile(r"^=+ .* in [\d.]+s\b.*=+$|^\d+ (?:passed|failed)\b.* in [\d.]+s", re.M)
_TEST_HEAD_RE = re.compile(r"^_{3,} .+ _{3,}$")
_FRAME_SEP_RE = re.compile(r"^(?:_ ){8,}_?\s*$")
_LOCATION_RE = re.compile(r"^\S+:\d+:(?: |$)")
_STATUS_RE = re.compile(r"(?:^|\s)(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?:\s|$)")
_DOTS_RE = re.compile(r"^(?:\S+ )?[.sxXFE]+\s*(?:\[\s*\d+%\])?$")
_DOTS_END = set(".sxXFE]")
_HEADER_RE = re.compile(r"(?:platform \w|hypothesis profile |Using --randomly-seed|(?!collect)[\w .-]+: \S)")
_CAPTURE_RE = re.compile(r"^-{3,} (?:Captured|captured) .* -{3,}$")
# A frame's argument values (printed above its source) and --showlocals values (below its `E` lines):
# `url = 'sqlite:///x.db'`, unindented. They are often the bad value itself.
_VALUE_RE = re.compile(r"^[A-Za-z_]\w* = \S")

PASSING = "passing tests"
SKIPPED = "skipped tests"
REPEATED = "failing tests (see summary)"
PROGRESS = "progress lines"
HEADER = "session header lines"
SOURCE = "test source lines"
SEPARATORS = "frame separators"
CARETS = "caret lines"
CAPTURED = "captured output lines"
REPEATED_BLOCK = "repeated traceback lines"
HINTS = "pytest hint lines"
# pytest's advice inside an assertion explanation, and its empty `E` lines: no fact about the failure.
_HINT_RE = re.compile(r"^E\s*$|^E\s+(?:Omitting \d+ identical items|Use -v+ to get|\.\.\.Full output truncated"
                      r"|Full diff:$)")
REPORT = "report lines"
CAPTURE_HEAD, CAPTURE_TAIL = 15, 5
REPORT_LINES = 4  # a report section keeps its title and column header; TOTAL and errors are pinned


def detect(out: Output) -> int:
    if out.command.runs("pytest", "py.test"):
        return COMMAND
    if out.has("test session starts", "short test summary info") or _FINAL_LINE_RE.search(out.text[-400:]):
        return STRONG_CONTENT
    return 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    sel.quiet.update((SOURCE, SEPARATORS, CARETS, REPEATED_BLOCK, HINTS))
    if out.has("short test summary info"):  # the summary and the final line say it all again
        sel.quiet.update((HEADER, PASSING, SKIPPED, PROGRESS, REPEATED))
    # The short summary repeats the failing ids, so their progress lines can go.
    repeated = out.has("short test summary info")
    section = "start"
    collecting = False  # past the session header
    errors = out.error_set
    blocks: list[tuple[str, list[int]]] = []  # ("failure" | "report", line indices)
    for i, line in enumerate(lines):
        if line.startswith("=") and (m := _SECTION_RE.match(line)):
            section = _section(m.group(1))
            if section == "start" and repeated:
                sel.hide(i, HEADER)
            elif section == "report":
                blocks.append(("report", []))
            else:
                sel.pin(i)
            continue
        if line.startswith("!!!"):
            sel.pin(i)
        elif section == "start":
            collecting = collecting or not _HEADER_RE.match(line) or i in errors
            if collecting and repeated and line.startswith(("collected ", "collecting ")):
                sel.hide(i, HEADER)  # the final line has the counts
            elif collecting:
                _progress_line(sel, i, line, repeated)
            else:
                sel.hide(i, HEADER)  # platform, rootdir, plugins, hypothesis profile...
        elif section == "failures":
            if _TEST_HEAD_RE.match(line):
                sel.pin(i)
                blocks.append(("failure", []))
            elif blocks and blocks[-1][0] == "failure":
                blocks[-1][1].append(i)
        elif section == "summary":
            if line.startswith(("FAILED", "ERROR", "XPASS")):
                sel.pin(i)
            elif line.startswith(("SKIPPED", "XFAIL")):
                sel.hide(i, SKIPPED)  # counted in the final line
        elif section == "report":
            blocks[-1][1].append(i)
    seen: set[tuple[str, ...]] = set()
    for kind, block in blocks:
        if kind == "failure" and block:
            # A module-scoped fixture that fails prints the same traceback once per test.
            key = tuple(lines[i] for i in block)
            if key in seen:
                sel.hide_all(block, REPEATED_BLOCK)
                sel.note(block[0], "[the same traceback as the failure above]")
                continue
            seen.add(key)
        (_failure if kind == "failure" else _report)(sel, block, errors)
    return sel


def _section(title: str) -> str:
    if "test session starts" in title:
        return "start"
    if title.startswith(("FAILURES", "ERRORS")):
        return "failures"
    if "short test summary" in title:
        return "summary"
    if _FINAL_RE.search(title) or "Interrupted" in title or "no tests ran" in title:
        return "end"
    return "report"  # warnings summary, PASSES, durations, coverage...


def _progress_line(sel: Selection, i: int, line: str, repeated: bool) -> None:
    if "::" in line and (m := _STATUS_RE.search(line)):
        status = m.group(1)
        if status in ("PASSED", "XFAIL"):
            sel.hide(i, PASSING)
        elif status == "SKIPPED":
            sel.hide(i, SKIPPED)
        elif repeated:
            sel.hide(i, REPEATED)
        else:
            sel.pin(i)
    elif line[-1:] in _DOTS_END and _DOTS_RE.match(line):
        if repeated or ("F" not in line and "E" not in line):  # the short summary names the failures
            sel.hide(i, PROGRESS)
    elif _FINAL_RE.search(line):
        sel.pin(i)  # -q prints its summary without the === frame: "3000 passed in 1.52s"


def _failure(sel: Selection, block: list[int], errors: frozenset[int]) -> None:
    """One failing test: pin the failing lines, `E` lines and locations; drop the reprinted source.

    In a long frame pytest prints the function's source down to the failing line (marked `>`),
    then the `E` lines, then `path:line: Exception`. A short frame is `path:line: in func` followed
    by the statement it ran.
    """
    lines = sel.lines
    capture = next((n for n, i in enumerate(block) if _CAPTURE_RE.match(lines[i])), len(block))
    anchor = block[0] - 1 if block else 0  # the last line that ended a frame
    short_frame = library_frame = False
    for i in block[:capture]:
        line = lines[i]
        if library_frame and not line.startswith(" "):
            library_frame = False
        if _FRAME_SEP_RE.match(line):
            sel.hide(i, SEPARATORS)
            anchor, short_frame = i, False
        elif CARET_RE.match(line):
            sel.hide(i, CARETS)
        elif _HINT_RE.match(line):
            sel.hide(i, HINTS)
        elif line.startswith("E ") or line == "E":
            sel.pin(i)
            anchor, short_frame = i, False
        elif _LOCATION_RE.match(line):
            short_frame = " in " in line
            if short_frame and is_library(line.split(":", 1)[0]):
                library_frame = True
                sel.hide(i, LIBRARY)
            else:
                sel.pin(i)
            anchor = i
        elif line.startswith(">"):
            sel.pin(i)
            sel.hide_range(anchor + 1, i, SOURCE)
            anchor, short_frame = i, False
        elif library_frame and line.startswith(" "):
            sel.hide(i, LIBRARY)
        elif _VALUE_RE.match(line):
            sel.pin(i)
        elif short_frame and line.strip():
            sel.pin(i)  # the statement a short frame ran: `    from .report import render_csv`
            short_frame = False
        elif i in errors and not line.startswith(" "):
            sel.pin(i)
    captured = block[capture:]
    sel.hide_all(captured[CAPTURE_HEAD:max(len(captured) - CAPTURE_TAIL, CAPTURE_HEAD)], CAPTURED)
    for i in captured:
        if i in errors:
            sel.pin(i)


def _report(sel: Selection, block: list[int], errors: frozenset[int]) -> None:
    """Warnings summary, durations, coverage: a few lines, the TOTAL line and any error."""
    for n, i in enumerate(block):
        line = sel.lines[i]
        if line.startswith("TOTAL") or i in errors:
            sel.pin(i)
        elif n >= REPORT_LINES and not SEPARATOR_RE.match(line):
            sel.hide(i, REPORT)


FAMILY = Family("pytest", detect, select)
