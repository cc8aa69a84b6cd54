"""C and C++ builds: gcc, clang, make, cmake, ninja, the linker.

A diagnostic group is `file:line:col: error: ...` with its source snippet and caret lines, the
`note:` lines that follow it, and the `In function '...'` / `In file included from` context lines
printed just before it. Error groups stay whole; warning groups go when the build failed and shrink
to their headline when it succeeded. Compiler command lines, `Entering directory` and cmake/ninja
progress go; `make: *** [...] Error 1` and linker errors stay.

Understands gcc/g++ 9-14 and clang 12-18 default diagnostics, GNU make 4, cmake 3 with make or ninja.
Falls through to the general layer: MSVC `file(12): error C2065`, and -fdiagnostics-format=json.
"""

from __future__ import annotations

import re
from collections import Counter

from core.prune.families.base import COMMAND, CONTENT, WEAK_COMMAND, Family
from core.prune.output import Output
from core.prune.rules import CARET_RE, FULL_WARNINGS, WARNING_LINES, kinds_note
from core.prune.selection import KEPT, Selection
from core.prune.words import SEVERITIES, SEVERITY_ALTERNATION

# Under a translated locale the severity is the language's own word (`错误：`, `警告：`), with its colon.
_DIAG_RE = re.compile(r"^(.+?):\d+(?::\d+)?: (fatal error|error|warning|note|remark|" + SEVERITY_ALTERNATION +
                      r")(?:\[[^\]]*\])?(?:: |：)")
_CONTEXT_RE = re.compile(
    r"^\S.*?: (?:In (?:function|member function|constructor|destructor|static member function|instantiation of"
    r"|lambda function|substitution of|copy constructor)|At (?:top level|global scope))|^In file included from "
    r"|^\s+from \S+[:,]$|^\S+: +required from |^\S.*?: +(?:required|recursively required) (?:from|by) "
)
_COMMANDS = {"cc", "gcc", "g++", "c++", "clang", "clang++", "ar", "ld", "ranlib", "mkdir", "install", "cp", "rm",
             "ln", "nvcc", "as", "strip", "libtool", "cmake"}
_PROGRESS_RE = re.compile(
    r"\[\s*\d+%\] (?:Building|Linking|Generating|Scanning|Copying|Running|Automatic|Creating|Performing)"
    r"|\[\d+/\d+\] |g?make(?:\[\d+\])?: (?:Entering|Leaving) directory|-- (?!Configuring done|Generating done"
    r"|Build files)|(?:CC|CXX|LD|AR|AS|CCLD|CXXLD|GEN|INSTALL)\s+\S"
)
_MAKE_ERROR_RE = re.compile(
    r"^(?:g?make|ninja|cmake)(?:\[\d+\])?: (?:\*\*\*|Target .* not remade)|^ninja: build stopped|^FAILED: "
    r"|^CMake Error|^collect2: |^\S*ld(?:\.\w+)?: |undefined reference to|multiple definition of"
)
# Substrings that every match of the patterns above contains: lines without them are not tried.
_DIAG_NEEDLES = (": error", ": warning", ": note", ": fatal error", ": remark", *(f": {w}" for w in SEVERITIES))
_CONTEXT_NEEDLES = (": In ", ": At ", "In file included from", "  from ", "required from", "required by")
_MAKE_NEEDLES = ("***", "not remade", "build stopped", "FAILED: ", "CMake Error", "collect2", "ld: ",
                 "undefined reference", "multiple definition")
MAX_GROUP_LINES = 40
MAX_NOTES = 2  # notes kept under an error (gcc prints one per overload candidate)
# The `      |      ~~~^~~~` line (gcc) or bare `^` (javac) under a quoted source line: the column is in
# the location already.
_MARKER_LINE_RE = re.compile(r"^\s*\|\s*[~^]+[\s~^]*$")
MARKER_LINES = "caret lines"
# A template-instantiation step inside a system header: `/usr/include/...: required from ...`.
_SYSTEM_REQUIRED_RE = re.compile(r"^/(?:usr|opt|Library|Applications)/\S+: +(?:required|recursively required) ")
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
    sel.quiet.add(MARKER_LINES)
    groups = _groups(lines, out.lines_with_any(*_DIAG_NEEDLES), out.lines_with_any(*_CONTEXT_NEEDLES))
    failed = out.failed or any(kind.endswith("error") for kind, _, _ in groups)
    warning_groups = []
    for kind, start, stop in groups:
        if kind.endswith("error"):
            _error_group(sel, start, min(stop, start + MAX_GROUP_LINES))
        else:
            warning_groups.append((start, stop))
    hidden = warning_groups if failed else warning_groups[FULL_WARNINGS:]
    for start, stop in hidden:
        sel.hide_range(start, stop, WARNING_LINES)
    if hidden and not failed:
        sel.note(hidden[0][0], kinds_note("compiler warnings", Counter(_flag(lines, a, b) for a, b in hidden)))
    important = out.error_set | {i for i in out.lines_with_any(*_MAKE_NEEDLES) if _MAKE_ERROR_RE.search(lines[i])}
    for i, line in enumerate(lines):
        if sel.level[i] != KEPT:
            continue
        if i in important:
            sel.pin(i)
        elif is_compiler_command(line):
            sel.hide(i, "build commands")
        elif _PROGRESS_RE.match(line.lstrip()) or (failed and line.startswith("-- ")):
            sel.hide(i, "build progress lines")  # on failure cmake's "-- Configuring done" is progress too
    return sel


def _error_group(sel: Selection, start: int, stop: int) -> None:
    """Pin an error with its context, but not every overload candidate, nor the template chain
    inside system headers: the first notes say what the compiler tried, the rest repeat it."""
    lines = sel.lines
    notes = 0
    in_note = False
    for j in range(start, stop):
        line = lines[j]
        m = _DIAG_RE.match(line)
        if m is not None:
            in_note = _severity(m) in ("note", "remark")
            notes += in_note
        if in_note and notes > MAX_NOTES:
            sel.hide(j, "candidate notes")
        elif _MARKER_LINE_RE.match(line) or CARET_RE.match(line):
            sel.hide(j, MARKER_LINES)
        elif _SYSTEM_REQUIRED_RE.match(line):
            sel.hide(j, "template instantiation lines")
        else:
            sel.pin(j)


def _severity(m: re.Match[str]) -> str:
    """The diagnostic's severity in English, whatever the locale printed."""
    return SEVERITIES.get(m.group(2), m.group(2))


def is_compiler_command(line: str) -> bool:
    """A compiler or tool invocation echoed by make: `cc -O2 -c -o x.o x.c`, `/usr/bin/ar rcs ...`."""
    word = line.lstrip().split(" ", 1)[0]
    name = word.rsplit("/", 1)[-1]
    return name in _COMMANDS or name.startswith(("gcc-", "g++-", "clang-", "clang++-")) or name.endswith(
        ("-gcc", "-g++", "-ld", "-ar"))


def _flag(lines: list[str], start: int, stop: int) -> str:
    """The warning's kind: its `[-Wflag]`, or its message with quoted names left out."""
    headline = next((lines[j] for j in range(start, stop) if _DIAG_RE.match(lines[j])), "")
    if headline.endswith("]") and "[-W" in headline:
        return headline[headline.rfind("[-W") + 1:-1]
    return _QUOTED_RE.sub("…", headline.split(": warning: ", 1)[-1])


def _groups(lines: list[str], diagnostics: set[int], contexts: set[int]) -> list[tuple[str, int, int]]:
    """(kind of the primary diagnostic, first line, line after) for each diagnostic group.

    `diagnostics` and `contexts` are the lines that may match _DIAG_RE and _CONTEXT_RE.
    """
    groups: list[tuple[str, int, int]] = []
    run_from = run_to = -2  # the last run of consecutive context lines
    for i in sorted(diagnostics | contexts):
        line = lines[i]
        if i in contexts and _CONTEXT_RE.match(line):
            run_from = run_from if run_to == i - 1 else i
            run_to = i
            continue
        m = _DIAG_RE.match(line) if i in diagnostics else None
        if m is None or (groups and i < groups[-1][2]):
            continue
        j = i + 1
        while j < len(lines) and lines[j][:1] == " " and j not in diagnostics and not (
                j in contexts and _CONTEXT_RE.match(lines[j])):
            j += 1
        start = run_from if run_to == i - 1 else i
        if _severity(m) in ("note", "remark") and groups and groups[-1][2] == start:
            kind, first, _ = groups.pop()
            groups.append((kind, first, j))  # a note belongs to the diagnostic above it
        else:
            groups.append((_severity(m), start, j))
    return groups


FAMILY = Family("c-build", detect, select)
