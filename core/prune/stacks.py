"""Stack traces of many runtimes: keep the innermost frames and the user's own, count the rest.

A crash through a framework is mostly library frames. Someone fixing it needs the message (kept by
the error anchors), the innermost frames (where it broke) and every frame in their own code (how
it got there). Library frames are hidden and counted. Python tracebacks, innermost last, are
`pytraceback`'s; this module knows the innermost-first runtimes:
- Node/JavaScript `    at fn (/path/file.js:4:24)`, Java/Kotlin/Scala `\tat pkg.Cls.m(File.java:12)`
  with `... N more`, .NET `   at Ns.Cls.M() in /path/File.cs:line 12`, Ruby `from file.rb:12:in`;
- Go `goroutine 1 [running]:` with `pkg.fn(...)` / `\t/path/file.go:12 +0x1d` pairs;
- Rust backtraces `   3: crate::fn` / `at ./src/main.rs:4:5`;
- AddressSanitizer and friends `    #0 0x4f in fn /path/file.c:12:5`, gdb `#0  0x… in fn () at x.c:5`,
  valgrind `==12==    at 0x…: fn (file.c:5)` / `by 0x…`.
"""

from __future__ import annotations

import re

from core.prune.output import Output
from core.prune.selection import HIDDEN, Selection

_FRAME_RE = re.compile(
    r"^\s+at \S.*(?:[:(]\d+(?::\d+)?\)?|\((?:Native Method|Unknown Source|<anonymous>)\)|:line \d+)(?: \{)?$"  # JS, JVM, .NET
    r"|^\s+at (?:async )?(?:node:|native|file://|/)\S*$"
    r"|^\s+from \S+:\d+:in "  # Ruby
    r"|^\s*#\d+\s+0x[0-9a-fA-F]+ (?:in |\()"  # sanitizers, gdb
    r"|^\s+#\d+ \S+ \S+:\d+(?::\d+)? \(\S+\+0x[0-9a-f]+\)$"  # ThreadSanitizer: `#0 fn /x.c:7:5 (bin+0x12b9)`
    r"|^#\d+\s+\S+ \(.*\) at \S+:\d+$"  # gdb without an address
    r"|^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: "  # valgrind
    r"|^\s+\d+: (?:0x[0-9a-f]+ - )?\S"  # Rust backtrace symbol line
    r"|^\s+at \S+:\d+(?::\d+)?$"  # Rust backtrace location line
    r"|^\S+\(.*\)$|^\t\S+\.go:\d+(?: \+0x[0-9a-f]+)?$"  # Go: the call, then its file
)
_LIBRARY_RE = re.compile(
    r"node_modules|node:internal|\(internal/|\(node:|\(<anonymous>\)|\bat (?:async )?node:"
    r"|\bat (?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|org\.junit|junit|org\.apache|org\.springframework"
    r"|org\.gradle|org\.eclipse|org\.testng|org\.jetbrains|io\.netty|reactor|akka|com\.google|worker\.org\.gradle)\."
    r"|\bat (?:System|Microsoft)\.|/gems/|/rubygems/|/ruby/\d"
    r"|/usr/(?:local/)?(?:go|lib)/|/go/pkg/mod/|^\s*(?:runtime|testing|reflect|sync)\.\S+\(|/src/runtime/"
    r"|\b(?:std|core|alloc|test)::|/rustc/|__rust|rust_begin_unwind|\blibc\.so|\blibstdc\+\+|\blibasan|\blibubsan"
    r"|/libsanitizer/|\bin __interceptor_"
    r"|\blibtsan|\bvgpreload_|\(in /|\bfrom /lib|\bat \./(?:nptl|stdlib|csu|sysdeps|libio|signal)/|\(/lib|\(/usr/lib"
    r"|\b_start\b|__libc_start|\(BuildId|<unknown>"
)
_ELIDED_RE = re.compile(r"^\s*\.\.\. \d+ more$|^\s*\.\.\. \d+ (?:frames|lines) .*$")
INNERMOST = 2  # frames kept at the top of each trace, library or not
MAX_USER = 20  # user frames kept per trace
LIBRARY_FRAMES = "library frames"
MIN_RUN = 3  # shorter runs of frames are left as they are


def is_frame(line: str) -> bool:
    return _FRAME_RE.match(line) is not None


def is_library(frame: str) -> bool:
    """Whether a frame is in a runtime, a standard library or a dependency rather than the user's code."""
    return _LIBRARY_RE.search(frame) is not None


def apply(sel: Selection, out: Output, force: bool = False) -> list[tuple[int, int]]:
    """Mark every run of stack frames; returns the (start, stop) spans of the runs.

    With `force`, library frames go even where a family pinned them (a family pins an error block
    whole; the frames inside node_modules in it are still noise)."""
    lines = out.lines
    spans: list[tuple[int, int]] = []
    n = len(lines)
    candidates = sorted(out.lines_with_any(" at ", "\tat ", "#", "from ", ".go:", "::", "==", "0x"))
    k = 0
    while k < len(candidates):
        i = candidates[k]
        if not is_frame(lines[i]) or (spans and i < spans[-1][1]):
            k += 1
            continue
        j = i
        while j < n and (is_frame(lines[j]) or _ELIDED_RE.match(lines[j])):
            j += 1
        if j - i >= MIN_RUN:
            _mark(sel, lines, i, j, force)
            spans.append((i, j))
            if i and lines[i - 1].strip() and not force:  # its title: `Caused by: ...`, `freed by thread T0 here:`
                sel.pin(i - 1)
        k += 1
        while k < len(candidates) and candidates[k] < j:
            k += 1
    return spans


def _mark(sel: Selection, lines: list[str], start: int, stop: int, force: bool = False) -> None:
    frames = 0
    user = 0
    for j in range(start, stop):
        line = lines[j]
        if _ELIDED_RE.match(line):
            sel.pin(j)
            continue
        frames += 1
        library = is_library(line)
        if frames <= INNERMOST or (not library and user < MAX_USER):
            if not force:
                sel.pin(j)
            user += not library
        elif force:
            sel.level[j], sel.reasons[j] = HIDDEN, LIBRARY_FRAMES
        else:
            sel.hide(j, LIBRARY_FRAMES)
