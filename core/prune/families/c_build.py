"""C and C++ builds: gcc, clang, make, cmake, ninja, the linker.

A diagnostic group is `file:line:col: error: ...` with its source snippet and caret lines, the
`note:` lines that follow it, and the `In function '...'` / `In file included from` context lines
printed just before it. Error groups stay whole; warning groups go when the build failed and shrink
to their headline when it succeeded. Compiler command lines, `Entering directory` and cmake/ninja
progress go; `make: *** [...] Error 1` and linker errors stay.
"""

from __future__ import annotations

import re
from collections import Counter

from core.prune.families.base import COMMAND, CONTENT, WEAK_COMMAND, Family
from core.prune.output import Output
from core.prune.rules import FULL_WARNINGS, WARNING_LINES, is_error_line, kinds_note
from core.prune.selection import KEPT, Selection

_DIAG_RE = re.compile(r"^(.+?):\d+(?::\d+)?: (fatal error|error|warning|note|remark)(?:\[[^\]]*\])?: ")
_CONTEXT_RE = re.compile(
    r"^\S.*?: (?:In (?:function|member function|constructor|destructor|static member function|instantiation of"
    r"|lambda function|substitution of|copy constructor)|At (?:top level|global scope))|^In file included from "
    r"|^\s+from \S+[:,]$|^\S+: +required from |^\S.*?: +(?:required|recursively required) (?:from|by) "
)
_COMMAND_RE = re.compile(
    r"^\s*(?:\S*/)?(?:cc|gcc|g\+\+|c\+\+|clang|clang\+\+|ar|ld|ranlib|mkdir|install|cp|rm|ln|nvcc|as|strip|"
    r"x86_64-\S+-gcc|arm-\S+-gcc|libtool|/usr/bin/cmake|cmake -E)(?:-\d+)?\s"
)
_PROGRESS_RE = re.compile(
    r"^\[\s*\d+%\] (?:Building|Linking|Generating|Scanning|Copying|Running|Automatic|Creating|Performing)"
    r"|^\[\d+/\d+\] |^(?:g?make)(?:\[\d+\])?: (?:Entering|Leaving) directory|^-- (?!Configuring done|Generating done"
    r"|Build files)|^\s+(?:CC|CXX|LD|AR|AS|CCLD|CXXLD|GEN|INSTALL)\s+\S"
)
_MAKE_ERROR_RE = re.compile(
    r"^(?:g?make|ninja|cmake)(?:\[\d+\])?: (?:\*\*\*|Target .* not remade)|^ninja: build stopped|^FAILED: "
    r"|^CMake Error|^collect2: |^\S*ld(?:\.\w+)?: |undefined reference to|multiple definition of"
)
MAX_GROUP_LINES = 40
_QUOTED_RE = re.compile(r"‘[^’]*’|'[^']*'|`[^`]*`|\"[^\"]*\"")


def detect(out: Output) -> int:
    if out.command.runs("gcc", "g++", "cc", "c++", "clang", "clang++", "cmake", "ninja", "meson", "ctest"):
        return COMMAND
    score = WEAK_COMMAND if out.command.runs("make", "gmake", "bear", "scons") else 0
    if out.has(": error: ", ": warning: ", "make: ***", "make[1]: ***", "CMake Error", "ninja: build stopped"):
        score += CONTENT
    return score


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    groups = _groups(lines)
    failed = out.failed or any(kind.endswith("error") for kind, _, _ in groups)
    warning_groups = []
    for kind, start, stop in groups:
        if kind.endswith("error"):
            sel.pin_range(start, min(stop, start + MAX_GROUP_LINES))
        else:
            warning_groups.append((start, stop))
    hidden = warning_groups if failed else warning_groups[FULL_WARNINGS:]
    for start, stop in hidden:
        sel.hide_range(start, stop, WARNING_LINES)
    if hidden and not failed:
        sel.note(hidden[0][0], kinds_note("compiler warnings", Counter(_flag(lines, a, b) for a, b in hidden)))
    for i, line in enumerate(lines):
        if sel.level[i] != KEPT:
            continue
        if _MAKE_ERROR_RE.search(line) or is_error_line(line):
            sel.pin(i)
        elif _COMMAND_RE.match(line):
            sel.hide(i, "build commands")
        elif _PROGRESS_RE.match(line):
            sel.hide(i, "build progress lines")
    return sel


def _flag(lines: list[str], start: int, stop: int) -> str:
    """The warning's kind: its `[-Wflag]`, or its message with quoted names left out."""
    headline = next((lines[j] for j in range(start, stop) if _DIAG_RE.match(lines[j])), "")
    if headline.endswith("]") and "[-W" in headline:
        return headline[headline.rfind("[-W") + 1:-1]
    return _QUOTED_RE.sub("…", headline.split(": warning: ", 1)[-1])


def _groups(lines: list[str]) -> list[tuple[str, int, int]]:
    """(kind of the primary diagnostic, first line, line after) for each diagnostic group."""
    groups: list[tuple[str, int, int]] = []
    i, n = 0, len(lines)
    context_from = -1  # first of the context lines seen just before a diagnostic
    while i < n:
        line = lines[i]
        if _CONTEXT_RE.match(line):
            context_from = i if context_from < 0 else context_from
            i += 1
            continue
        m = _DIAG_RE.match(line)
        if m is None:
            context_from = -1
            i += 1
            continue
        j = _snippet_end(lines, i + 1)
        kind = m.group(2)
        start = context_from if context_from >= 0 else i
        context_from = -1
        if kind in ("note", "remark") and groups and groups[-1][2] == start:
            prev_kind, prev_start, _ = groups.pop()
            groups.append((prev_kind, prev_start, j))  # a note belongs to the diagnostic above it
        else:
            groups.append((kind, start, j))
        i = j
    return groups


def _snippet_end(lines: list[str], i: int) -> int:
    """Past the source snippet of a diagnostic: ` 39 |  code`, `    |  ^~~`, or plain indented lines."""
    n = len(lines)
    while i < n and lines[i][:1] == " " and not _CONTEXT_RE.match(lines[i]) and not _DIAG_RE.match(lines[i]):
        i += 1
    return i


FAMILY = Family("c-build", detect, select)
