"""Diagnostics glued to the end of another line.

A program's stdout and a checker's stderr share one pipe but not one buffer: when the program has
printed `progress 41%` without a newline and valgrind reports, the terminal shows
`progress 41%==7731== Invalid read of size 4`. Rules that look for a diagnostic at the start of a
line would miss it, so such a line is split where the diagnostic starts, the rules see two lines,
and rendering writes the physical line back whole when either part is kept.
"""

from __future__ import annotations

import re

from core.prune.rules import line_starts, lines_containing
from core.prune.selection import HIDDEN, KEPT, PINNED, UNSET, Selection

# The line starts that checkers and runtimes write on stderr, wherever the other stream left off:
# valgrind and the sanitizers (`==123== `, `==123==ERROR:`, the sanitizers' rule of `=`), Python,
# Go and Rust panics, the JVM, PHP.
_GLUED_RE = re.compile(
    r"(?<=[^\s=])(?===\d+==(?: |ERROR: )|={40,}$|Traceback \(most recent call last\):$"
    r"|PHP (?:Fatal error|Warning|Notice|Deprecated|Parse error): |panic: |thread '[^']*' panicked at "
    r"|Exception in thread \")"
)
# Literal parts of those starts: only lines holding one are tried.
_NEEDLES = ("==", "Traceback (most", "PHP ", "panic: ", "panicked at", "Exception in thread")
_RANK = {UNSET: 0, HIDDEN: 1, KEPT: 2, PINNED: 3}


def split(text: str, lines: list[str]) -> tuple[list[str], frozenset[int]]:
    """The lines with each glued diagnostic on a line of its own, and the indices of those lines
    (each continues the line before it). `text` is the lines joined with newlines: candidate lines
    are found in it at C speed, since a regex tried at every position of a long log costs too much."""
    if not any(n in text for n in _NEEDLES):
        return lines, frozenset()
    cuts = {}
    for i in lines_containing(text, line_starts(lines), _NEEDLES):
        at = [m.start() for m in _GLUED_RE.finditer(lines[i])]
        if at:
            cuts[i] = at
    if not cuts:
        return lines, frozenset()
    out: list[str] = []
    glued: set[int] = set()
    for i, line in enumerate(lines):
        prev = 0
        for at in cuts.get(i, ()):
            out.append(line[prev:at])
            glued.add(len(out))
            prev = at
        out.append(line[prev:])
    return out, frozenset(glued)


def join_levels(sel: Selection) -> None:
    """Both parts of a physical line get the firmer of their two levels, so it is kept whole."""
    level = sel.level
    for j in sel.glued:
        a, b = level[j - 1], level[j]
        if _RANK[a] >= 2 or _RANK[b] >= 2:
            level[j - 1] = level[j] = max(a, b, key=_RANK.__getitem__)
