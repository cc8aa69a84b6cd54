"""The TUI's model: core events → transcript blocks and status fields.

`EventPump` is the `emit` the core calls from its threads: it only queues the event and schedules
one drain on the UI loop per burst, so a fast stream costs one redraw per frame. `View.apply`
runs on the UI thread and is the only place that changes blocks or status.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import protocol as ev
from core.i18n import _
from ui.tui.blocks import (
    AnswerBlock,
    BannerBlock,
    Block,
    CommandBlock,
    ReasoningBlock,
    ToolBlock,
    ToolState,
    UserBlock,
    WelcomeBlock,
)
from ui.tui.render import safe
from ui.tui.transcript import Transcript


class EventPump:
    """Thread-safe `emit`: queue, then wake the UI loop once per burst."""

    def __init__(self, apply: Callable[[ev.Event], None], wake: Callable[[], None],
                 on_error: Callable[[str], None] | None = None) -> None:
        self.sink = apply
        self.wake = wake
        self.on_error = on_error  # an event that cannot be drawn is reported, the rest still are
        self._queue: deque[ev.Event] = deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self.loop: Any = None  # the UI's asyncio loop, once it runs

    def __call__(self, event: ev.Event) -> None:
        with self._lock:
            self._queue.append(event)
            if self._scheduled or self.loop is None:
                return
            self._scheduled = True
        try:
            self.loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop closed: the app is exiting
            pass

    def drain(self) -> None:
        with self._lock:
            events = list(self._queue)
            self._queue.clear()
            self._scheduled = False
        for event in events:
            try:
                self.sink(event)
            except Exception:
                if self.on_error is None:
                    raise
                self.on_error(traceback.format_exc())
        if events:
            self.wake()


@dataclass
class Status:
    model: str = ""
    state: str = "idle"
    since: float = 0.0  # when the state began (for "running … 12 s")
    detail: str = ""
    retry_until: float = 0.0
    retry_attempt: str = ""
    step: int = 0
    max_steps: int = 0
    context: int = 0
    budget: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    pruned_saved: int = 0
    queued: int = 0
    busy: bool = False
    mode: str = ""  # the approval mode, and what confines commands (SessionOpened)
    sandbox: str = ""


class View:
    """Applies events to the transcript and the status; asks the app to open/close modals."""

    def __init__(self, transcript: Transcript,
                 on_approval: Callable[[ev.ApprovalRequested | None], None]) -> None:
        self.transcript = transcript
        self.workspace = ""  # the session's, from its SessionOpened event
        self.folder = ""
        self.session_id = ""
        self.status = Status()
        self.on_approval = on_approval
        self.answers: list[str] = []  # finished answers, for /copy
        self._open: dict[str, Block] = {}  # streaming blocks by item id
        self._tools: dict[str, ToolBlock] = {}
        self._approval_id = ""

    # -- helpers ---------------------------------------------------------------------------
    def set_state(self, state: str, detail: str = "") -> None:
        if state != self.status.state or detail != self.status.detail:
            self.status.since = time.monotonic()
        self.status.state, self.status.detail = state, detail

    def add(self, block: Block) -> Block:
        return self.transcript.add(block)

    def user(self, text: str) -> None:
        self.add(UserBlock(text))

    def command_reply(self, text: str) -> None:
        if text.strip():
            self.add(CommandBlock(text))

    def banner(self, kind: str, text: str) -> None:
        self.add(BannerBlock(kind, text))

    def _finish_open(self, interrupted: bool = False) -> None:
        for block in self._open.values():
            if isinstance(block, AnswerBlock):
                block.finish()
                block.interrupted = interrupted
                if block.stream.text.strip():
                    self.answers.append(block.stream.text)
            elif isinstance(block, ReasoningBlock):
                block.finish()
        self._open.clear()

    # -- events ----------------------------------------------------------------------------
    def apply(self, event: ev.Event) -> None:
        match event:
            case ev.SessionOpened():
                self._session(event)
            case ev.TurnStarted():
                s = self.status
                s.step, s.max_steps = event.step, event.max_steps
                s.budget = event.budget_tokens or s.budget
                s.context = event.estimated_tokens or s.context
                s.model = event.model or s.model
                self.set_state("waiting")
            case ev.RequestSent():
                self.set_state("waiting")
            case ev.FirstByte():
                self.set_state("thinking")
            case ev.ReasoningDelta(delta=delta, item_id=item_id):
                self._stream(item_id, ReasoningBlock).feed(delta)
                self.set_state("thinking")
            case ev.ReasoningDone(text=text, item_id=item_id):
                block = self._open.pop(f"ReasoningBlock:{item_id}", None)
                if isinstance(block, ReasoningBlock):
                    block.finish(text)
                elif text:
                    self.add(ReasoningBlock(text=text, done=True))
            case ev.TextDelta(delta=delta, item_id=item_id):
                self._stream(item_id, AnswerBlock).feed(delta)
                self.set_state("writing")
            case ev.TextDone(text=text, item_id=item_id):
                self._text_done(text, item_id)
            case ev.ToolStarted():
                self._tool_started(event)
            case ev.ToolOutput(call_id=call_id, text=text):
                block = self._tools.get(call_id)
                if block is not None:
                    block.add_output(text)
            case ev.ApprovalRequested():
                self._approval(event)
            case ev.ApprovalResolved():
                self._approval_done(event)
            case ev.ToolFinished():
                self._tool_finished(event)
            case ev.CompactionStarted(items=items):
                self.banner("context", _("summarising {count} older items to free context…").format(count=items))
                self.set_state("compacting")
            case ev.CompactionDone(status=status, output_tokens=tokens, message=message):
                if status == "ok":
                    self.banner("context", _("summary written ({tokens:,} tokens)").format(tokens=tokens))
                else:
                    self.banner("warning", _("the summary failed: {problem}").format(problem=message))
                self.set_state("waiting")
            case ev.UsageReported():
                self._usage(event)
            case ev.Notice():
                self._notice(event)
            case ev.Error(message=message):
                self._finish_open()
                self.banner("error", message)
            case ev.Aborted(reason=reason):
                self._finish_open(interrupted=True)
                self.banner("aborted", _("interrupted: {reason}").format(reason=reason))
            case ev.Done():
                self._done()
            case _:  # checkpoints, undo and job events: the app and the status show those
                pass

    def _session(self, d: ev.SessionOpened) -> None:
        s = self.status
        s.model, s.budget, s.cost = d.model, d.budget_tokens, d.session_cost_usd
        s.mode, s.sandbox = d.mode, d.sandbox
        self.workspace, self.folder, self.session_id = d.workspace, d.folder, d.id
        history = d.history
        if history or not d.resumed:
            self.transcript.clear()
            self._open.clear()
            self._tools.clear()
        for entry in history:
            kind = entry.get("kind")
            if kind == "user":
                self.add(UserBlock(str(entry.get("text", ""))))
            elif kind == "assistant":
                self.add(AnswerBlock(text=str(entry.get("text", ""))))
                self.answers.append(str(entry.get("text", "")))
            elif kind == "reasoning":
                self.add(ReasoningBlock(text=str(entry.get("text", "")), done=True))
            elif kind == "summary":
                self.banner("context", _("earlier turns were summarised"))
            elif kind == "tool":
                state = ToolState(str(entry.get("call_id", "")), str(entry.get("name", "?")), entry.get("arguments"),
                                  status=str(entry.get("status", "ok")),
                                  result=safe(str(entry.get("result", "")), output=True))
                self.add(ToolBlock(state))
        if d.resumed:
            self.banner("info", _("resumed session {id} ({count} entries)").format(id=d.id, count=len(history)))
        elif not history:
            self.add(WelcomeBlock(welcome(d)))

    def _stream(self, item_id: str, kind: type) -> Any:
        key = f"{kind.__name__}:{item_id}"
        block = self._open.get(key)
        if block is None:
            block = self._open[key] = self.add(kind(item_id=item_id))
        return block

    def _text_done(self, text: str, item_id: str) -> None:
        block = self._open.pop(f"AnswerBlock:{item_id}", None)
        if isinstance(block, AnswerBlock):
            block.finish()
            self.answers.append(block.stream.text)
        elif text:
            self.add(AnswerBlock(text=text))
            self.answers.append(text)

    def _tool_started(self, d: ev.ToolStarted) -> None:
        self._finish_open()
        state = ToolState(d.call_id, d.name or "?", d.arguments, server=d.server)
        self._tools[state.call_id] = block = ToolBlock(state)
        self.add(block)
        command = d.arguments.get("command") if isinstance(d.arguments, dict) else None
        self.set_state("running", str(command or state.name))

    def _approval(self, d: ev.ApprovalRequested) -> None:
        block = self._tools.get(d.call_id)
        if block is not None:
            block.state.approval = _("waiting for your approval…")
            block.changed()
        self._approval_id = d.id
        self.set_state("approval")
        self.on_approval(d)

    def _approval_done(self, d: ev.ApprovalResolved) -> None:
        block = self._tools.get(d.call_id)
        words = {"once": _("allowed once"), "session": _("allowed for this session"), "deny": _("denied"),
                 "deny_reason": _("denied")}
        if block is not None:
            reason = f": {d.reason}" if d.reason and d.decision.startswith("deny") else ""
            block.state.approval = words.get(d.decision, "") + reason
            block.changed()
        if d.id == self._approval_id:
            self._approval_id = ""
            self.on_approval(None)
            self.set_state("running")

    def _tool_finished(self, d: ev.ToolFinished) -> None:
        block = self._tools.get(d.call_id)
        if block is None:
            return
        s = block.state
        s.status, s.duration = d.status, float(d.duration or 0)
        s.result, s.model_result = safe(d.result, output=True), d.model_result
        block.changed()
        if d.pruned_from is not None and d.pruned_to is not None:
            self.status.pruned_saved += max(0, d.pruned_from - d.pruned_to)
        self.set_state("waiting")

    def _usage(self, d: ev.UsageReported) -> None:
        s = self.status
        s.input_tokens += d.input_tokens
        s.cached_tokens += d.cached_tokens
        s.output_tokens += d.output_tokens
        s.context = d.context_tokens or s.context
        s.budget = d.budget_tokens or s.budget
        if d.session_cost_usd is not None:
            s.cost = float(d.session_cost_usd)

    def _notice(self, d: ev.Notice) -> None:
        if d.kind == "retry" and d.delay is not None:
            self.status.retry_until = time.monotonic() + float(d.delay)
            self.status.retry_attempt = f"{d.attempt or '?'}/{d.max_attempts or '?'}"
            self.set_state("retrying")
        self.banner(d.kind, d.message)

    def _done(self) -> None:
        self._finish_open()
        for block in self._tools.values():
            if block.state.status == "running":
                block.state.status = "aborted"
                block.changed()
        self.set_state("idle")

    def foldable(self) -> Block | None:
        """The block Ctrl-O toggles: the latest tool panel or reasoning."""
        for block in reversed(self.transcript.blocks):
            if block.foldable:
                return block
        return None


def welcome(session: ev.SessionOpened) -> str:
    """The one quiet line an empty screen shows: which model, which mode, where help is, where."""
    workspace, home = session.workspace, str(Path.home())
    if workspace == home or workspace.startswith(home + os.sep):
        workspace = "~" + workspace[len(home):]
    return _("{model} · mode {mode} · /help for help · {workspace}").format(
        model=session.model, mode=session.mode or "ask", workspace=workspace)
