"""One command's cleaned output plus what is known about the command, shared by detection and rules.

Derived views (the lowercased text, line offsets, the error lines) are computed once, on first use,
because several families and the budget step ask for them.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

from core.prune.command import Command
from core.prune.rules import find_error_lines, line_starts


@dataclass
class Output:
    text: str  # the cleaned lines joined with "\n"
    lines: list[str]
    command: Command
    exit_code: int | None
    glued: frozenset[int] = frozenset()  # lines split off the end of the line before them (see glued.py)

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def starts(self) -> list[int]:
        return line_starts(self.lines)

    @cached_property
    def error_lines(self) -> list[int]:
        return find_error_lines(self.lines, self.lower, self.starts)

    @cached_property
    def error_set(self) -> frozenset[int]:
        return frozenset(self.error_lines)

    @cached_property
    def failed(self) -> bool:
        """A non-zero exit; without an exit code, whether anything looks like an error."""
        if self.exit_code is None:
            return bool(self.error_lines)
        return self.exit_code != 0

    def has(self, *needles: str) -> bool:
        """Whether the text contains any of the needles (exact case): cheap content sniffing."""
        return any(n in self.text for n in needles)

    def line_at(self, offset: int) -> int:
        """The index of the line holding character `offset` of `text`."""
        return bisect_right(self.starts, offset) - 1

    def lines_with_any(self, *needles: str) -> set[int]:
        """Indices of the lines containing any of the needles: a C-speed prefilter for line rules."""
        found: set[int] = set()
        for needle in needles:
            found.update(self.lines_with(needle))
        return found

    def lines_with(self, needle: str) -> list[int]:
        """Indices of the lines containing `needle` (exact case), found at C speed."""
        found: list[int] = []
        text, starts = self.text, self.starts
        pos = text.find(needle)
        while pos >= 0:
            line = self.line_at(pos)
            found.append(line)
            nxt = starts[line + 1] if line + 1 < len(starts) else len(text)
            pos = text.find(needle, nxt)
        return found
