"""The plain front ends' approval question: asked in the terminal, answered with the numbering
every front end uses (core/agent/approvals.py)."""

from __future__ import annotations

import os
import shutil
import unicodedata
from contextlib import nullcontext
from typing import TextIO

from core import protocol as ev
from core.agent.approvals import compact_action, label, offered, parse_decision
from ui.plain.interrupts import InterruptHandler
from ui.terminal import read_line

GUTTER = "  ┃ "


def wrap(line: str, width: int) -> list[str]:
    """`line` in rows of at most `width` terminal columns (CJK characters take two), so every row
    of an action gets the gutter the action's own text cannot imitate."""
    rows, row, used = [], [], 0
    for char in line:
        size = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if used + size > width:
            rows.append("".join(row))
            row, used = [], 0
        row.append(char)
        used += size
    return [*rows, "".join(row)]


def _columns(stream: TextIO) -> int:
    """The terminal's width, asked of the terminal itself: readline exports a COLUMNS that goes stale
    when the window is resized, and `shutil.get_terminal_size` believes it."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return shutil.get_terminal_size().columns


class TerminalApprover:
    """Asks in the terminal. The question shows the action exactly as it will run, as the runtime's
    one sanitiser passed it (secrets redacted, escape sequences made visible: they cannot erase it
    and draw another), every line of it behind a gutter that the action's own text cannot imitate."""

    def __init__(self, stream: TextIO, interrupts: InterruptHandler | None) -> None:
        self.stream, self.interrupts = stream, interrupts

    def decide(self, request: ev.ApprovalRequested) -> tuple[str, str]:
        """(decision, reason) for one question."""
        width = max(20, _columns(self.stream) - len(GUTTER) - 1)
        action = compact_action(request.action, request.command, request.cwd, line_chars=width)
        rows = [row for line in action.split("\n") for row in wrap(line, width)]
        choices = offered(request)
        options = " · ".join(f"{d.key} {label(d, request)}" + (f" ({d.alias})" if d.alias else "") for d in choices)
        # Why it needs a yes comes first: however long the action, the risk is on screen with the question.
        self.stream.write(f"\n? Approval needed: {request.reason}\n"
                          + "".join(f"{GUTTER}{row}\n" for row in rows) + f"  {options}\n  Allow it? [y/N] ")
        self.stream.flush()
        answer = self._read()
        decision = parse_decision(answer or "", choices) or "deny"
        if decision == "deny_reason":
            self.stream.write("  Why (the model is told)? ")
            self.stream.flush()
            return decision, (self._read() or "").strip()
        return decision, "" if decision != "deny" else "the user said no"

    def _read(self) -> str | None:
        try:
            with self.interrupts.prompting() if self.interrupts else nullcontext():
                return read_line()
        except KeyboardInterrupt:
            return ""
