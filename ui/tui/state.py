"""The TUI's model: core events → transcript blocks and status fields.

`EventPump` is the `emit` the core calls from its threads: it only queues the event and schedules
one drain on the UI loop per burst, so a fast stream costs one redraw per frame. `View.apply`
runs on the UI thread and is the only place that changes blocks or status.
"""

from __future__ import annotations

import os
import re
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

_STAMP = re.compile(r"\[pruned ([\d,]+) → ([\d,]+) chars")


class EventPump:
    """Thread-safe `emit`: queue, then wake the UI loop once per burst."""

    def __init__(self, apply: Callable[[str, dict[str, Any]], None], wake: Callable[[], None],
                 on_error: Callable[[str], None] | None = None) -> None:
        self._apply = apply
        self._wake = wake
        self.on_error = on_error  # an event that cannot be drawn is reported, the rest still are
        self._queue: deque[tuple[str, dict[str, Any]]] = deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self.loop: Any = None  # the UI's asyncio loop, once it runs

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        with self._lock:
            self._queue.append((event, data))
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
        for event, data in events:
            try:
                self._apply(event, data)
            except Exception:
                if self.on_error is None:
                    raise
                self.on_error(traceback.format_exc())
        if events:
            self._wake()


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


class View:
    """Applies events to the transcript and the status; asks the app to open/close modals."""

    def __init__(self, transcript: Transcript, on_approval: Callable[[dict[str, Any] | None], None]) -> None:
        self.transcript = transcript
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
    def apply(self, event: str, data: dict[str, Any]) -> None:
        handler = getattr(self, "_on_" + event, None)
        if handler is not None:
            handler(data)

    def _on_session(self, d: dict[str, Any]) -> None:
        s = self.status
        s.model, s.budget = str(d.get("model", "")), int(d.get("budget_tokens") or 0)
        s.cost = d.get("session_cost_usd")
        history = d.get("history") or []
        if history or not d.get("resumed"):
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
                self.banner("context", "earlier turns were summarised")
            elif kind == "tool":
                state = ToolState(str(entry.get("call_id", "")), str(entry.get("name", "?")), entry.get("arguments"),
                                  status=str(entry.get("status", "ok")),
                                  result=safe(str(entry.get("result", "")), output=True))
                self.add(ToolBlock(state))
        if d.get("resumed"):
            self.banner("info", f"resumed session {d.get('id', '')} ({len(history)} entries)")
        elif not history:
            self.add(WelcomeBlock(welcome(d)))

    def _on_turn_started(self, d: dict[str, Any]) -> None:
        s = self.status
        s.step, s.max_steps = int(d.get("step", 0)), int(d.get("max_steps", 0))
        s.budget = int(d.get("budget_tokens") or s.budget)
        s.context = int(d.get("estimated_tokens") or s.context)
        s.model = str(d.get("model") or s.model)
        self.set_state("waiting")

    def _on_request_sent(self, d: dict[str, Any]) -> None:
        self.set_state("waiting")

    def _on_first_byte(self, d: dict[str, Any]) -> None:
        self.set_state("thinking")

    def _stream(self, d: dict[str, Any], kind: type) -> Any:
        key = f"{kind.__name__}:{d.get('item_id', '')}"
        block = self._open.get(key)
        if block is None:
            block = self._open[key] = self.add(kind(item_id=str(d.get("item_id", ""))))
        return block

    def _on_reasoning(self, d: dict[str, Any]) -> None:
        self._stream(d, ReasoningBlock).feed(str(d.get("delta", "")))
        self.set_state("thinking")

    def _on_reasoning_done(self, d: dict[str, Any]) -> None:
        key = f"ReasoningBlock:{d.get('item_id', '')}"
        block = self._open.pop(key, None)
        if isinstance(block, ReasoningBlock):
            block.finish(str(d.get("text", "")))
        elif d.get("text"):
            self.add(ReasoningBlock(text=str(d["text"]), done=True))

    def _on_text(self, d: dict[str, Any]) -> None:
        self._stream(d, AnswerBlock).feed(str(d.get("delta", "")))
        self.set_state("writing")

    def _on_text_done(self, d: dict[str, Any]) -> None:
        block = self._open.pop(f"AnswerBlock:{d.get('item_id', '')}", None)
        if isinstance(block, AnswerBlock):
            block.finish()
            self.answers.append(block.stream.text)
        elif d.get("text"):
            self.add(AnswerBlock(text=str(d["text"])))
            self.answers.append(str(d["text"]))

    def _on_tool_start(self, d: dict[str, Any]) -> None:
        self._finish_open()
        state = ToolState(str(d.get("call_id", "")), str(d.get("name", "?")), d.get("arguments"))
        self._tools[state.call_id] = block = ToolBlock(state)
        self.add(block)
        command = d.get("arguments", {}).get("command") if isinstance(d.get("arguments"), dict) else None
        self.set_state("running", str(command or state.name))

    def _on_tool_output(self, d: dict[str, Any]) -> None:
        block = self._tools.get(str(d.get("call_id", "")))
        if block is not None:
            block.add_output(str(d.get("text", "")))

    def _on_approval(self, d: dict[str, Any]) -> None:
        block = self._tools.get(str(d.get("call_id", "")))
        if block is not None:
            block.state.approval = "waiting for your approval…"
            block.changed()
        self._approval_id = str(d.get("id", ""))
        self.set_state("approval")
        self.on_approval(d)

    def _on_approval_done(self, d: dict[str, Any]) -> None:
        block = self._tools.get(str(d.get("call_id", "")))
        words = {"once": "allowed once", "session": "allowed for this session", "deny": "denied",
                 "deny_reason": "denied"}
        if block is not None:
            reason = f": {d['reason']}" if d.get("reason") and d.get("decision", "").startswith("deny") else ""
            block.state.approval = words.get(str(d.get("decision")), "") + reason
            block.changed()
        if str(d.get("id")) == self._approval_id:
            self._approval_id = ""
            self.on_approval(None)
            self.set_state("running")

    def _on_tool(self, d: dict[str, Any]) -> None:
        block = self._tools.get(str(d.get("call_id", "")))
        if block is None:
            return
        s = block.state
        s.status, s.duration = str(d.get("status", "ok")), float(d.get("duration") or 0)
        s.result, s.model_result = safe(str(d.get("result", "")), output=True), str(d.get("model_result", ""))
        block.changed()
        stamp = _STAMP.search(s.result)
        if stamp:
            before, after = (int(g.replace(",", "")) for g in stamp.groups())
            self.status.pruned_saved += max(0, before - after)
        self.set_state("waiting")

    def _on_compaction_started(self, d: dict[str, Any]) -> None:
        self.banner("context", f"summarising {d.get('items', 0)} older items to free context…")
        self.set_state("compacting")

    def _on_compaction_done(self, d: dict[str, Any]) -> None:
        if d.get("status") == "ok":
            self.banner("context", f"summary written ({d.get('output_tokens', 0):,} tokens)")
        else:
            self.banner("warning", f"the summary failed: {d.get('message', '')}")
        self.set_state("waiting")

    def _on_usage(self, d: dict[str, Any]) -> None:
        s = self.status
        s.input_tokens += int(d.get("input_tokens") or 0)
        s.cached_tokens += int(d.get("cached_tokens") or 0)
        s.output_tokens += int(d.get("output_tokens") or 0)
        s.context = int(d.get("context_tokens") or s.context)
        s.budget = int(d.get("budget_tokens") or s.budget)
        if d.get("session_cost_usd") is not None:
            s.cost = float(d["session_cost_usd"])

    def _on_notice(self, d: dict[str, Any]) -> None:
        kind = str(d.get("kind", "info"))
        if kind == "retry" and d.get("delay") is not None:
            self.status.retry_until = time.monotonic() + float(d["delay"])
            self.status.retry_attempt = f"{d.get('attempt', '?')}/{d.get('max_attempts', '?')}"
            self.set_state("retrying")
        self.banner(kind, str(d.get("message", "")))

    def _on_error(self, d: dict[str, Any]) -> None:
        self._finish_open()
        self.banner("error", str(d.get("message", "")))

    def _on_aborted(self, d: dict[str, Any]) -> None:
        self._finish_open(interrupted=True)
        self.banner("aborted", f"interrupted: {d.get('reason', '')}")

    def _on_done(self, d: dict[str, Any]) -> None:
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


def welcome(session: dict[str, Any]) -> str:
    """The one quiet line an empty screen shows: where, which model, which mode, where help is."""
    workspace = str(session.get("workspace", ""))
    home = str(Path.home())
    if workspace == home or workspace.startswith(home + os.sep):
        workspace = "~" + workspace[len(home):]
    mode = session.get("mode") or "ask"
    return f"{session.get('model', '')} · mode {mode} · /help for help · {workspace}"
