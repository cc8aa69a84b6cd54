"""The emit contract: the one seam between the UI-free core and every front end.

The core never prints. Everything a user should see is handed to one callback,
`emit(event, data)`, and each front end (plain, one-shot JSON, the TUI) renders it its own way.
Payloads are plain JSON-serialisable dicts so that `--one --json` can write them as they are.

Events and their payloads:

    reasoning       {"delta": str, "summary": bool}      chain-of-thought text as it streams
    reasoning_done  {"text": str}                        one reasoning item is complete
    text            {"delta": str}                       answer text as it streams
    text_done       {"text": str}                        one message item is complete
    tool_start      {"call_id", "name", "arguments"}     a tool is about to run (arguments: dict or raw str)
    tool            {"call_id", "name", "arguments", "result", "status", "duration"}
                                                         it finished; status is "ok", "error" or "refused"
    tool_output     {"call_id", "text"}                  live output of a running shell command (progress only)
    usage           {"input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens",
                     "context_tokens", "budget_tokens", "cost_usd", "session_cost_usd"}
    notice          {"message": str, "kind": str}        kind: "retry", "info", "warning", "context"
    error           {"message": str, "kind": str}        the turn cannot go on (kind names the cause)
    aborted         {"reason": str}                      the user interrupted the turn
    done            {"status": str, "text": str, "steps": int}
                                                         the task ended; status is "ok", "error",
                                                         "step_limit" or "aborted"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Emit = Callable[[str, dict[str, Any]], None]

REASONING = "reasoning"
REASONING_DONE = "reasoning_done"
TEXT = "text"
TEXT_DONE = "text_done"
TOOL_START = "tool_start"
TOOL = "tool"
TOOL_OUTPUT = "tool_output"
USAGE = "usage"
NOTICE = "notice"
ERROR = "error"
ABORTED = "aborted"
DONE = "done"


def discard(event: str, data: dict[str, Any]) -> None:
    """An emitter that shows nothing (for compaction requests and tests)."""
