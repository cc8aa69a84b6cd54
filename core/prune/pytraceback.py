"""Python tracebacks anywhere in an output: keep the frames that are the project's, drop the rest.

A crash through click, jinja2 or asyncio is mostly library frames. What someone fixing it needs is
the exception line, the innermost frame, and every frame in their own code (the entry point, the
frame that passed the bad value). Library frames are counted in the hidden-lines marker instead.
"""

from __future__ import annotations

import re

from core.prune.output import Output
from core.prune.rules import CARET_RE, LOG_RECORD_RE, indent
from core.prune.selection import Selection

HEAD = "Traceback (most recent call last):"
CHAIN_LINES = ("The above exception was the direct cause of the following exception:",
               "During handling of the above exception, another exception occurred:")
_FRAME_RE = re.compile(r'^\s*File "([^"]+)", line \d+')
LIBRARY_PATH_RE = re.compile(
    r"site-packages|dist-packages|[/\\]lib[/\\]python\d|[/\\]Lib[/\\]|^<frozen |[/\\]importlib[/\\]|^/usr/lib/"
)
MAX_EXCEPTION_LINES = 20
CARETS = "caret lines"
LIBRARY_FRAMES = "library frame lines"


def is_library(path: str) -> bool:
    return LIBRARY_PATH_RE.search(path) is not None


def apply(sel: Selection, out: Output) -> list[tuple[int, int]]:
    """Mark every traceback in the output; returns the (start, stop) line spans they cover."""
    spans: list[tuple[int, int]] = []
    for head in out.lines_with(HEAD):
        if spans and head < spans[-1][1]:
            continue
        spans.append((head, _mark(sel, out.lines, head)))
    for needle in CHAIN_LINES:
        for i in out.lines_with(needle):
            sel.pin(i)
    return spans


def _mark(sel: Selection, lines: list[str], head: int) -> int:
    sel.pin(head)
    base = indent(lines[head])
    frames: list[tuple[int, int, bool]] = []
    i, n = head + 1, len(lines)
    while i < n:
        line = lines[i]
        m = _FRAME_RE.match(line)
        if m:
            depth = indent(line)
            j = i + 1
            while j < n and lines[j].strip() and not _FRAME_RE.match(lines[j]) and (
                    indent(lines[j]) > depth or CARET_RE.match(lines[j])):
                j += 1
            frames.append((i, j, is_library(m.group(1))))
            i = j
        elif line.strip().startswith(("[Previous line repeated", "...")):
            sel.pin(i)
            i += 1
        else:
            break
    for k, (start, stop, library) in enumerate(frames):
        if library and k != len(frames) - 1:
            sel.hide_range(start, stop, LIBRARY_FRAMES)
        else:
            for j in range(start, stop):
                if CARET_RE.match(lines[j]):  # `^^^^^` under the statement: the statement says enough
                    sel.hide(j, CARETS)
                else:
                    sel.pin(j)
    if frames:
        sel.quiet.add(CARETS)
    # The exception itself: its type and message, possibly over several lines.
    stop = i
    while stop < n and stop - i < MAX_EXCEPTION_LINES:
        line = lines[stop]
        if not line.strip() or HEAD in line or line.strip() in CHAIN_LINES or (stop > i and (
                indent(line) < base or LOG_RECORD_RE.match(line))):
            break
        stop += 1
    sel.pin_range(i, stop)
    return stop
