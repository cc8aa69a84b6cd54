"""Memory-error reports: valgrind's memcheck and the sanitizers (ASan, LSan, TSan, UBSan).

A report says what went wrong (`Invalid read of size 4`, `heap-buffer-overflow`), where (the
innermost frames and the user's own), and where the bad address lies relative to its block
(`Address 0x… is 4 bytes after a block of size 16 alloc'd`, `… is located 8 bytes inside of
24-byte region`): that sentence sits between two stacks and is what tells an off-by-one from a
use-after-free, so it is pinned with the headers. The banner, the heap and leak tables (all but
`definitely lost`), the shadow-byte map and its legend go, and so do library frames even at the top
of a stack: there the innermost frame is the checker's own interceptor (`malloc`, `free`), and the
user's frame below it is the one that matters.

Understands memcheck's default output and the sanitizers' reports as gcc and clang print them;
the program's own output around them is left to the generic rules. Falls through: helgrind/DRD
thread reports are kept by the error anchors but not shortened.
"""

from __future__ import annotations

import re

from core.prune import stacks
from core.prune.families import generic
from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import HIDDEN, Selection

_HEADER_RE = re.compile(
    r"^==\d+== (?:Invalid (?:read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free"
    r"|Source and destination overlap|Argument '|Process terminating|Jump to the invalid address|Stack overflow"
    r"|[\d,]+(?: \([\d,]+ direct, [\d,]+ indirect\))? bytes in [\d,]+ blocks are (?:definitely|possibly) lost)"
    r"|^==\d+==ERROR: \w+Sanitizer: |^==\d+==WARNING: \w+Sanitizer: |^WARNING: ThreadSanitizer: "
    r"|^(?:READ|WRITE) of size \d+ |^(?:Previous )?(?:read|write|atomic \w+) of size \d+ at "
    r"|^(?:freed|previously allocated|allocated) by thread \S+ here:|^(?:Direct|Indirect) leak of \d+ "
    r"|^SUMMARY: \w+Sanitizer: |: runtime error: "
)
# Where the address lies: the sentence between the access stack and the allocation stack.
_WHERE_RE = re.compile(
    r"^==\d+==\s+(?:Address 0x[0-9A-Fa-f]+ is |Uninitialised value was created|Block was alloc'd at)"
    r"|^0x[0-9a-f]+ is located \d+ bytes |^Address 0x[0-9a-f]+ is (?:located|a wild pointer)"
)
_SUMMARY_RE = re.compile(r"^==\d+==\s+(?:definitely lost: |ERROR SUMMARY: )")
_BANNER_RE = re.compile(
    r"^==\d+== (?:Memcheck, |Copyright |Using Valgrind|Command: |Parent PID|For lists of|For counts of|Rerun with"
    r"|HEAP SUMMARY|LEAK SUMMARY|All heap blocks|To see them|Reachable blocks|\s+(?:in use at exit|total heap usage"
    r"|indirectly lost|possibly lost|still reachable|suppressed|of which reachable):|$)|^==\d+==ABORTING$|^={40,}$"
)
_SHADOW_START = "Shadow bytes around the buggy address:"
_SHADOW_LINE_RE = re.compile(r"^(?:=>|  )0x[0-9a-f]+: |^Shadow byte legend|^\s+[^:]+:\s+(?:[0-9a-f]{2}\s*)+$")
BANNER = "report banner and tables"
SHADOW = "shadow byte map lines"


def detect(out: Output) -> int:
    if out.command.runs("valgrind"):
        return COMMAND
    return STRONG_CONTENT if out.has("== Memcheck, ", "Sanitizer: ", ": runtime error: ") else 0


def select(out: Output) -> Selection:
    sel = generic.select(out)
    sel.quiet.update((BANNER, SHADOW, stacks.LIBRARY_FRAMES))  # the stamp counts them; a marker each says nothing
    lines = out.lines
    candidates = sorted(out.lines_with_any("==", "0x", "Sanitizer", " of size ", " by thread ", " leak of ",
                                           " is located ", _SHADOW_START, "runtime error"))
    for i in candidates:
        line = lines[i]
        if _HEADER_RE.search(line) or _WHERE_RE.match(line) or _SUMMARY_RE.match(line):
            sel.pin(i)
        elif _BANNER_RE.match(line):
            _drop(sel, i, BANNER)
        elif stacks.is_frame(line) and stacks.is_library(line):
            _drop(sel, i, stacks.LIBRARY_FRAMES)
        elif line.startswith(_SHADOW_START):
            j = i
            while j < len(lines) and (j == i or _SHADOW_LINE_RE.match(lines[j])):
                _drop(sel, j, SHADOW)
                j += 1
    return sel


def _drop(sel: Selection, i: int, reason: str) -> None:
    """Hidden even where the generic rules pinned it: the banner and tables mention `errors` and
    counts, which the generic rules take for a failure and a summary."""
    sel.level[i], sel.reasons[i] = HIDDEN, reason


FAMILY = Family("memory checker", detect, select)
