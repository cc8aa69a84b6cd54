"""Which lines survive, how firmly, and why the others were hidden.

Family rules never edit lines: they only mark them. Rendering then writes the kept lines verbatim
and replaces each run of hidden lines with one marker that counts them by reason, so a kept line is
always an exact substring of the result and nothing disappears silently.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# Levels, one byte per line. UNSET lines are dropped unless some rule keeps them; HIDDEN lines were
# dropped on purpose and only a pin brings them back; KEPT lines are context the budget may take;
# PINNED lines are what the output is about (errors, failing tests, locations, summaries).
UNSET, KEPT, PINNED, HIDDEN = 0, 1, 2, 3
_RUNS_RE = re.compile(rb"[\x00\x03]+|[\x01\x02]+")

MARKER_PREFIX = "… "
BLANK = ""  # the reason of a hidden blank line: hidden, but not worth counting


@dataclass
class Rendered:
    lines: list[str]
    hidden: Counter


class Selection:
    """Marks over the cleaned lines of one output.

    `default` is the level every line starts at: KEPT for rules that remove noise from a mostly
    useful output, UNSET for rules that pick a few lines out of a mostly useless one.
    """

    def __init__(self, lines: list[str], default: int = UNSET, reason: str = "other lines") -> None:
        self.lines = lines
        self.level = bytearray([default]) * len(lines)
        self.reasons: list[str] = [reason] * len(lines)
        self.notes: dict[int, list[str]] = {}
        self.collapsible = True  # whether runs of similar KEPT lines may be folded into one
        # Reasons whose runs need no marker of their own (a code frame under each finding): the stamp
        # still counts them, but a marker per finding would cost more than it tells.
        self.quiet: set[str] = set()
        # Pinned lines that must outlast the other pinned ones when the budget cuts, most vital last:
        # a diff's file headers, then the messages around it (a formatter's "would reformat x.py").
        self.vital: list[set[int]] = []
        # Lines that continue the line before them: a diagnostic split off the end of another line,
        # written back onto it when rendered.
        self.glued: frozenset[int] = frozenset()

    def __len__(self) -> int:
        return len(self.lines)

    def keep(self, i: int) -> None:
        """Keep an undecided line (never revives a line a rule hid on purpose)."""
        if self.level[i] == UNSET:
            self.level[i] = KEPT

    def keep_range(self, start: int, stop: int) -> None:
        level = self.level
        for i in range(max(start, 0), min(stop, len(level))):
            if level[i] == UNSET:
                level[i] = KEPT

    def pin(self, i: int) -> None:
        self.level[i] = PINNED

    def pin_range(self, start: int, stop: int) -> None:
        start, stop = max(start, 0), min(stop, len(self.level))
        if stop > start:
            self.level[start:stop] = bytes([PINNED]) * (stop - start)

    def hide(self, i: int, reason: str) -> None:
        """Hide a line on purpose; pinned lines stay."""
        if self.level[i] != PINNED:
            self.level[i] = HIDDEN
            self.reasons[i] = reason

    def hide_range(self, start: int, stop: int, reason: str) -> None:
        for i in range(max(start, 0), min(stop, len(self.level))):
            self.hide(i, reason)

    def hide_all(self, indices: Iterable[int], reason: str) -> None:
        for i in indices:
            self.hide(i, reason)

    def note(self, before: int, text: str) -> None:
        """Add a line of our own (a summary of what was hidden) before line `before`."""
        self.notes.setdefault(before, []).append(text)

    def tidy_blanks(self) -> None:
        """Blank lines say nothing: one between two hidden lines goes with them, and none is counted."""
        lines, level, reasons = self.lines, self.level, self.reasons
        last = len(lines) - 1
        for i, line in enumerate(lines):
            if line and not line.isspace():
                continue
            if level[i] == KEPT and (i == 0 or level[i - 1] in (UNSET, HIDDEN)) and (
                    i == last or level[i + 1] in (UNSET, HIDDEN)):
                level[i] = HIDDEN
            reasons[i] = BLANK

    def render(self) -> Rendered:
        """The kept lines, with one counted marker for each run of hidden lines."""
        out: list[str] = []
        total: Counter = Counter()
        note_at = sorted(self.notes)
        k = 0
        for m in _RUNS_RE.finditer(bytes(self.level)):
            start, stop = m.span()
            kept_run = m.group()[0] in (KEPT, PINNED)
            pos = start
            while k < len(note_at) and note_at[k] < stop:
                if kept_run:
                    self._emit(out, pos, max(note_at[k], pos))
                    pos = max(note_at[k], pos)
                out.extend(self.notes[note_at[k]])
                k += 1
            if kept_run:
                self._emit(out, pos, stop)
                continue
            counts = Counter(self.reasons[start:stop])
            counts.pop(BLANK, None)
            if counts and self.quiet.issuperset(counts):
                total.update(counts)
                continue
            text = marker(counts) if counts else ""
            if stop - start <= 3 and sum(len(line) + 1 for line in self.lines[start:stop]) <= len(text) + 1:
                self._emit(out, start, stop)  # a marker longer than what it hides saves nothing
                continue
            total.update(counts)
            out.append(text)
        for key in note_at[k:]:
            out.extend(self.notes[key])
        return Rendered(out, total)

    def _emit(self, out: list[str], start: int, stop: int) -> None:
        """Lines start..stop, each glued line written back onto the line before it."""
        if not self.glued:
            out.extend(self.lines[start:stop])
            return
        for i in range(start, stop):
            if i in self.glued and i > start:
                out[-1] += self.lines[i]
            else:
                out.append(self.lines[i])


def marker(counts: Counter) -> str:
    """`… 316 passing tests hidden`, or `… 320 lines hidden (316 passing tests, 4 blank lines)`."""
    n = sum(counts.values())
    if len(counts) == 1:
        (reason,) = counts
        return f"{MARKER_PREFIX}{n:,} {noun(reason, n)} hidden"
    parts = ", ".join(f"{c:,} {noun(r, c)}" for r, c in counts.most_common())
    return f"{MARKER_PREFIX}{n:,} lines hidden ({parts})"


def noun(reason: str, n: int) -> str:
    """Reasons are plural nouns ("passing tests"); one of them reads better in the singular."""
    if n != 1:
        return reason
    head, _, tail = reason.rpartition(" ")
    singular = tail[:-1] if tail.endswith("s") and not tail.endswith("ss") else tail
    return f"{head} {singular}" if head else singular


def is_marker(line: str) -> bool:
    return line.startswith(MARKER_PREFIX) and line.endswith(("hidden", ")"))
