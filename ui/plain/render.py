"""The plain text renderer: events as lines. The answer goes to stdout; reasoning, tool activity,
notices and errors go to stderr, so a script can pipe the answer without the chatter."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from core import protocol as ev
from core.i18n import _
from ui.reports import TOOL_STATUS

DIM, RED, YELLOW, CYAN, RESET = "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[0m"
PREVIEW_LINES = 4


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters; where it is cut, a "…" says so."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def describe_call(name: str, arguments: Any) -> str:
    """A one-line summary of a tool call for humans."""
    if isinstance(arguments, dict):
        for key in ("command", "path", "pattern", "id"):
            if key in arguments:
                value = " ".join(str(arguments[key]).split())
                return f"{name} {cut(value, 200)}"
        return name
    return f"{name} {cut(str(arguments), 200)}"


class PlainEmitter:
    """Renders events as text. `one_shot` holds the answer back until `Done`."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, one_shot: bool = False,
                 color: bool = False) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.one_shot = one_shot
        self.color = color
        self._in_reasoning = False
        self._text_open = False
        self._held_text: list[str] = []

    def _style(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _err(self, text: str, code: str = "", end: str = "\n") -> None:
        self.err.write((self._style(text, code) if code else text) + end)
        self.err.flush()

    def _end_reasoning(self) -> None:
        if self._in_reasoning:
            self._err("")
            self._in_reasoning = False

    def __call__(self, event: ev.Event) -> None:
        match event:
            case ev.ReasoningDelta(delta=delta):
                if not self._in_reasoning:
                    self._err(_("thinking: "), DIM, end="")
                    self._in_reasoning = True
                self._err(delta, DIM, end="")
            case ev.ReasoningDone():
                self._end_reasoning()
            case ev.TextDelta(delta=delta):
                self._text(delta)
            case ev.TextDone():
                if self._text_open:
                    self.out.write("\n")
                    self.out.flush()
                    self._text_open = False
            case ev.ToolStarted(name=name, arguments=arguments):
                self._end_reasoning()
                if self._held_text:  # text before a tool call was commentary, not the answer
                    self._err("".join(self._held_text).strip())
                    self._held_text.clear()
                self._err(f"→ {describe_call(name or '?', arguments)}", CYAN)
            case ev.ToolOutput(text=text):
                if not self.one_shot:
                    for line in text.splitlines()[-PREVIEW_LINES:]:
                        self._err(f"  │ {cut(line, 200)}", DIM)
            case ev.ToolFinished(status=status, result=result, duration=duration):
                first = (result or "").strip().splitlines()[:1]
                mark = "✓" if status == "ok" else "✗"
                summary = f"  {mark} {_(TOOL_STATUS.get(status, status))} ({duration:.1f} s)" + (
                    f": {cut(first[0], 160)}" if first else "")
                self._err(summary, DIM if status == "ok" else YELLOW)
            case ev.CompactionStarted(items=items):
                self._end_reasoning()
                self._err("! " + _("summarising {count} older items to free context…").format(count=items), DIM)
            case ev.CompactionDone(status=status, output_tokens=tokens, message=message):
                if status == "ok":
                    self._err("  " + _("summary written ({tokens:,} tokens)").format(tokens=tokens), DIM)
                else:
                    self._err("! " + _("the summary failed: {problem}").format(problem=message), YELLOW)
            case ev.ApprovalResolved(by="session"):
                self._err("  " + _("allowed (always, for this session)"), DIM)
            case ev.SessionOpened(resumed=True, history=history):
                users = sum(1 for entry in history if entry.get("kind") == "user")
                self._err("  " + _("{count} earlier messages in this session").format(count=users), DIM)
            case ev.UsageReported() if not self.one_shot:
                self._err("  " + _("tokens: in {input:,} (cached {cached:,}), out {output:,}").format(
                    input=event.input_tokens, cached=event.cached_tokens, output=event.output_tokens)
                    + _context_part(event), DIM)
            case ev.Notice(message=message):
                self._end_reasoning()
                self._err(f"! {message}", YELLOW)
            case ev.Error(message=message):
                self._end_reasoning()
                self._err(_("error: {problem}").format(problem=message), RED)
            case ev.InternalError(message=message):
                self._end_reasoning()
                self._err(_("error: the agent hit a bug ({problem}); the session goes on").format(problem=message), RED)
            case ev.Aborted(reason=reason):
                self._end_reasoning()
                self._err(_("interrupted: {reason}").format(reason=reason), YELLOW)
            case ev.Done(text=text):
                self._done(text)
            case _:
                pass

    def _text(self, delta: str) -> None:
        self._end_reasoning()
        if self.one_shot:
            self._held_text.append(delta)
            return
        self.out.write(delta)
        self.out.flush()
        self._text_open = True

    def _done(self, text: str) -> None:
        self._end_reasoning()
        if self.one_shot:
            held = "".join(self._held_text)
            self._held_text.clear()
            text = text or held
            if text:
                self.out.write(text.rstrip("\n") + "\n")
                self.out.flush()


def _context_part(usage: ev.UsageReported) -> str:
    used, budget = usage.context_tokens, usage.budget_tokens
    part = _("; context {used:,}/{budget:,}").format(used=used, budget=budget) if used and budget else ""
    if usage.session_cost_usd is not None:
        part += _("; session ${cost:.4f}").format(cost=usage.session_cost_usd)
    return part
