"""The emit contract: the one seam between the UI-free core and every front end.

The core never prints. Everything a user should see is handed to one callback,
`emit(event, data)`, and each front end (plain, one-shot JSON, the TUI) renders it its own way.
Payloads are plain JSON-serialisable dicts so that `--one --json` can write them as they are.

Threads. Every event is emitted on the thread that runs `Agent.run` / a slash command (the
"agent thread"), except `tool_output`, which comes from the reader thread of a running command
while the agent thread waits for it. A front end with its own UI loop must therefore only queue
events in `emit` and draw them on its own thread; it must never block in `emit`, except to answer
an `approval` synchronously (the plain REPL does that). Cancelling (`Cancel.cancel()`) is safe from
any thread.

Statuses use one vocabulary everywhere: "ok", "error", "refused", "incomplete", "aborted",
"step_limit" (see `STATUSES`).

Events and their payloads:

    session         {"id", "model", "workspace", "window", "budget_tokens", "max_steps", "resumed": bool,
                     "session_cost_usd": float | None, "history": [entry, ...]}
                    a session was opened or switched to (/resume, /clear); `history` is what to draw,
                    oldest first, each entry one of
                      {"kind": "user" | "assistant" | "reasoning" | "summary", "text"}
                      {"kind": "tool", "call_id", "name", "arguments", "result", "status"}
    turn_started    {"step": n, "max_steps": m, "estimated_tokens", "budget_tokens", "window", "model"}
                    one model request is about to be made (step n of the task's at most m)
    request_sent    {"attempt": n, "max_attempts": m}   the HTTP request went out
    first_byte      {"latency": s}                      the first bytes of the response arrived
    reasoning       {"delta": str, "summary": bool, "item_id": str}
                                                         chain-of-thought text as it streams
    reasoning_done  {"text": str, "item_id": str}        one reasoning item is complete
    text            {"delta": str, "item_id": str}       answer text as it streams
    text_done       {"text": str, "item_id": str}        one message item is complete
    tool_start      {"call_id", "name", "arguments"}     a tool is about to run (arguments: dict or raw str);
                    an MCP server's tool adds "server": the server's name as configured
    tool_output     {"call_id", "text"}                  live output of a running shell command (progress
                                                         only; from the command's reader thread)
    approval        {"id", "call_id", "tool", "action", "command" | None, "path" | None, "cwd", "reason",
                     "decisions": [{"id", "key", "alias", "label"}, ...]}
                    a tool waits for a person; answer with `Agent.approvals.answer(id, decision, reason)`
                    from any thread (decision ids: "once", "session", "deny", "deny_reason")
    approval_done   {"id", "call_id", "decision", "reason", "by": "user" | "front_end" | "session" | "interrupt"}
                    how it was decided: answered through `answer()`, by the front end's synchronous
                    `Approve` (a prompt, --yes, or "nobody can approve" without a terminal), by an
                    "always, for this session" given earlier (then no `approval` precedes it), or
                    refused because the turn was interrupted
    tool            {"call_id", "name", "arguments", "result", "model_result", "status", "duration"}
                    it finished; `result` is what the tool produced, `model_result` what the model
                    received (capped to the context budget, redacted); status "ok", "error" or "refused";
                    an MCP server's tool adds "server"
    compaction_started {"items": n}                     older turns are being summarised
    compaction_done {"status": "ok" | "error" | "aborted", "input_tokens", "cached_tokens",
                     "output_tokens", "reasoning_tokens", "message"}
    usage           {"input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens",
                     "context_tokens", "budget_tokens", "cost_usd", "session_cost_usd"}
    notice          {"message": str, "kind": str}        kind: "retry", "info", "warning", "context";
                    a retry also carries "delay": s, "attempt": n (the next one), "max_attempts": m
                    and "error_kind"
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

SESSION = "session"
TURN_STARTED = "turn_started"
REQUEST_SENT = "request_sent"
FIRST_BYTE = "first_byte"
REASONING = "reasoning"
REASONING_DONE = "reasoning_done"
TEXT = "text"
TEXT_DONE = "text_done"
TOOL_START = "tool_start"
TOOL = "tool"
TOOL_OUTPUT = "tool_output"
APPROVAL = "approval"
APPROVAL_DONE = "approval_done"
COMPACTION_STARTED = "compaction_started"
COMPACTION_DONE = "compaction_done"
USAGE = "usage"
NOTICE = "notice"
ERROR = "error"
ABORTED = "aborted"
DONE = "done"

OK, ERROR_STATUS, REFUSED, INCOMPLETE, ABORTED_STATUS, STEP_LIMIT = (
    "ok", "error", "refused", "incomplete", "aborted", "step_limit")
STATUSES = (OK, ERROR_STATUS, REFUSED, INCOMPLETE, ABORTED_STATUS, STEP_LIMIT)


def discard(event: str, data: dict[str, Any]) -> None:
    """An emitter that shows nothing (for compaction requests and tests)."""
