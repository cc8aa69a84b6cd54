"""The agent loop: user message → model turn → tools → model turn … → answer.

Every item is journaled the moment it is complete. A turn ends in one of four ways, each with one
`done` event: "ok" (the model answered without calling tools), "error", "step_limit" or "aborted".
Whatever happens, the history stays valid for the next request: every function call has an output.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from core import protocol as ev
from core.agent.approvals import Approvals, Keeper
from core.agent.guard import UNREADABLE_IN_A_ROW, Guard
from core.agent.overview import overview_budget
from core.agent.prompt import session_instructions
from core.agent.results import finish
from core.agent.rules import AllowRules
from core.agent.text_calls import recover_text_call
from core.cancel import Cancel
from core.checkpoints import Checkpoints
from core.config import Settings
from core.console import clean_text
from core.context import (
    DEFAULT_PRICES,
    SUMMARY_PROMPT,
    CompactionCancelled,
    ContextManager,
    Shaped,
    UsageTotals,
    parse_prices,
    text_tokens,
)
from core.context.cap import prune_budget_chars
from core.context.settings import from_settings
from core.i18n import _
from core.modes import ASK
from core.network.session import SessionNetwork, approval_ask
from core.protocol import Emit
from core.provider.assembler import TurnResult, Usage
from core.provider.client import ResponsesClient
from core.provider.errors import ApiError
from core.provider.request import build_body
from core.prune.archive import OutputArchive
from core.sandbox import probe
from core.secrets import Redactor
from core.session.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    Summary,
    ToolOutcome,
    UserMessage,
    to_record,
)
from core.session.journal import INTERRUPTED_OUTPUT, Journal, JournalError, sessions_root
from core.tools import ToolContext, run_tool, tool_schemas
from core.tools.shell import end_turn_orphans
from core.tools.workspace import Workspace

FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file", "multi_edit"})

if TYPE_CHECKING:
    from core.mcp.tools import McpTools


@dataclass
class Outcome:
    status: str  # "ok", "error", "step_limit", "aborted"
    text: str = ""
    steps: int = 0
    error: ApiError | None = None


class Agent:
    """Holds one session's history and runs tasks against it."""

    def __init__(self, settings: Settings, emit: Emit, workspace: Path, mode: str = ASK, *, interactive: bool = True,
                 allow: tuple[str, ...] = (),
                 client: ResponsesClient | None = None, journal: Journal | None = None,
                 history: list[Item] | None = None, archive: OutputArchive | None = None,
                 mcp: McpTools | None = None) -> None:
        self.settings = settings
        self.emit = emit
        self.workspace = Workspace(workspace)
        data_dir = sessions_root(settings.sessions_dir or None).parent if journal else None
        rules = AllowRules(data_dir, self.workspace.root, allow)
        self.approvals = Approvals(emit, mode, interactive=interactive, rules=rules,
                                   sandbox=probe(settings.sandbox, settings.network))
        # Confined commands reach the network through the session's proxy (core/network).
        self.network = self._open_network(rules, interactive) if settings.network == "proxied" else None
        self.client = client or ResponsesClient(settings)
        self.journal = journal
        self.archive = archive
        self.history: list[Item] = list(history or [])
        opened = session_instructions(self.workspace.root, settings if journal else None,
                                      overview_budget(settings.context_window))
        self._redact = Redactor(settings.api_key)
        self.instructions = self._redact(clean_text(opened.text))  # they carry workspace files
        self.agents_notices = opened.notices  # what the user hears of AGENTS.md before the first turn
        self._shown_files = opened.shown  # files the instructions carry: the model has seen them
        self.mcp = mcp  # the session's MCP servers' tools, offered after the built-in ones
        self.tools = tool_schemas()
        self.context = ContextManager(from_settings(settings), summarize=self._summarize,
                                      tools_json=json.dumps(self.tools, ensure_ascii=False))
        self.prices = {**DEFAULT_PRICES, **parse_prices(settings.prices)}
        self.usage = UsageTotals(self.prices.get(settings.model))
        self._seen_call_ids = {i.call_id for i in self.history if isinstance(i, FunctionCall)}
        self._cancel = Cancel()
        self._shaped: Shaped | None = None
        self._stuck = ""  # why the task must stop: the same failing output again and again
        self._journal_failed = False
        # Every change to the workspace is checkpointed (core/checkpoints) when there is a journal.
        self.checkpoints = (Checkpoints(journal.folder, self.workspace.root, self._journal, emit,
                                        [settings.api_key or ""])
                            if journal is not None else None)

    def _open_network(self, rules: AllowRules, interactive: bool) -> SessionNetwork:
        """The session's proxy: its questions go through the approval gate (with nobody to ask, a
        host not allowed is refused), its "always" is kept beside the workspace's allow rules."""
        def question(what: str, why: str, rule: str, keep: Callable[[], str | None]) -> str | None:
            return self.approvals.ask(what, why, asker="network", cwd=str(self.workspace.root), cancel=self._cancel,
                                      kind="network", keep=Keeper(rule, keep))

        return SessionNetwork(self.settings.network_allow, rules.hosts,
                              approval_ask(question, lambda host: rules.add(host, "hosts")) if interactive else None)

    # -- the loop ---------------------------------------------------------------------------
    def run(self, text: str, cancel: Cancel | None = None) -> Outcome:
        cancel = self._cancel = cancel or Cancel()
        if self.checkpoints is not None:  # a new turn; tell the model what /undo reverted
            for note in self.checkpoints.begin_turn(text):
                self._record(UserMessage(note))
        self._record(UserMessage(text))
        try:
            outcome = self._steps(cancel)
        except KeyboardInterrupt:  # a second Ctrl-C while the first was still stopping the turn
            cancel.cancel(_("interrupted by the user (Ctrl-C)"))
            self._answer_open_calls()
            self.emit(ev.Aborted(reason=cancel.reason))
            outcome = Outcome("aborted")
        end_turn_orphans()  # what a command left running outside its own jobs ends with the turn
        self.emit(ev.Done(status=outcome.status, text=outcome.text, steps=outcome.steps))
        return outcome

    def _answer_open_calls(self) -> None:
        """Give the calls of the interrupted turn that never got an output a 'not completed' one."""
        answered = {i.call_id for i in self.history if isinstance(i, FunctionCallOutput)}
        open_calls = [i for i in self.history if isinstance(i, FunctionCall) and i.call_id not in answered]
        for call in open_calls:
            self._record(FunctionCallOutput(call.call_id, INTERRUPTED_OUTPUT,
                                            ToolOutcome(tool=call.name, status="interrupted")))

    def _steps(self, cancel: Cancel) -> Outcome:
        guard = Guard()
        correction: str | None = None
        for step in range(1, self.settings.max_steps + 1):
            result = self._ask(cancel, step, correction)
            if (recovered := recover_text_call(result, self.tools)) is not None:
                self.emit(ev.Notice(kind="info", message=recovered))
            self._record_turn(result)
            if result.status == "aborted":
                self.emit(ev.Aborted(reason=cancel.reason or "interrupted"))
                return Outcome("aborted", result.text, step, result.error)
            if result.status == "error":
                error = result.error or ApiError(_("the response failed"), kind="server")
                correction = guard.correction(result, [tool["name"] for tool in self.tools])
                if correction is not None:  # an unreadable answer: ask again, telling the model why
                    self.emit(ev.Notice(kind="retry", message=_(
                        "{problem}; asking the model again with a correction ({count} of {most})").format(
                            problem=error.message, count=guard.unreadable, most=UNREADABLE_IN_A_ROW - 1)))
                    continue
                if error.kind == "model_output":
                    error = ApiError(guard.unreadable_stop(result), kind="stuck")
                self.emit(ev.Error(message=error.message, kind=error.kind))
                return Outcome("error", result.text, step, error)
            guard.answered()
            correction = None
            calls = result.calls
            if result.status == "incomplete":
                message = _incomplete_message(result.incomplete_reason)
                if not calls:
                    self.emit(ev.Error(message=message, kind="incomplete"))
                    return Outcome("error", result.text, step, ApiError(message, kind="incomplete"))
                self.emit(ev.Notice(kind="warning", message=message))
            if not calls:
                return Outcome("ok", result.text, step)
            if not self._run_calls(calls, cancel, guard):
                self.emit(ev.Aborted(reason=cancel.reason or "interrupted"))
                return Outcome("aborted", result.text, step)
            if self._stuck:
                message, self._stuck = self._stuck, ""
                self.emit(ev.Error(message=message, kind="stuck"))
                return Outcome("error", result.text, step, ApiError(message, kind="stuck"))
        message = _("Stopped after {count} steps (AGENT_MAX_STEPS) before the task was finished; send "
                    "another message to continue.").format(count=self.settings.max_steps)
        self.emit(ev.Error(message=message, kind="step_limit"))
        return Outcome("step_limit", "", self.settings.max_steps, ApiError(message, kind="step_limit"))

    def _run_calls(self, calls: list[FunctionCall], cancel: Cancel, guard: Guard) -> bool:
        """Run the turn's calls in order, each gate → run → finish → record (core/agent/results.py);
        False if interrupted (the rest get a 'not run' output)."""
        cap = self.context.settings.result_cap_tokens
        outputs: list[FunctionCallOutput] = []
        for call in calls:
            if cancel.cancelled:
                self._record(FunctionCallOutput(call.call_id, "[not run: the user interrupted the turn]",
                                                ToolOutcome(tool=call.name, status="interrupted")))
                continue
            mcp_tools = self.mcp.tools if self.mcp is not None else {}
            kind = "tool" if call.name in mcp_tools else "command"
            ctx = ToolContext(workspace=self.workspace, settings=self.settings, emit=self.emit, cancel=cancel,
                              approve=self.approvals.gate(call, str(self.workspace.root), cancel, kind),
                              approve_unconfined=self.approvals.gate(call, str(self.workspace.root), cancel,
                                                                     kind="unconfined"),
                              archive=self.archive, checkpoints=self.checkpoints,
                              result_chars=prune_budget_chars(cap), mode=self.approvals.mode,
                              allowed=self.approvals.allowed, network=self.network, seen=self._seen_file)
            finished = finish(call, run_tool(call, ctx, mcp_tools), self.history, guard, cap, self._redact)
            self._stuck = finished.stuck or self._stuck
            outputs.append(finished.output)
            self._record(finished.output)
            self.emit(finished.event)
        self._stuck = self._stuck or guard.after_step(outputs)
        return not cancel.cancelled

    def _seen_file(self, rel: str) -> bool:
        """Whether the model was shown `rel` in this session: the instructions carry it (AGENTS.md),
        or a file tool's result names it (a read, a write, an edit, a refused blind write)."""
        return rel in self._shown_files or any(isinstance(item, FunctionCallOutput) and item.outcome.path == rel
                   and item.outcome.tool in FILE_TOOLS for item in self.history)

    # -- requests ---------------------------------------------------------------------------
    def _ask(self, cancel: Cancel, step: int = 1, correction: str | None = None) -> TurnResult:
        """One model turn on the shaped history; a too-long request is reshaped hard and retried once.
        A correction (why the last answer could not be read) goes after the history, this request only."""
        extra = [UserMessage(correction)] if correction else []
        self._offer_mcp_tools(cancel)
        self._shaped = self._shape(force=False)
        self.emit(ev.TurnStarted(step=step, max_steps=self.settings.max_steps,
                                    estimated_tokens=self._shaped.tokens, budget_tokens=self.context.budget,
                                    window=self.settings.context_window, model=self.settings.model))
        result = self.client.stream(self._body([*self._shaped.items, *extra]), self.emit, cancel)
        if not _overflowed(result):
            return result
        self.emit(ev.Notice(kind="context", message=_("the server says the request is too long for the model; shaping "
                                                      "harder and retrying once")))
        self._shaped = self._shape(force=True)
        result = self.client.stream(self._body([*self._shaped.items, *extra]), self.emit, cancel)
        if _overflowed(result) and result.error is not None:
            result.error.message = _(
                "The conversation no longer fits the model's context window, even after shaping it as far as "
                "it goes ({problem}). Nothing was lost: the whole transcript is in the session journal. Try "
                "/compact, or continue in a new session with a short recap.").format(
                    problem=result.error.message)
        return result

    def _offer_mcp_tools(self, cancel: Cancel) -> None:
        """The tool list with the MCP servers' tools as they are now (the first time, once the
        servers have started); unchanged servers keep it byte for byte, so the cache keeps hitting."""
        if self.mcp is None:
            return
        ask = partial(self.approvals.ask, asker="mcp", cwd=str(self.workspace.root), cancel=cancel)
        offered = self.mcp.refresh(self.emit, ask, cancel)
        self.approvals.tool_keepers = {name: partial(self.mcp.remember_always, name) for name in self.mcp.tools}
        tools = tool_schemas() + [tool.schema() for tool in offered]
        if tools != self.tools:
            self.tools = tools
            self.context.set_tools(json.dumps(tools, ensure_ascii=False))

    def _shape(self, force: bool) -> Shaped:
        shaped = self.context.shape(self.history, self.instructions, force=force)
        for action in shaped.actions:
            self.emit(ev.Notice(kind="context", message=action))
        return shaped

    def _body(self, items: list[Item], **overrides: object) -> dict:
        return {**build_body(self.settings, self.instructions, items, self.tools), **overrides}

    def _summarize(self, items: list[Item]) -> str:
        """The compaction summariser: the shaped prefix plus SUMMARY_PROMPT, answered without tools."""
        body = self._body([*items, UserMessage(SUMMARY_PROMPT)], tool_choice="none")
        self.emit(ev.CompactionStarted(items=len(items)))
        result = self.client.stream(body, ev.discard, self._cancel)
        usage = result.usage.__dict__ if result.usage is not None else {}
        if result.status == "aborted" or self._cancel.cancelled:
            self.emit(ev.CompactionDone(status="aborted", **usage, message="interrupted"))
            raise CompactionCancelled(self._cancel.reason or "interrupted")
        if result.status != "ok" or not result.text.strip():
            message = result.error.message if result.error else _("the summary came back {status}").format(
                status=result.status)
            self.emit(ev.CompactionDone(status="error", **usage, message=message))
            raise RuntimeError(message)
        if result.usage is not None:
            self.usage.add(result.usage.input_tokens, result.usage.cached_tokens, result.usage.output_tokens,
                           result.usage.reasoning_tokens)
        self._journal({"kind": "compaction", "text": result.text, "request_items": len(items),
                       "manual": self.context.compacting_now,  # replayed on resume: ContextManager.restore
                       "usage": result.usage.__dict__ if result.usage is not None else None})
        self.emit(ev.CompactionDone(status="ok", **usage, message=""))
        return result.text

    # -- /context and /compact ---------------------------------------------------------------
    def mcp_tools_tokens(self) -> tuple[int, int]:
        """(how many MCP tools are offered, about how many tokens their schemas cost in every request)."""
        mcp = [tool for tool in self.tools if self.mcp is not None and tool["name"] in self.mcp.tools]
        return len(mcp), text_tokens(json.dumps(mcp, ensure_ascii=False)) if mcp else 0

    def context_data(self) -> dict:
        """Tokens of the next request by source, against the budget, and the session's usage."""
        parts = self.context.breakdown(self.history, self.instructions)
        usage = self.usage
        mcp_count, mcp_tokens = self.mcp_tools_tokens()
        return {"total": sum(parts.values()), "budget": self.context.budget, "window": self.settings.context_window,
                "parts": dict(sorted(((k, v) for k, v in parts.items() if v), key=lambda kv: -kv[1])),
                "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cache_hit_share": usage.cache_hit_share,
                "cost_usd": usage.cost_usd if usage.prices else None,
                "mcp_tools": mcp_count, "mcp_tools_tokens": mcp_tokens}

    # -- the session event -------------------------------------------------------------------
    def announce(self, resumed: bool = False) -> None:
        """Emit `SessionOpened`: who we are and the history to draw (after opening, /resume or /clear)."""
        known = self.usage.prices is not None
        self.emit(ev.SessionOpened(id=self.journal.id if self.journal else "", model=self.settings.model,
                                   workspace=str(self.workspace.root), window=self.settings.context_window,
                                   budget_tokens=self.context.budget, max_steps=self.settings.max_steps,
                                   resumed=resumed, session_cost_usd=self.usage.cost_usd if known else None,
                                   history=display_history(self.history),
                                   folder=str(self.journal.folder) if self.journal else "",
                                   mode=self.approvals.mode, sandbox=self.approvals.sandbox.describe()))

    def compact(self, cancel: Cancel | None = None) -> str:
        """Summarise all but the latest turns now; says what happened."""
        self._cancel = cancel or Cancel()
        shaped = self.context.compact_now(self.history, self.instructions)
        if not shaped.actions:
            return _("Nothing to compact yet.")
        return "; ".join(shaped.actions)

    # -- history ----------------------------------------------------------------------------
    def _record(self, item: Item) -> None:
        self.history.append(item)
        self._journal(to_record(item))

    def _journal(self, record: dict) -> None:
        """Write to the journal; if that fails the session goes on in memory, and the user is told once."""
        if self.journal is None:
            return
        try:
            self.journal.write(record)
        except JournalError as exc:
            if not self._journal_failed:
                self._journal_failed = True
                self.emit(ev.Notice(kind="warning", message=_(
                    "{error}; the session goes on, but what follows is not saved until this is fixed"
                ).format(error=exc)))

    def _record_turn(self, result: TurnResult) -> None:
        """Journal what the model produced. Calls are kept only if they will get outputs. The start of an
        unreadable answer (a fence) is not kept: a weak model shown its own "```json" writes it again."""
        runnable = result.status in ("ok", "incomplete")
        unreadable = result.error is not None and result.error.kind == "model_output"
        for item in result.items:
            if isinstance(item, FunctionCall):
                if not runnable:
                    continue
                item.call_id = self._unique_call_id(item.call_id)
            if isinstance(item, AssistantMessage):
                if not item.text or unreadable:
                    continue
                if result.status == "aborted":
                    item.status = "interrupted"
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
        if self._shaped is not None:
            self.context.calibrate(self._shaped, usage.input_tokens)
        cost = self.usage.add(usage.input_tokens, usage.cached_tokens, usage.output_tokens, usage.reasoning_tokens)
        self._journal({"kind": "usage", **usage.__dict__})
        known = self.usage.prices is not None
        self.emit(ev.UsageReported(**usage.__dict__, context_tokens=usage.input_tokens,
                             budget_tokens=self.context.budget, cost_usd=cost if known else None,
                             session_cost_usd=self.usage.cost_usd if known else None))


def display_history(items: list[Item]) -> list[dict]:
    """The history as `session` event entries (see core/protocol.py), calls joined with their outputs."""
    outputs = {i.call_id: i for i in items if isinstance(i, FunctionCallOutput)}
    entries: list[dict] = []
    for item in items:
        if isinstance(item, UserMessage | AssistantMessage | Summary):
            entries.append({"kind": item.kind, "text": item.text})
        elif isinstance(item, Reasoning) and (item.text or item.summary):
            entries.append({"kind": "reasoning", "text": item.text or item.summary})
        elif isinstance(item, FunctionCall):
            try:
                arguments = json.loads(item.arguments)
            except ValueError:
                arguments = item.arguments
            output = outputs.get(item.call_id)
            entries.append({"kind": "tool", "call_id": item.call_id, "name": item.name, "arguments": arguments,
                            "result": output.output if output else "",
                            "status": _status(output.outcome.status) if output else ev.ABORTED_STATUS})
    return entries


def _status(journaled: object) -> str:
    """A journaled tool status in the events' vocabulary (the journal says "interrupted")."""
    status = str(journaled or ev.OK)
    return ev.ABORTED_STATUS if status == "interrupted" else status


def _overflowed(result: TurnResult) -> bool:
    return result.status == "error" and result.error is not None and result.error.kind == "context_overflow"


def _incomplete_message(reason: str) -> str:
    if reason == "max_output_tokens":
        return _("The model's answer was cut off at the output limit (DEEPSEEK_MAX_OUTPUT_TOKENS); "
                 "raise it or ask for a shorter answer.")
    if reason == "content_filter":
        return _("The provider's content filter stopped the answer.")
    return _("The answer is incomplete ({reason}).").format(reason=reason or _("no reason given"))
