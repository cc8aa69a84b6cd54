"""What keeps a weak model's turn moving, or stops it with a reason.

A small local model fails in ways a strong one rarely does: its tool call cannot be parsed (a
Markdown fence around it, a tool named after something in the prompt), so the server fails the
response; it echoes the agent's own placeholder texts back as if they were output; it calls the same
tool with the same result again and again. Resending an unchanged request at temperature 0 gets the
same failure, so an unreadable answer is followed by a short correction for the model, a few times
in a row at most. The loops end the task with a message that says which loop it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.context.placeholders import LEDGER_MARK, SUMMARY_MARK
from core.i18n import _
from core.provider.assembler import TurnResult
from core.session.items import FunctionCall, FunctionCallOutput

UNREADABLE_IN_A_ROW = 3  # unparsable answers in a row before the task stops
REPLAYS_ALLOWED = 1  # placeholder texts echoed back before the task stops (the first gets a warning)
IDLE_STEPS = 10  # steps in a row that change no file and show nothing new

# The agent's own stand-ins for content (core/context): never output for the model to reproduce.
_PLACEHOLDER = re.compile(
    r"same output as (?:out-\d+|the previous identical call)"
    r"|\[(?:cleared|superseded) to save context:"
    rf"|{re.escape(LEDGER_MARK[:40])}|{re.escape(SUMMARY_MARK[:40])}"
)


@dataclass
class Guard:
    """The counters of one task (a user message and the steps it takes)."""

    unreadable: int = 0
    replays: int = 0
    idle: int = 0
    seen: set[str] = field(default_factory=set)

    def correction(self, result: TurnResult, tools: list[str]) -> str | None:
        """The message for the next request after an unreadable answer; None once that has happened
        UNREADABLE_IN_A_ROW times (the caller stops) or when the failure is of another kind."""
        if result.error is None or result.error.kind != "model_output":
            return None
        self.unreadable += 1
        if self.unreadable >= UNREADABLE_IN_A_ROW:
            return None
        began = result.text.strip()
        shown = f" It began: {began[:80]!r}." if began else ""
        return (f"Your last reply could not be read as a tool call, so nothing was run ({result.error.message})."
                f"{shown} To call a tool, reply with the call alone: no Markdown code fence, no text around it, "
                f"a tool name from this list exactly: {', '.join(tools)}, and JSON arguments that match its "
                "parameters. To answer without a tool, reply in plain text.")

    def answered(self) -> None:
        """A readable answer came: the count of unreadable ones in a row starts again."""
        self.unreadable = 0

    def unreadable_stop(self, result: TurnResult) -> str:
        reason = result.error.message if result.error is not None else _("no reason given")
        return _("Stopped: the model's reply could not be read as a tool call {count} times in a row, even "
                 "after being told how a call must look (last: {reason}). This model may be too weak for tool "
                 "calls; try a stronger one.").format(count=self.unreadable, reason=reason)

    def replayed(self, call: FunctionCall) -> str | None:
        """A warning for the call's result when its arguments replay a placeholder, or None."""
        if not _PLACEHOLDER.search(call.arguments):
            return None
        self.replays += 1
        return ("[note: the call repeats a placeholder the agent wrote in place of earlier output (such as "
                "'same output as …'); it is not content to reproduce. Read the file or run the command instead.]")

    def after_step(self, outputs: list[FunctionCallOutput]) -> str:
        """Why the task must stop after this step, or "" to go on. Progress is a result not seen
        before in this task: a file changed by a tool says so in a result of its own."""
        if self.replays > REPLAYS_ALLOWED:
            return _("Stopped: the model replayed the agent's own placeholder texts ('same output as …') "
                     "{count} times instead of working on the task.").format(count=self.replays)
        marks = {o.outcome.fingerprint for o in outputs}
        new = bool(marks - self.seen)
        self.seen |= marks
        self.idle = 0 if new else self.idle + 1
        if self.idle >= IDLE_STEPS:
            return _("Stopped: {count} steps in a row changed no file and showed nothing new; the model is "
                     "going round in circles. Give it a hint or change the task.").format(count=self.idle)
        return ""
