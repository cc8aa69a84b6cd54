"""One tool call's way from the model's stream to the history: gate → run → finish → record.

- **gate**: the `ToolContext` the loop builds carries the approval callbacks (`Approvals.gate`); a
  tool asks through them before it does anything a person must allow.
- **run**: `core.tools.run_tool` runs the handler (inside a checkpoint when the tool declares
  `checkpointed`) and returns a `ToolRun`. A tool that prunes its own output (run_shell, the only
  one that knows the command, its exit code and where the full output is archived) does it here,
  against the same budget the cap uses, and says how much in `ToolOutcome.pruned_from/pruned_to`.
- **finish** (this module) shapes the text the model will see, always in this order:
  1. repeat check: the same output as the last run of the same call becomes one line pointing at
     it; judged on what the tool produced, before anything is added to it;
  2. replay note: a call that replays one of the agent's own placeholders gets a warning appended;
  3. clean: bytes the OS smuggled in as lone surrogates become U+FFFD, so the cap measures (and the
     request carries) valid text;
  4. cap: the context's per-result cap, with a pointer to the rest (read_output, read_file offset);
  5. redact: last, so nothing added by an earlier step can carry the key.
- **record**: the loop appends the `FunctionCallOutput` to the history and the journal, and emits
  the `ToolFinished` built here, which carries both texts and the pruning figures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from core import protocol as ev
from core.agent.guard import Guard
from core.console import clean_text
from core.context import cap_result, judge_repeat
from core.session.items import FunctionCall, FunctionCallOutput, Item
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
    output = FunctionCallOutput(run.call_id, run.output, dataclasses.replace(run.outcome))
    repeat = judge_repeat(history, call, output)
    text = repeat.text or run.output
    if (warning := guard.replayed(call)) is not None:
        text += "\n" + warning
    output.output = redact(cap_result(clean_text(text), run.name, output.outcome, cap_tokens))
    event = ev.ToolFinished(call_id=run.call_id, name=run.name, arguments=run.arguments, result=run.output,
                            status=run.outcome.status, duration=run.duration, model_result=output.output,
                            server=run.server, pruned_from=run.outcome.pruned_from,
                            pruned_to=run.outcome.pruned_to)
    return Finished(output, event, repeat.message)
