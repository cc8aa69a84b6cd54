"""The stable strings shaping puts in place of content, each naming how to get the content back.

Stable means a pure function of the item's own facts (tool, path, range, archive id): the same
item always gets the same placeholder, so a rewritten prefix stays byte-identical between turns
and the provider's prompt cache keeps hitting.
"""

from __future__ import annotations

import json
from typing import Any

from ..session.items import ToolOutcome
from .calls import MUTATING_TOOLS, SHELL_TOOL, is_read_only_command

SUMMARY_MARK = (
    "[Summary of earlier turns, written by the agent to save context; the session journal keeps the "
    "full transcript]"
)
LEDGER_MARK = (
    "[Task ledger, kept by the agent because older turns were left out of this request to save "
    "context; this is not a new message from the user]"
)
_SHORT = 120


def short(text: str, limit: int = _SHORT) -> str:
    """`text` on one line, cut to `limit` characters (names in placeholders stay short and stable)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _read_range(read: ToolOutcome) -> str:
    """' lines 1-200', ' from line 40' or '' (offset: 1-based first line; limit: line count;
    total_lines, when the tool reports it, keeps the range inside the file)."""
    offset, limit, total = read.offset, read.limit, read.total_lines
    if isinstance(offset, int) and isinstance(limit, int) and limit > 0:
        last = offset + limit - 1
        return f" lines {offset}-{min(last, total) if isinstance(total, int) and total >= offset else last}"
    if isinstance(offset, int) and offset > 1:
        return f" from line {offset}"
    return ""


def _describe(tool: str, outcome: ToolOutcome, args: dict[str, Any]) -> str:
    """A short name for what a call did: 'read_file src/app.py lines 1-200', 'run_shell `pytest`'."""
    if tool == "read_file":
        return f"read_file {outcome.path or args.get('path', '?')}{_read_range(outcome)}"
    if tool == SHELL_TOOL:
        return f"run_shell `{short(str(outcome.command or args.get('command', '')))}`"
    return f"{tool} {short(json.dumps(args, ensure_ascii=False, sort_keys=True))}"


def cleared(tool: str, outcome: ToolOutcome, args: dict[str, Any]) -> str | None:
    """The placeholder for a cleared result, or None when the result cannot be got back safely."""
    if tool in MUTATING_TOOLS:
        return None
    if outcome.archive:
        how = f"full output: read_output id={outcome.archive}"
    elif tool == SHELL_TOOL:
        if not is_read_only_command(str(outcome.command or args.get("command", ""))):
            return None  # re-running it could change the workspace
        how = "run it again to see it"
    elif tool == "read_file":
        how = "call read_file again to see it"
    else:
        how = f"call {tool} again with the same arguments to see it"
    return f"[cleared to save context: {_describe(tool, outcome, args)} — {how}]"


def superseded(read: ToolOutcome) -> str:
    """The placeholder for a read whose identical, unchanged content was read again later."""
    return (
        f"[superseded to save context: read_file {read.path or '?'}{_read_range(read)} was read again "
        "later and the file had not changed — see the later result]"
    )
