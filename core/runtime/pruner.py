"""The pruner outside any session (`agent.py prune`): a command's output cut down the way the agent
cuts a tool result, with the budget the agent gives the pruner by default."""

from __future__ import annotations

from core.context.cap import prune_budget_chars
from core.context.settings import ContextSettings
from core.prune.pipeline import prune

# The agent's per-result cap with its default settings: a view the agent would show whole is shown whole.
DEFAULT_BUDGET = prune_budget_chars(ContextSettings().result_cap_tokens)


def pruned_output(data: bytes, command: str, exit_code: int | None, budget_chars: int = DEFAULT_BUDGET) -> str:
    """What the pruner keeps of `data`, printed by `command` that exited with `exit_code`."""
    return prune(data, command=command, exit_code=exit_code, budget_chars=budget_chars).text
