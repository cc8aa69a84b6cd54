"""Diagnostics in the shapes that compilers and linters share, whatever the tool.

Three shapes cover most of them:
- inline: `path:line[:col]: severity: message` (gcc, clang, javac, mypy, shellcheck -f gcc),
  `path:line:col: CODE message` (flake8, ruff concise, pylint), `path(line,col): error CODE: ...`
  (tsc, msbuild), `path:line:col - error ...` (pyright, tsc --pretty);
- separated: a `severity[CODE]: message` or `CODE message` line, then ` --> path:line:col` and an
  annotated code frame (rustc, ruff's default format, miette/codespan-style reports);
- stylish: a path line, then `  line:col  severity  message  rule` rows (eslint, yamllint);
- annotated: `In path line N:`, the source line, then `^-- CODE (severity): message` under the column
  (shellcheck's default format).

A finding's header and location are what someone fixing it needs; its code frame helps for the
first few only. So error-level headers and locations are pinned, warnings are kept up to a cap and
counted by kind beyond it, and code frames after the first few are hidden.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from core.prune.output import Output
from core.prune.rules import kinds_note
from core.prune.selection import Selection
from core.prune.words import SEVERITIES, SEVERITY_ALTERNATION

# A path with an extension or a folder, or a well-known extensionless file name.
_PATH = (r"(?:[A-Za-z]:)?(?:[\w.~@+\-]*[/\\])*(?:[\w.@+\-]+\.[A-Za-z][\w]{0,9}|[\w.@+\-]+(?=[/\\])|"
         r"(?:Dockerfile|Makefile|Containerfile|Jenkinsfile|Vagrantfile|Gemfile|Rakefile)[\w.\-]*)")
_INLINE_RE = re.compile(
    r"^\s{0,4}(?:\[(?:ERROR|WARN(?:ING)?|INFO)\]\s+)?(?:In )?" + _PATH +
    r"(?::(\d+)(?::\d+)?|\((\d+)(?:,\s?\d+)?\)|:\[\d+(?:,\d+)?\])(?::| -|(?= [A-Z]{1,5}\d{1,5}\b))\s*(\S.*)$"
)
_ARROW_RE = re.compile(r"^\s*(?:-->|╭─\[|┌─|,-\[)\s*" + _PATH + r":\d+")
_STYLISH_RE = re.compile(r"^\s+\d+:\d+\s+(error|warning|info|✖|⚠|×)\s+\S")
# Where inline and stylish findings may be, found at C speed over the whole text: the path-like start
# of a line followed by a line number.
_LINE_SCAN_RE = re.compile(r"^\s{0,4}[\w.\[/\\~@+\-][^\s:(]*(?::\[?\d|\(\d)|^\s+\d+:\d+\s", re.M)
_SEVERITY_RE = re.compile(
    r"(?:^|[\s(\[/-])(fatal error|error|Error|ERROR|fatal|FATAL|warning|Warning|WARNING|warn|WARN|note|info|INFO"
    r"|information|hint|style|remark|help|convention|refactor|" + SEVERITY_ALTERNATION + r")(?=[\s:：)\]/]|$)"
)
_ANNOTATION_RE = re.compile(r"^\s*\^-*\^? ([A-Z]{1,5}\d{1,5}) \((error|warning|info|style|note)\): ")
_ANNOTATED_AT_RE = re.compile(r"^In \S.* line \d+:$")
ANNOTATED_REACH = 30  # lines between an annotation and its `In path line N:`
_CODE_RE = re.compile(r"^[A-Z]{1,5}\d{1,5}\b")  # F401, UP035, SIM118, C0114, SC2086, DL3008
_HEADER_RE = re.compile(r"^(?:(error|warning|note|help|info)(?:\[[\w\-/]+\])?:|[A-Z]{1,5}\d{1,5}\b)")
_FRAME_RE = re.compile(r"^\s*(?:\d+\s*)?[|│┆╎]|^\s*[=·]\s|^\s*(?:help|note|hint|suggestion):|^\s*[╰└`]─|^\s*\.\.\.$")
ERROR, WARNING, NOTE = "error", "warning", "note"
_LEVEL = {"fatal error": ERROR, "error": ERROR, "fatal": ERROR, "warning": WARNING, "warn": WARNING,
          "note": NOTE, "info": NOTE, "information": NOTE, "hint": NOTE, "style": WARNING, "remark": NOTE,
          "help": NOTE, "convention": WARNING, "refactor": WARNING, "✖": ERROR, "×": ERROR, "⚠": WARNING}
_LEVEL.update({word: _LEVEL[level] for word, level in SEVERITIES.items()})
# pylint's message classes (a letter and four digits): only E and F are errors.
_PYLINT_CODE_RE = re.compile(r"^[CRWI]\d{4}\b")

MAX_FINDINGS = 20_000  # past this many the budget cuts anyway
MIN_FINDINGS = 3  # fewer are left to the error windows of the generic rules
FRAMES = 2  # error findings that keep their code frame
FRAME_KEPT = 8  # lines of such a frame
WARNINGS_WITH_ERRORS = 3  # warning findings kept when there are errors too
WARNINGS_ALONE = 60  # warning findings kept when they are all there is
MAX_BLOCK = 40
FRAME_LINES = "code frame lines"
WARNING_LINES = "warning lines"


@dataclass
class Finding:
    head: int  # the message line
    location: int  # the line naming path:line (the head itself for inline findings)
    stop: int  # the line after the finding's block (its frame, help and notes)
    level: str  # ERROR, WARNING or NOTE
    kind: str  # the code or the severity, for counting what was hidden


def level_of(text: str) -> tuple[str, str] | None:
    """A finding's level and kind from its message text (what follows the location); None when it
    names neither a severity nor a code (`app.py:45: starting server` is a log line, not a finding)."""
    m = _SEVERITY_RE.search(text[:60])
    code = _CODE_RE.match(text)
    if m:
        word = m.group(1).lower()
        return _LEVEL.get(word, ERROR), code.group(0) if code else word
    if code:  # a code and no severity word: the tool counts it as a finding to fix
        return (WARNING if _PYLINT_CODE_RE.match(text) else ERROR), code.group(0)
    return None


def find(out: Output) -> list[Finding]:
    """Every finding in the output, in order."""
    lines = out.lines
    found: dict[int, Finding] = {}
    for i in out.lines_with_any("-->", "╭─[", "┌─", ",-["):
        if not _ARROW_RE.match(lines[i]):
            continue
        head = next((j for j in range(i - 1, max(i - 3, -1), -1) if lines[j].strip()), None)
        if head is None or not _HEADER_RE.match(lines[head]):
            continue
        level, kind = level_of(lines[head]) or (ERROR, "finding")  # the arrow makes it one
        found[head] = Finding(head, i, _block_end(lines, i + 1), level, kind)
    for i in sorted(out.lines_with("^-")):
        if (a := _ANNOTATION_RE.match(lines[i])) is not None:
            at = next((j for j in range(i - 1, max(i - ANNOTATED_REACH, -1), -1) if _ANNOTATED_AT_RE.match(lines[j])), i)
            found[i] = Finding(i, at, i + 1, _LEVEL[a.group(2)] if a.group(2) != "info" else NOTE, a.group(1))
    covered = bytearray(len(lines))  # lines inside a separated finding's block
    for f in found.values():
        covered[f.head:f.stop] = b"\x01" * (f.stop - f.head)
    for m in _LINE_SCAN_RE.finditer(out.text):
        i = out.line_at(m.start())
        if i in found or covered[i]:
            continue
        line = lines[i]
        if (d := _INLINE_RE.match(line)) is not None and (judged := level_of(d.group(3))) is not None:
            found[i] = Finding(i, i, _block_end(lines, i + 1, inline=True), *judged)
        elif (s := _STYLISH_RE.match(line)) is not None:
            found[i] = Finding(i, i, i + 1, _LEVEL[s.group(1)], s.group(1))
        if len(found) >= MAX_FINDINGS:
            break
    return [found[k] for k in sorted(found)]


def _block_end(lines: list[str], i: int, inline: bool = False) -> int:
    """The line after a finding's frame: the annotated source, help and note lines below it."""
    n, start = len(lines), i
    while i < n and i - start < MAX_BLOCK:
        line = lines[i]
        if inline:
            if not line.startswith((" ", "\t")) or _INLINE_RE.match(line):
                break
        elif not line.strip():
            if i + 1 < n and _FRAME_RE.match(lines[i + 1]):
                i += 1
                continue
            break
        elif _HEADER_RE.match(line) and not _FRAME_RE.match(line):
            break
        i += 1
    return i


def apply(sel: Selection, out: Output) -> list[tuple[int, int]]:
    """Mark the findings of an output with many; returns the line spans they cover (or none)."""
    findings = find(out)
    if len(findings) < MIN_FINDINGS:
        return []
    sel.quiet.add(FRAME_LINES)
    errors = [f for f in findings if f.level == ERROR]
    warnings = [f for f in findings if f.level != ERROR]
    for n, f in enumerate(errors):
        sel.pin(f.head)
        sel.pin(f.location)
        _frame(sel, f, keep=n < FRAMES)
    cap = WARNINGS_WITH_ERRORS if errors else WARNINGS_ALONE
    hidden: Counter = Counter()
    for n, f in enumerate(warnings):
        if n < cap:
            sel.keep(f.head)
            sel.keep(f.location)
            _frame(sel, f, keep=not errors and n < FRAMES)
        else:
            sel.hide_range(f.head, f.stop, WARNING_LINES)
            hidden[f.kind] += 1
    if hidden:
        first = next(f.head for f in warnings[cap:])
        sel.note(first, kinds_note("more warnings", hidden))
    return [(f.head, f.stop) for f in findings]


def _frame(sel: Selection, f: Finding, keep: bool) -> None:
    for j in range(f.head + 1, f.stop):
        if j == f.location:
            continue
        if keep and j < f.head + FRAME_KEPT:
            sel.keep(j)
        else:
            sel.hide(j, FRAME_LINES)
