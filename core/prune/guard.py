"""The fidelity guard: the lines that carry a diagnostic, found without knowing the tool.

Families are chosen by guesswork (a command word, a few content markers) and a wrong guess must not
cost the line the developer needed. So after every family, whatever it decided, these lines are
pinned, and only the budget cut may hide them (the stamp then says how many it cut):

- markers: error, failure, fatal, exception, panic and assertion words, in English and in each
  language of `words.py`; a failing test of any runner; a summary or count line; and, in a failed
  output that reports no error, warning words and findings at a `path:line[:col]`, `File "…", line N`
  or `at path line N` location (then they are why it failed: a linter's findings). Among errors, and
  after a success, warnings are what the family counts and shortens;
- the context attached to an error marker: the indented lines under it (the source line and caret of
  a compiler error, javac's `symbol:`/`location:`, an assertion's details) and the header of the
  block an indented marker sits in.

What the guard leaves to other layers, because it reports nothing: quoted code, where an error word
is an identifier (library frames of a stack trace, the carets under a frame's source, the source
lines a linter or test runner quotes, names such as `onError`; each counted where it is hidden),
records below the warning level (`npm verbose`, `DEBUG`), expected failures, lines that are only a
listed path (`src/errors/handler.py`), a note under a diagnostic, and a repeat of a line already
shown. In a listing, a diff or a history that succeeded, error words are content, not reports.

Every search is linear: each pattern runs once over the whole text in RE2 (whose time is linear in
the text), and only the lines it finds are checked further.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

import re2

from core.prune import diagnostics, pytraceback, stacks
from core.prune.families import py_pytest
from core.prune.output import Output
from core.prune.rules import (
    CARET_RE,
    COUNTS_RE,
    LOCATION_RE,
    LOG_RECORD_RE,
    WARNING_RE,
    indent,
    is_error_line,
)
from core.prune.selection import HIDDEN, KEPT, PINNED, Selection
from core.prune.words import COUNT_ALTERNATION

# Hidden as quoted code, not report: library frames and the carets under a frame's source (the stack
# layers), the source a test runner or linter quotes around a finding. Counted where they are hidden.
CODE_REASONS = frozenset(
    {
        stacks.LIBRARY_FRAMES,
        pytraceback.LIBRARY_FRAMES,
        pytraceback.CARETS,
        diagnostics.FRAME_LINES,
        py_pytest.SOURCE,
    }
)
CONTINUATION = 6  # indented lines under an error marker that belong to it
HEADER_REACH = 400  # how far above an indented error its block's header may be
SUMMARY_TAIL = 20  # lines of counts count as the final summary this near the end
MAX_LINE = 400  # a longer line is data, not a diagnostic someone wrote for a person

# A location of any tool, found first over the whole text: `x.py:3`, `a.c(12)`, `File "`, `at t/a.t line 9`.
_LOCATION_SCAN_RE = re.compile(r"\.[A-Za-z]\w{0,9}(?::\d|\(\d)|File \"| line \d")
_PERL_LOCATION_RE = re.compile(r"\bat \S+ line \d+|^In \S.* line \d+:$")
# A failing test or its details, runner by runner (the generic words catch `FAIL`, `failed`, `Error`).
_TEST_FAILURE_RE = re.compile(
    r"^\s*#?\s*(?:not ok \d+|[✗✕✖×●] \S)"  # TAP (prove, bats), jest/vitest/mocha
    r"|^\s*#?\s*[-+]?\s*(?:[Ee]xpected|[Aa]ctual|[Rr]eceived|[Gg]ot|[Ww]ant(?:ed)?|[Ll]eft|[Rr]ight|[Oo]btained)\b\s*[:=]"
    r"|expected:?\s*<.*> but was:?\s*<|<<< (?:FAILURE|ERROR)!"  # JUnit, maven surefire
    r"|^\s*Dubious, test returned|^\s*Failed \d+/\d+ (?:subtests|test programs)|^Result: (?:FAIL|PASS)"  # prove
    r"|^rspec \S+:\d+|^\s*Failure/Error:|^\s*\d+\) \S"  # rspec, mocha, minitest
    r"|\*\*\*(?:Failed|Exception|Timeout)|^\s*\d+% tests passed|tests failed out of"  # ctest
    r"|^test \S+ \.\.\. FAILED|^---- \S+ stdout ----"  # cargo
    r"|^--- FAIL: |^FAIL\s+\S+\s"  # go test
    r"|^_{3,} \S.* _{3,}$"  # pytest
    # memory checkers (valgrind, the sanitizers): what went wrong, and where the address is
    r"|\bInvalid (?:read|write|free)\b|\bis located \d+ bytes (?:to the (?:left|right) of|inside of)"
    r"|\bAddress 0x[0-9a-f]+ is \d+ bytes (?:after|before|inside) a block|\b(?:definitely|indirectly) lost in"
    r"|\bConditional jump or move depends|\bUse of uninitialised value|\bMismatched free|\bSyscall param"
)
# A summary: counts of things (`3 failed, 12 passed`, `升级了 0 个软件包，新安装了 20 个软件包`),
# `Files=1, Tests=3`, `Tests run: 5, Failures: 1`, `BUILD FAILURE`, `Ran 12 tests in 0.3s`.
_SUMMARY_RE = re.compile(
    r"\bFiles=\d+, Tests=\d+|\bRan \d+ tests? in |\bBUILD (?:SUCCESS|SUCCESSFUL|FAILURE|FAILED)\b"
    r"|^Result: (?:FAIL|PASS)|\b\d+ upgraded, \d+ newly installed"
    r"|^(?:ok|FAIL)\s+\S+\s+(?:\d+(?:\.\d+)?s|\(cached\))"  # go: a package's result
    r"|(?:" + COUNT_ALTERNATION + r").*(?:" + COUNT_ALTERNATION + r")"
)
# A function or variable name (`warnOrThrowProtectedError`, `onError`): code, unlike a class name.
_NOT_REPORTS_RE = re.compile(r"\b[a-z][a-z0-9]*[A-Z]\w*?(?:Error|Exception|Failure)\b(?!:)")
# Lines whose error words report nothing, whatever they say: a record of a level below warnings
# (`npm verbose …`, `DEBUG …`, webpack's `<t>` timings and `<i>` info), an expected failure (`XFAIL`),
# and a statement of quoted source (`    raise ConfigError(…)`, `    except KeyError:`).
_QUIET_START_RE = re.compile(
    r"XFAIL\b|(?:npm|pnpm|yarn) (?:verbose|silly|timing|http|info)\b|\s*\[?(?:DEBUG|TRACE|VERBOSE|debug|trace|verbose)\b"
    r"|<[tid]> |\s+(?:raise|except|throw|catch|rescue)\b"
)
# Phrases that name errors without reporting one: a test failed as expected, a tool's banner or hint.
_QUIET_WORDS = ("expected failure", "xfail", "error detector", "error checker", "rerun with")
# A note under a diagnostic (`a.h:9:5: note:   substitution failed:`): the family's to shorten.
_NOTE_RE = re.compile(r":\d+(?::\d+)?: note: ")
# A test's row in a runner's progress (`tests/a.py::test_x FAILED [ 46%]`, `test_x (m.T.test_x) ... ERROR`):
# covered where the same test id is shown with its failure.
_OUTCOME_ROW_RE = re.compile(
    r"^(\S+(?: \([^)]*\))?)(?: \.\.\.)? (?:FAILED|ERROR|FAIL|XPASS)\s*(?:\[\s*\d+%\])?$"
)
# A quoted source line (`17 |     ok, failed = run()`): its words are code, not a report.
_CODE_FRAME_RE = re.compile(r"^\s*\d*\s*[|│┃]|^\s*\d+ [+-]\s|^\s+[+-]\s{4,}")
# A listing's row: `ls -l`/`tar -tv`, `dir`.
_ROW_RE = re.compile(r"[-dlcbps][rwxsStT-]{9}[.+@]?\s|\s*\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\s+\d{1,2}:\d{2}")


def _whole_text(pattern: re.Pattern[str]) -> re2._Regexp:
    """`pattern` for RE2 over the whole text: `^` and `$` at each line, `\\s` not across lines."""
    options = re2.Options()
    options.log_errors = False
    return re2.compile("(?m)" + pattern.pattern.replace(r"\s", r"[ \t]"), options)


_REPORT_SCAN = _whole_text(re.compile(f"{_TEST_FAILURE_RE.pattern}|{_SUMMARY_RE.pattern}"))
_WARNING_SCAN = _whole_text(WARNING_RE)


@dataclass(frozen=True)
class Guard:
    """The guarded lines of one output, by index."""

    errors: frozenset[int]  # errors, failures and failing tests: their context is guarded too
    markers: frozenset[int]  # every line that carries a diagnostic (the errors among them)
    lines: frozenset[int]  # the markers and their attached context


def find(out: Output, data: bool = False) -> Guard:
    """The guarded lines; in `data` (a listing, a diff, a history) error words are content unless
    the command failed."""
    lines = out.lines
    if data and not out.failed:
        return Guard(frozenset(), frozenset(), frozenset())
    # One pass finds failing tests and summaries alike; each line found is then sorted.
    candidates = _matching(out, _REPORT_SCAN)
    errors = set(out.error_lines)
    errors.update(i for i in candidates if _TEST_FAILURE_RE.search(lines[i]))
    errors = {
        i
        for i in errors
        if len(lines[i]) <= MAX_LINE
        and not _is_entry(lines[i])
        and not _CODE_FRAME_RE.match(lines[i])
        and not _NOTE_RE.search(lines[i])
        and not _reports_nothing(lines[i])
    }
    tail = len(lines) - SUMMARY_TAIL
    markers = {i for i in range(max(tail, 0), len(lines)) if COUNTS_RE.search(lines[i])}
    markers.update(i for i in candidates if _SUMMARY_RE.search(lines[i]))
    if not errors and out.failed:  # warnings among errors, or after a success, are the family's to count
        markers.update(_matching(out, _WARNING_SCAN))
        markers.update(_locations(out))
    markers = {i for i in markers if len(lines[i]) <= MAX_LINE and not _is_entry(lines[i])} | errors
    guarded = set(markers)
    ordered = sorted(errors)
    for i in ordered:
        guarded.update(_attached(lines, i))
    guarded.update(_headers(lines, ordered))
    return Guard(frozenset(errors), frozenset(markers), frozenset(guarded))


def protect(sel: Selection, guard: Guard) -> None:
    """Pin every guarded line a family left out, except the frames a stack layer counted and the
    repeats of a line that is shown already (the same words twice tell nothing more)."""
    level, reasons, lines = sel.level, sel.reasons, sel.lines
    shown = {lines[i] for i in guard.lines if level[i] in (KEPT, PINNED)}
    rows = []
    for i in sorted(guard.lines):
        if level[i] in (KEPT, PINNED) or lines[i] in shown:
            continue
        if level[i] == HIDDEN and reasons[i] in CODE_REASONS:
            continue
        row = _OUTCOME_ROW_RE.match(lines[i])
        if row:
            rows.append((i, row.group(1)))
            continue
        level[i] = PINNED
        shown.add(lines[i])
    if rows:
        text = "\n".join(line for line, lv in zip(lines, level, strict=True) if lv in (KEPT, PINNED))
        for i, test_id in rows:
            if test_id not in text:
                level[i] = PINNED


def missing(lines: list[str], markers: frozenset[int], shown: list[str]) -> int:
    """How many marker lines are not in `shown` (the budget cut them), counted by distinct text."""
    absent = {lines[i] for i in markers} - set(shown)
    if not absent:
        return 0
    text = "\n".join(shown)  # a line glued back onto the one before it is shown inside that line
    return sum(1 for line in absent if line not in text)


def _reports_nothing(line: str) -> bool:
    """Whether the line's error words are names in code, or the line is one of the quiet kinds."""
    lower = line.lower()
    quiet = (
        _QUIET_START_RE.match(line) is not None
        or any(w in lower for w in _QUIET_WORDS)
        or (_NOT_REPORTS_RE.search(line) is not None and not is_error_line(_NOT_REPORTS_RE.sub("", line)))
    )
    return quiet and not _TEST_FAILURE_RE.search(line)


def _is_entry(line: str) -> bool:
    """A listed entry that only names a file: a bare path, an `ls -l`/`tar -tv` row, a `dir` row."""
    bare = line.strip()
    if (
        bare
        and " " not in bare
        and "\t" not in bare
        and ("/" in bare or "\\" in bare)
        and ":" not in bare[2:]
    ):
        return True
    return _ROW_RE.match(line) is not None


def _matching(out: Output, pattern: re2._Regexp) -> list[int]:
    """The lines `pattern` matches in, in order."""
    starts, found = out.starts, []
    for m in pattern.finditer(out.text):
        i = bisect_right(starts, m.start()) - 1
        if not found or found[-1] != i:
            found.append(i)
    return found


def _locations(out: Output) -> set[int]:
    lines, starts = out.lines, out.starts
    found: set[int] = set()
    last = -1
    for m in _LOCATION_SCAN_RE.finditer(out.text):
        i = bisect_right(starts, m.start()) - 1
        if i == last:
            continue
        last = i
        line = lines[i]
        if LOG_RECORD_RE.match(line):
            continue
        if _PERL_LOCATION_RE.search(line):
            found.add(i)
            continue
        at = LOCATION_RE.search(
            line
        )  # `path:3:1: message`, or a severity or code after it; not `app.py:45 started`
        if at and (
            at.group().startswith("File")
            or line[at.end() : at.end() + 2] == ": "
            or diagnostics.level_of(line[at.end() :].lstrip(" :-")) is not None
        ):
            found.add(i)
    return found


def _attached(lines: list[str], i: int) -> list[int]:
    """The continuation of error marker `i`, when it is a located diagnostic or ends in a colon: the
    indented lines under it (a compiler's source line and caret, javac's `symbol:`, TAP's comments)."""
    attached: list[int] = []
    marker = lines[i]
    depth = indent(marker)
    comment = marker.lstrip().startswith("#")  # TAP: a failure's details are the comments under it
    if comment or marker.rstrip().endswith((":", "：")) or LOCATION_RE.search(marker):
        for j in range(i + 1, min(i + 1 + CONTINUATION, len(lines))):
            line = lines[j]
            if not line.strip() or not (
                indent(line) > depth or CARET_RE.match(line) or (comment and line.lstrip().startswith("#"))
            ):
                break
            attached.append(j)
    return attached


def _headers(lines: list[str], errors: list[int]) -> set[int]:
    """The header of the block each indented error sits in: the nearest line above it with less
    indent, when that line ends in a colon or names the file whose findings are listed under it.
    Errors of one block share the walk up, so the search is linear in the text."""
    found: set[int] = set()
    prev, prev_depth, prev_header = -1, -1, None
    for i in errors:
        depth = indent(lines[i])
        if not depth:
            continue
        floor = prev if prev_depth == depth else -1
        header = None
        j = i - 1
        while j > max(floor, i - 1 - HEADER_REACH):
            line = lines[j]
            if line.strip() and indent(line) < depth:
                header = j
                break
            j -= 1
        else:
            if j == floor and floor >= 0:
                header = prev_header
        if (
            header is not None
            and len(lines[header]) <= MAX_LINE
            and (lines[header].rstrip().endswith((":", "：")) or _is_entry(lines[header]))
        ):
            found.add(header)
        prev, prev_depth, prev_header = i, depth, header
    return found
