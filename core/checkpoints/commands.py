"""`ShowDiff` and `Undo` for the runtime; they return data, and the front ends word it.

`Undo` lists the files and asks once through the session's approver (the same question a risky
command gets); a file changed outside the agent since it left it needs a second, explicit yes.
"""

from __future__ import annotations

from typing import Any

from core import protocol as ev
from core.cancel import Cancel
from core.i18n import _


def diff_of(agent: Any, last: bool) -> str | None:
    """The diff of the whole session (or of the last turn that changed files); None without checkpoints."""
    checkpoints = agent.checkpoints
    return None if checkpoints is None else checkpoints.diff(last_turn_only=last)


def undo(agent: Any, turns: int, cancel: Cancel) -> ev.UndoFinished:
    """Undo the last `turns` turns that changed files. It asks before it changes anything, as a tool
    would (an approval question; the session's policy applies). The answer's `op_id` is the caller's."""
    checkpoints = agent.checkpoints
    if checkpoints is None:
        return ev.UndoFinished("", "no_checkpoints")

    def ask(what: str, why: str) -> str | None:
        return agent.approvals.ask(what, why, asker="/undo", cwd=str(agent.workspace.root), cancel=cancel)

    plan = checkpoints.plan_undo(turns)
    if not plan.turns:
        return ev.UndoFinished("", "nothing", elsewhere=sorted(checkpoints.elsewhere))
    named = [p[:60] for p in plan.prompts if p] or [_("turn {number}").format(number=t) for t in plan.turns]
    if not plan.restores:  # the turns are marked undone all the same: the next undo goes further back
        checkpoints.apply_undo(plan)
        if plan.cannot:
            return ev.UndoFinished("", "cannot_restore", named, not_restored=_rows(plan.cannot))
        return ev.UndoFinished("", "nothing_to_restore", named)
    question = _("undo {turns}, changing these files:").format(turns=_("; ").join(f"“{n}”" for n in named))
    refusal = ask(f"{question}\n{plan.describe()}",
                  _("files are put back as they were before; what the agent wrote is lost"))
    if refusal is not None:
        return ev.UndoFinished("", "cancelled", named, reason=refusal)
    if plan.conflicts:
        refusal = ask(_("overwrite {paths}").format(paths=", ".join(plan.conflicts)),
                      _("changed outside the agent since it left them; those changes would be lost"))
        if refusal is not None:
            return ev.UndoFinished("", "conflict_refused", named, reason=refusal, conflicts=list(plan.conflicts))
    restored, cannot = checkpoints.apply_undo(plan, overwrite=bool(plan.conflicts))
    return ev.UndoFinished("", "restored", named, restored=restored, not_restored=_rows(cannot))


def _rows(cannot: list[tuple[str, str]]) -> list[ev.PathWhy]:
    return [ev.PathWhy(path, why) for path, why in cannot]
