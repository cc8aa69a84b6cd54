"""One tool call's way from the model's stream to the history: gate → run → finish → record.

- **gate**: the `ToolContext` the loop builds carries the approval callbacks (`Approvals.gate`); a
  tool asks through them before it does anything a person must allow.
- **run**: `core.tools.run_tool` runs the handler (inside a checkpoint when the tool declares
  `checkpointed`) and returns a `ToolRun`: the tool's whole text, the typed facts beside it, and, for
  a tool whose text holds what a command printed (run_shell), where that is and what the pruner goes
  by (`Printed`: the command, its exit code, the archive of its full output).
- **finish** (this module) shapes the text the model will see, always in this order:
  1. prune: what a command printed becomes what matters (core.prune), against the budget the cap
     uses, so the pruner cuts by the rules of the command's family before any blunt cut; the tool's
     notes around it are kept whole, and the figures go into `ToolOutcome.pruned_from/pruned_to`;
  2. repeat check: the same output as the last run of the same call becomes one line pointing at
     it; judged on what the pruned tool text says, before anything is added to it;
  3. replay note: a call that replays one of the agent's own placeholders gets a warning appended;
  4. clean: bytes the OS smuggled in as lone surrogates become U+FFFD, so the cap measures (and the
     request carries) valid text;
  5. cap: the context's per-result cap, with a pointer to the rest (read_output, read_file offset);
  6. redact: last, so nothing added by an earlier step can carry the key.
- **record**: the loop appends the `FunctionCallOutput` to the history and the journal, and emits
  the `ToolFinished` built here, which carries the pruned text (what the user sees), the model's
  text and the pruning figures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from core import protocol as ev
from core.agent.guard import Guard
from core.console import clean_text
from core.context import cap_result, judge_repeat
from core.context.cap import prune_budget_chars
from core.prune import prune
from core.session.items import FunctionCall, FunctionCallOutput, Item, ToolOutcome
from core.tools import ToolRun


@dataclass(frozen=True)
class Finished:
    """A finished call: the item for the history, the event for the front ends, and why the task must
    stop ("" to go on: the same failing output again and again)."""

    output: FunctionCallOutput
    event: ev.ToolFinished
    stuck: str


def finish(call: FunctionCall, run: ToolRun, history: list[Item], guard: Guard, cap_tokens: int,
           redact: Callable[[str], str]) -> Finished:
    """Shape `run` for the model in the order the module docstring gives; `history` holds `call` and
    not yet its output."""
    shown, outcome = pruned(run, prune_budget_chars(cap_tokens))
    output = FunctionCallOutput(run.call_id, shown, outcome)
    repeat = judge_repeat(history, call, output)
    text = repeat.text or shown
    if (warning := guard.replayed(call)) is not None:
        text += "\n" + warning
    output.output = redact(cap_result(clean_text(text), run.name, output.outcome, cap_tokens))
    event = ev.ToolFinished(call_id=run.call_id, name=run.name, arguments=run.arguments, result=shown,
                            status=outcome.status, duration=run.duration, model_result=output.output,
                            server=run.server, pruned_from=outcome.pruned_from, pruned_to=outcome.pruned_to)
    return Finished(output, event, repeat.message)


def pruned(run: ToolRun, budget_chars: int) -> tuple[str, ToolOutcome]:
    """The tool's text with what a command printed pruned to `budget_chars`, and its outcome with the
    figures (a copy: the run keeps what the tool said). A tool that printed nothing is left as it is."""
    outcome = dataclasses.replace(run.outcome)
    if run.printed is None:
        return run.output, outcome
    where = run.printed
    result = prune(run.output[where.start:where.end], command=where.command, exit_code=where.exit_code,
                   archive_id=where.archive or None, budget_chars=budget_chars)
    outcome.pruned_from, outcome.pruned_to = result.original_chars, result.pruned_chars
    return run.output[:where.start] + result.text + run.output[where.end:], outcome
