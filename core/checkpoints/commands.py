"""`/diff` and `/undo` for the interactive front ends; they return the text to show.

`/undo` lists the files and asks once through the session's approver (the same question a risky
command gets); a file changed outside the agent since it left it needs a second, explicit yes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.cancel import Cancel
from core.sanitize import shown
from core.secrets import Redactor


def diff_text(agent: Any, arg: str) -> str:
    """`/diff` (the whole session) or `/diff last` (the last turn that changed files)."""
    checkpoints = agent.checkpoints
    if checkpoints is None:
        return "No checkpoints in this session."
    last = arg.strip().lower() in ("last", "turn", "-1")
    text = _shown(agent, checkpoints.diff(last_turn_only=last))  # file contents may hold keys and escapes
    return text or "The agent has changed no files in this session" + (" in its last turn." if last else ".")


def undo_text(agent: Any, arg: str, cancel: Cancel) -> str:
    """`/undo` (the last turn that changed files) or `/undo N` (the last N such turns). It asks before
    it changes anything, as a tool would (an approval question; the session's policy applies)."""
    def ask(what: str, why: str) -> str | None:
        return agent.approvals.ask(what, why, asker="/undo", cwd=str(agent.workspace.root), cancel=cancel)

    return _shown(agent, _undo(agent, arg, ask))  # file names may hold control characters


def _shown(agent: Any, text: str) -> str:
    """What may be printed: the API key and anything shaped like a secret redacted, controls defused."""
    return shown(text, Redactor(agent.settings.api_key))


def _undo(agent: Any, arg: str, ask: Callable[[str, str], str | None]) -> str:
    checkpoints = agent.checkpoints
    if checkpoints is None:
        return "No checkpoints in this session."
    try:
        count = int(arg) if arg.strip() else 1
    except ValueError:
        return f"/undo takes a number of turns, got {arg!r}."
    if count < 1:
        return "/undo takes a number of turns of at least 1."
    plan = checkpoints.plan_undo(count)
    if not plan.turns:
        elsewhere = "".join(f"; earlier turns changed files in {w}: resume the session there to undo them"
                            for w in sorted(checkpoints.elsewhere))
        return f"Nothing to undo: the agent has not changed any file (or it was all undone already){elsewhere}."
    named = "; ".join(f"“{p[:60]}”" for p in plan.prompts if p) or f"turn(s) {plan.turns}"
    if not plan.restores:  # the turns are marked undone all the same: the next /undo goes further back
        checkpoints.apply_undo(plan)
        if plan.cannot:
            return f"Nothing can be restored for {named}:\n{plan.describe()}"
        return f"Nothing to restore for {named}: the files are already as they were."
    question = f"undo {named}, changing these files:\n{plan.describe()}"
    refusal = ask(question, "files are put back as they were before; what the agent wrote is lost")
    if refusal is not None:
        return f"Undo cancelled ({refusal}); nothing was changed."
    overwrite = False
    if plan.conflicts:
        refusal = ask(f"overwrite {', '.join(plan.conflicts)}",
                                "changed outside the agent since it left them; those changes would be lost")
        if refusal is not None:
            return (f"Nothing was changed: {', '.join(plan.conflicts)} changed outside the agent since it left them "
                    f"and overwriting was not confirmed ({refusal}).")
        overwrite = True
    return checkpoints.apply_undo(plan, overwrite=overwrite)
