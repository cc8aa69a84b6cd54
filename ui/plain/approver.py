"""The plain front ends' approval question: asked in the terminal, answered with the numbering
every front end uses (ui/approval_text.py)."""

from __future__ import annotations

import os
import shutil
from contextlib import nullcontext
from typing import TextIO

from core import protocol as ev
from core.i18n import _
from ui.approval_text import compact_action, label, offered, parse_decision, wrap
from ui.plain.interrupts import InterruptHandler
from ui.terminal import read_line

GUTTER = "  ┃ "
SUMMARY = "  ┆ "  # the risky lines repeated under a command longer than the screen


def _size(stream: TextIO) -> tuple[int, int]:
    """The terminal's (columns, lines), asked of the terminal itself: readline exports a COLUMNS that
    goes stale when the window is resized, and `shutil.get_terminal_size` believes it."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        size = shutil.get_terminal_size()
    return size.columns, size.lines


class TerminalApprover:
    """Asks in the terminal. The question shows the whole action exactly as it will run, as the
    runtime's one sanitiser passed it (secrets redacted, escape sequences made visible: they cannot
    erase it and draw another), every line of it wrapped behind a gutter that the action's own text
    cannot imitate; one longer than the screen is followed by its risky lines and the reason."""

    def __init__(self, stream: TextIO, interrupts: InterruptHandler | None) -> None:
        self.stream, self.interrupts = stream, interrupts

    def decide(self, request: ev.ApprovalRequested) -> tuple[str, str]:
        """(decision, reason) for one question."""
        columns, lines = _size(self.stream)
        width = max(20, columns - len(GUTTER) - 1)
        # The whole action, every row of it: what is approved is what was shown, nothing cut out.
        rows = [row for line in request.action.rstrip("\n").split("\n") for row in wrap(line, width)]
        choices = offered(request)
        options = " · ".join(f"{d.key} {label(d, request)}" + (f" ({d.alias})" if d.alias else "") for d in choices)
        reason = _(request.reason)  # a gate's fixed reason has its translation
        text = "\n? " + _("Approval needed: {reason}").format(reason=reason) + "\n" + "".join(
            f"{GUTTER}{row}\n" for row in rows)
        if len(rows) > max(4, lines - 10):
            # Longer than the screen: its start scrolled away. Below it, the risky lines again (each
            # from the whole command above) and why it asks, so both are on screen with the question.
            summary = compact_action(request.action, request.command, request.cwd, line_chars=width)
            text += ("  ↑ " + _("the whole command is above ({count} rows); its first, last and risky lines:").format(
                         count=len(rows)) + "\n"
                     + "".join(f"{SUMMARY}{row}\n" for line in summary.split("\n") for row in wrap(line, width))
                     + "  " + _("why it asks: {reason}").format(reason=reason) + "\n")
        self.stream.write(text + f"  {options}\n  " + _("Allow it? [y/N] "))
        self.stream.flush()
        answer = self._read()
        decision = parse_decision(answer or "", choices) or "deny"
        if decision == "deny_reason":
            self.stream.write("  " + _("Why (the model is told)? "))
            self.stream.flush()
            return decision, (self._read() or "").strip()
        return decision, "" if decision != "deny" else _("the user said no")

    def _read(self) -> str | None:
        try:
            with self.interrupts.prompting() if self.interrupts else nullcontext():
                return read_line()
        except KeyboardInterrupt:
            return ""
