"""The plain front ends: the line REPL (`--plain`), one-shot (`--one`) and JSON lines (`--one --json`).

The answer goes to stdout; reasoning, tool activity, notices and errors go to stderr, so a script
can pipe the answer without the chatter. The only `print`-like writes of the core live here.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import unicodedata
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, TextIO

from core import __version__
from core.agent.approvals import DECISIONS, compact_action, parse_decision
from core.cancel import Cancel
from core.runtime.commands import run_command
from core.runtime.open import Session
from core.sanitize import shown
from core.secrets import Redactor
from core.tools.base import Approve
from ui.plain.interrupts import InterruptHandler
from ui.terminal import read_line

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
    """Renders emit events as text. `one_shot` holds the answer back until `done`."""

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

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        handler = getattr(self, "_on_" + event, None)
        if handler is not None:
            handler(data)

    def _on_reasoning(self, data: dict[str, Any]) -> None:
        if not self._in_reasoning:
            self._err("thinking: ", DIM, end="")
            self._in_reasoning = True
        self._err(data.get("delta", ""), DIM, end="")

    def _on_reasoning_done(self, data: dict[str, Any]) -> None:
        self._end_reasoning()

    def _on_text(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        if self.one_shot:
            self._held_text.append(data.get("delta", ""))
            return
        self.out.write(data.get("delta", ""))
        self.out.flush()
        self._text_open = True

    def _on_text_done(self, data: dict[str, Any]) -> None:
        if self._text_open:
            self.out.write("\n")
            self.out.flush()
            self._text_open = False

    def _on_tool_start(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        if self._held_text:  # text before a tool call was commentary, not the answer
            self._err("".join(self._held_text).strip())
            self._held_text.clear()
        self._err(f"→ {describe_call(data.get('name', '?'), data.get('arguments'))}", CYAN)

    def _on_tool_output(self, data: dict[str, Any]) -> None:
        if not self.one_shot:
            for line in data.get("text", "").splitlines()[-PREVIEW_LINES:]:
                self._err(f"  │ {cut(line, 200)}", DIM)

    def _on_tool(self, data: dict[str, Any]) -> None:
        status = data.get("status", "ok")
        first = (data.get("result") or "").strip().splitlines()[:1]
        mark = "✓" if status == "ok" else "✗"
        summary = f"  {mark} {status} ({data.get('duration', 0):.1f} s)" + (f": {cut(first[0], 160)}" if first else "")
        self._err(summary, DIM if status == "ok" else YELLOW)

    def _on_compaction_started(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        self._err(f"! summarising {data.get('items', 0)} older items to free context…", DIM)

    def _on_compaction_done(self, data: dict[str, Any]) -> None:
        if data.get("status") == "ok":
            self._err(f"  summary written ({data.get('output_tokens', 0):,} tokens)", DIM)
        else:
            self._err(f"! the summary failed: {data.get('message', '')}", YELLOW)

    def _on_approval_done(self, data: dict[str, Any]) -> None:
        if data.get("by") == "session":
            self._err("  allowed (always, for this session)", DIM)

    def _on_session(self, data: dict[str, Any]) -> None:
        if data.get("resumed"):
            history = data.get("history") or []
            users = sum(1 for entry in history if entry.get("kind") == "user")
            self._err(f"  {users} earlier messages in this session", DIM)

    def _on_usage(self, data: dict[str, Any]) -> None:
        if self.one_shot:
            return
        self._err(f"  tokens: in {data.get('input_tokens', 0):,} (cached {data.get('cached_tokens', 0):,}), "
                  f"out {data.get('output_tokens', 0):,}" + _context_part(data), DIM)

    def _on_notice(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        self._err(f"! {data.get('message', '')}", YELLOW)

    def _on_error(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        self._err(f"error: {data.get('message', '')}", RED)

    def _on_aborted(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        self._err(f"interrupted: {data.get('reason', '')}", YELLOW)

    def _on_done(self, data: dict[str, Any]) -> None:
        self._end_reasoning()
        if self.one_shot:
            held = "".join(self._held_text)
            self._held_text.clear()
            text = data.get("text") or held
            if text:
                self.out.write(text.rstrip("\n") + "\n")
                self.out.flush()


def _context_part(data: dict[str, Any]) -> str:
    used, budget = data.get("context_tokens"), data.get("budget_tokens")
    part = f"; context {used:,}/{budget:,}" if used and budget else ""
    if data.get("session_cost_usd") is not None:
        part += f"; session ${data['session_cost_usd']:.4f}"
    return part


class JsonEmitter:
    """`--one --json`: every event as one JSON line on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        line = json.dumps({"event": event, **data}, ensure_ascii=False)
        self.out.write(line + "\n")
        self.out.flush()


# -- approval ---------------------------------------------------------------------------------
def make_approver(*, yes: bool, can_ask: bool, interrupts: InterruptHandler | None = None,
                  err: TextIO | None = None, redact: Callable[[str], str] | None = None) -> Approve:
    """`--yes` approves everything; without a person to ask, everything risky is refused."""
    if yes:
        return lambda what, why: None
    if not can_ask:
        return lambda what, why: "nobody can approve it in this mode; rerun with --yes to allow such actions"
    return TerminalApprover(err or sys.stderr, redact or Redactor(), interrupts)


GUTTER = "  ┃ "


def wrap(line: str, width: int) -> list[str]:
    """`line` in rows of at most `width` terminal columns (CJK characters take two), so every row
    of an action gets the gutter the action's own text cannot imitate."""
    rows, row, used = [], [], 0
    for char in line:
        size = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if used + size > width:
            rows.append("".join(row))
            row, used = [], 0
        row.append(char)
        used += size
    return [*rows, "".join(row)]


def _columns(stream: TextIO) -> int:
    """The terminal's width, asked of the terminal itself: readline exports a COLUMNS that goes stale
    when the window is resized, and `shutil.get_terminal_size` believes it."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return shutil.get_terminal_size().columns


class TerminalApprover:
    """Asks in the terminal, with the numbering every front end uses (core/agent/approvals.py).

    The question shows the action exactly as it will run, through the one sanitiser: secrets
    redacted, escape sequences made visible (they cannot erase it and draw another), every line
    of it behind a gutter that the action's own text cannot imitate. `decide` offers all four
    decisions; calling it as a plain `Approve` answers yes or no."""

    def __init__(self, stream: TextIO, redact: Callable[[str], str], interrupts: InterruptHandler | None) -> None:
        self.stream, self.redact, self.interrupts = stream, redact, interrupts

    def __call__(self, what: str, why: str) -> str | None:
        decision, reason = self.decide({"action": what, "reason": why})
        return None if decision in ("once", "session") else reason or "the user said no"

    def decide(self, request: dict[str, Any]) -> tuple[str, str]:
        width = max(20, _columns(self.stream) - len(GUTTER) - 1)
        action = compact_action(request, shown(str(request.get("action", "")), self.redact), line_chars=width)
        rows = [row for line in action.split("\n") for row in wrap(line, width)]
        options = " · ".join(f"{d.key} {d.label}" + (f" ({d.alias})" if d.alias else "") for d in DECISIONS)
        # Why it needs a yes comes first: however long the action, the risk is on screen with the question.
        self.stream.write(f"\n? Approval needed: {shown(str(request.get('reason', '')), self.redact)}\n"
                          + "".join(f"{GUTTER}{row}\n" for row in rows) + f"  {options}\n  Allow it? [y/N] ")
        self.stream.flush()
        answer = self._read()
        decision = parse_decision(answer or "") or "deny"
        if decision == "deny_reason":
            self.stream.write("  Why (the model is told)? ")
            self.stream.flush()
            return decision, (self._read() or "").strip()
        return decision, "" if decision != "deny" else "the user said no"

    def _read(self) -> str | None:
        try:
            with self.interrupts.prompting() if self.interrupts else nullcontext():
                return read_line()
        except KeyboardInterrupt:
            return ""


# -- the two modes ----------------------------------------------------------------------------
EXIT_CODES = {"ok": 0, "error": 1, "step_limit": 3, "aborted": 130}


def run_one(session: Session, task: str, interrupts: InterruptHandler) -> int:
    """`--one`: run one task to completion; the exit code says how it ended."""
    cancel = Cancel()
    try:
        with interrupts.running(cancel):
            outcome = session.agent.run(task, cancel)
    except KeyboardInterrupt:
        return EXIT_CODES["aborted"]
    return EXIT_CODES[outcome.status]


def run_repl(session: Session, interrupts: InterruptHandler, err: TextIO | None = None) -> int:
    """`--plain`: read a line, run it, repeat. Ctrl-C interrupts a turn; twice when idle exits.

    The REPL owns the session from here (/resume may switch it) and closes whichever it ends with."""
    holder = [session]
    try:
        return _repl(holder, interrupts, err or sys.stderr)
    finally:
        holder[0].close()


def _repl(holder: list[Session], interrupts: InterruptHandler, err: TextIO) -> int:
    session = holder[0]
    agent = session.agent
    # What the REPL writes itself passes the sanitiser too: a folder's name, or a reply naming where a
    # resumed session was started, can hold escape sequences.
    redact = Redactor(agent.settings.api_key)
    err.write(shown(f"deepseek-agent {__version__} · {agent.settings.model} · {agent.workspace.root}\n", redact)
              + "Type a task, /help for commands; Ctrl-D or /exit to quit.\n")
    err.flush()
    armed = False
    while True:
        try:
            line = read_line("› ")
        except KeyboardInterrupt:
            if armed:
                err.write("\n")
                return 0
            err.write("\n(press Ctrl-C again to exit, or type /exit)\n")
            err.flush()
            armed = True
            continue
        armed = False
        if line is None:
            err.write("\n")
            return 0
        line = line.strip()
        if not line:
            continue
        if line.startswith("/"):
            cancel = Cancel()
            try:
                with interrupts.running(cancel):  # /compact talks to the model: Ctrl-C stops it
                    reply = run_command(line, session, cancel)
            except KeyboardInterrupt:
                err.write("\ninterrupted\n")
                continue
            if reply.exit:
                return 0
            if reply.session is not None:
                session = holder[0] = reply.session
                agent = session.agent
            err.write(shown(reply.text, redact) + "\n")
            err.flush()
            continue
        cancel = Cancel()
        try:
            with interrupts.running(cancel):
                agent.run(line, cancel)
        except KeyboardInterrupt:
            err.write("\ninterrupted\n")
