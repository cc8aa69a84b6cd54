"""The plain front ends' drivers: the line REPL (`--plain`) and one-shot (`--one`, text or JSON).

The runtime works on its own thread and renders through the sink as it goes. The main thread
reads lines, sends them as ops, and waits for the job to end; a question that needs a person
comes back to it, since only the main thread reads the terminal and gets Ctrl-C.
"""

from __future__ import annotations

import queue
import sys
import typing
from typing import TextIO

from core import __version__
from core import protocol as ev
from core.i18n import _
from core.runtime.runtime import Runtime
from core.runtime.slash import Local, Usage, help_lines, parse
from ui.language import COMMAND as LANG_COMMAND
from ui.language import lang_command
from ui.plain.approver import TerminalApprover
from ui.plain.interrupts import InterruptHandler
from ui.reports import answer_text
from ui.terminal import read_line

EXIT_CODES = {"ok": 0, "error": 1, "step_limit": 3, "aborted": 130}
_ANSWERS = typing.get_args(ev.CommandAnswer)
_POLL = 0.2  # seconds between checks for Ctrl-C while a job runs (Windows' waits do not wake for it)


class PlainSink:
    """The runtime's event callback: renders every event, notes how the session and the task stand,
    and hands the main thread what it must act on (questions, slash commands' answers, job ends)."""

    def __init__(self, render: ev.Emit) -> None:
        self.render = render
        self.inbox: queue.Queue[ev.Event] = queue.Queue()
        self.session: ev.SessionOpened | None = None
        self.status = ""  # the last task's Done status

    def __call__(self, event: ev.Event) -> None:
        self.render(event)
        match event:
            case ev.SessionOpened():
                self.session = event
            case ev.Done(status=status):
                self.status = status
            case ev.ApprovalRequested() | ev.JobEnded():
                self.inbox.put(event)
            case _ if isinstance(event, _ANSWERS):
                self.inbox.put(event)
            case _:
                pass


class _JobInterrupt:
    """What Ctrl-C cancels while a job runs: the runtime's job, by an `Interrupt` op."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.cancelled = False

    def cancel(self, reason: str = "interrupted") -> None:
        self.cancelled = True
        self.runtime.send(ev.Interrupt(reason))


def wait_for_job(runtime: Runtime, sink: PlainSink, interrupts: InterruptHandler,
                 approver: TerminalApprover | None) -> ev.CommandAnswer | None:
    """Until the job ends: answer its questions (refused when nobody can be asked) and return what
    a slash command was answered with. A second Ctrl-C while the job stops raises KeyboardInterrupt."""
    result: ev.CommandAnswer | None = None
    with interrupts.running(_JobInterrupt(runtime)):
        while True:
            try:
                event = sink.inbox.get(timeout=_POLL)
            except queue.Empty:
                continue
            match event:
                case ev.ApprovalRequested(id=approval_id):
                    decision, reason = (approver.decide(event) if approver
                                        else ("deny", _("nobody can answer")))
                    runtime.send(ev.Answer(approval_id, decision, reason))
                case ev.JobEnded():
                    return result
                case _:
                    result = event  # type: ignore[assignment]  # the sink queues nothing else


def run_one(runtime: Runtime, sink: PlainSink, task: str, interrupts: InterruptHandler) -> int:
    """`--one`: run one task to completion; the exit code says how it ended."""
    runtime.start()
    runtime.send(ev.Submit(task))
    try:
        wait_for_job(runtime, sink, interrupts, approver=None)
    except KeyboardInterrupt:
        return EXIT_CODES["aborted"]
    return EXIT_CODES.get(sink.status, 1)


def run_repl(runtime: Runtime, sink: PlainSink, interrupts: InterruptHandler, approver: TerminalApprover | None,
             err: TextIO | None = None) -> int:
    """`--plain`: read a line, send it, wait for it, repeat. Ctrl-C interrupts a turn; twice when idle
    exits. The runtime closes whatever session it ends with."""
    err = err or sys.stderr
    runtime.start()
    try:
        return _repl(runtime, sink, interrupts, approver, err)
    finally:
        runtime.close()


def _repl(runtime: Runtime, sink: PlainSink, interrupts: InterruptHandler, approver: TerminalApprover | None,
          err: TextIO) -> int:
    session = sink.session  # already through the runtime's sanitiser, as every event is
    where = f" · {session.model} · {session.workspace}" if session else ""
    err.write(f"deepseek-agent {__version__}{where}\n" + _("Type a task, /help for commands; Ctrl-D or /exit to quit.")
              + "\n")
    err.flush()
    armed = False
    while True:
        try:
            line = read_line("› ")
        except KeyboardInterrupt:
            if armed:
                err.write("\n")
                return 0
            err.write("\n" + _("(press Ctrl-C again to exit, or type /exit)") + "\n")
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
        op = parse(line, local=tuple(LANG_COMMAND)) if line.startswith("/") else ev.Submit(line)
        match op:
            case Local(name="/help"):
                reply = "\n".join(help_lines(LANG_COMMAND))
            case Local(name="/lang", arg=arg):
                reply = lang_command(arg)
            case Local():  # /exit, /quit
                return 0
            case Usage():
                reply = answer_text(op)
            case _:
                runtime.send(op)
                try:
                    answer = _wait(runtime, sink, interrupts, approver)
                except KeyboardInterrupt:
                    err.write("\n" + _("interrupted") + "\n")
                    continue
                reply = answer_text(answer) if answer is not None else ""
        if reply:
            err.write(reply + "\n")
            err.flush()


def _wait(runtime: Runtime, sink: PlainSink, interrupts: InterruptHandler,
          approver: TerminalApprover | None) -> ev.CommandAnswer | None:
    """The job's end; after a second Ctrl-C, still its end (the turn is already stopping)."""
    try:
        return wait_for_job(runtime, sink, interrupts, approver)
    except KeyboardInterrupt:
        runtime.send(ev.Interrupt(_("interrupted by the user (Ctrl-C)")))
        while not isinstance(event := sink.inbox.get(), ev.JobEnded):
            if isinstance(event, ev.ApprovalRequested):
                runtime.send(ev.Answer(event.id, "deny", _("the turn was interrupted")))
        raise
