"""The agent loop: user message → model turn → tools → model turn … → answer.

Every item is journaled the moment it is complete. A turn ends in one of four ways, each with one
`done` event: "ok" (the model answered without calling tools), "error", "step_limit" or "aborted".
Whatever happens, the history stays valid for the next request: every function call has an output.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core import events as ev
from core.assembler import TurnResult, Usage
from core.cancel import Cancel
from core.client import ResponsesClient
from core.config import Settings
from core.errors import ApiError
from core.events import Emit
from core.items import AssistantMessage, FunctionCall, FunctionCallOutput, Item, UserMessage
from core.journal import Journal
from core.prompt import build_instructions
from core.request import build_body
from core.tools import ToolContext, run_tool, tool_schemas
from core.tools.base import Approve
from core.tools.workspace import Workspace


@dataclass
class Outcome:
    status: str  # "ok", "error", "step_limit", "aborted"
    text: str = ""
    steps: int = 0
    error: ApiError | None = None


class Agent:
    """Holds one session's history and runs tasks against it."""

    def __init__(self, settings: Settings, emit: Emit, workspace: Path, approve: Approve,
                 client: ResponsesClient | None = None, journal: Journal | None = None,
                 history: list[Item] | None = None, archive: object | None = None) -> None:
        self.settings = settings
        self.emit = emit
        self.workspace = Workspace(workspace)
        self.approve = approve
        self.client = client or ResponsesClient(settings)
        self.journal = journal
        self.archive = archive
        self.history: list[Item] = list(history or [])
        self.instructions = build_instructions(self.workspace.root)
        self.tools = tool_schemas()
        self.session_usage = Usage()
        self._seen_call_ids = {i.call_id for i in self.history if isinstance(i, FunctionCall)}

    # -- the loop ---------------------------------------------------------------------------
    def run(self, text: str, cancel: Cancel | None = None) -> Outcome:
        cancel = cancel or Cancel()
        self._record(UserMessage(text))
        outcome = self._steps(cancel)
        self.emit(ev.DONE, {"status": outcome.status, "text": outcome.text, "steps": outcome.steps})
        return outcome

    def _steps(self, cancel: Cancel) -> Outcome:
        for step in range(1, self.settings.max_steps + 1):
            result = self.client.stream(self.request_body(), self.emit, cancel)
            self._record_turn(result)
            if result.status == "aborted":
                self.emit(ev.ABORTED, {"reason": cancel.reason or "interrupted"})
                return Outcome("aborted", result.text, step, result.error)
            if result.status == "failed":
                error = result.error or ApiError("the response failed", kind="server")
                self.emit(ev.ERROR, {"message": error.message, "kind": error.kind})
                return Outcome("error", result.text, step, error)
            calls = result.calls
            if result.status == "incomplete":
                message = _incomplete_message(result.incomplete_reason)
                if not calls:
                    self.emit(ev.ERROR, {"message": message, "kind": "incomplete"})
                    return Outcome("error", result.text, step, ApiError(message, kind="incomplete"))
                self.emit(ev.NOTICE, {"kind": "warning", "message": message})
            if not calls:
                return Outcome("ok", result.text, step)
            if not self._run_calls(calls, cancel):
                self.emit(ev.ABORTED, {"reason": cancel.reason or "interrupted"})
                return Outcome("aborted", result.text, step)
        message = (f"Stopped after {self.settings.max_steps} steps (AGENT_MAX_STEPS) before the task was finished; "
                   "send another message to continue.")
        self.emit(ev.ERROR, {"message": message, "kind": "step_limit"})
        return Outcome("step_limit", "", self.settings.max_steps, ApiError(message, kind="step_limit"))

    def _run_calls(self, calls: list[FunctionCall], cancel: Cancel) -> bool:
        """Run the turn's calls in order; False if interrupted (the rest get a 'not run' output)."""
        ctx = ToolContext(workspace=self.workspace, settings=self.settings, emit=self.emit,
                          approve=self.approve, cancel=cancel, archive=self.archive)
        for call in calls:
            if cancel.cancelled:
                self._record(FunctionCallOutput(call.call_id, "[not run: the user interrupted the turn]",
                                                meta={"tool": call.name, "status": "interrupted"}))
                continue
            self._record(run_tool(call, ctx))
        return not cancel.cancelled

    # -- history ----------------------------------------------------------------------------
    def request_body(self) -> dict:
        return build_body(self.settings, self.instructions, self.history, self.tools)

    def _record(self, item: Item) -> None:
        self.history.append(item)
        if self.journal is not None:
            self.journal.append(item)

    def _record_turn(self, result: TurnResult) -> None:
        """Journal what the model produced. Calls are kept only if they will get outputs."""
        runnable = result.status in ("completed", "incomplete")
        for item in result.items:
            if isinstance(item, FunctionCall):
                if not runnable:
                    continue
                item.call_id = self._unique_call_id(item.call_id)
            if isinstance(item, AssistantMessage) and not item.text:
                continue
            self._record(item)
        if result.usage is not None:
            self._account(result.usage)

    def _unique_call_id(self, call_id: str) -> str:
        """Some servers reuse call ids across turns; pairing needs them unique in the history."""
        candidate, n = call_id or "call", 1
        while candidate in self._seen_call_ids:
            n += 1
            candidate = f"{call_id or 'call'}_{n}"
        self._seen_call_ids.add(candidate)
        return candidate

    def _account(self, usage: Usage) -> None:
        total = self.session_usage
        total.input_tokens += usage.input_tokens
        total.cached_tokens += usage.cached_tokens
        total.output_tokens += usage.output_tokens
        total.reasoning_tokens += usage.reasoning_tokens
        if self.journal is not None:
            self.journal.write({"kind": "usage", **usage.__dict__})
        self.emit(ev.USAGE, {**usage.__dict__, "context_window": self.settings.context_window})


def _incomplete_message(reason: str) -> str:
    if reason == "max_output_tokens":
        return ("The model's answer was cut off at the output limit (DEEPSEEK_MAX_OUTPUT_TOKENS); "
                "raise it or ask for a shorter answer.")
    if reason == "content_filter":
        return "The provider's content filter stopped the answer."
    return f"The answer is incomplete ({reason or 'no reason given'})."
