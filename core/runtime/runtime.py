"""The runtime: the one object a front end talks to. Ops go in through `send`, events come out
through the callback given at construction, and nothing else crosses.

It owns the worker thread that runs tasks and slash commands one at a time, the session (which
/resume and /clear swap inside it), the approval policy, and redaction: every event passes one
`RedactingEmit` before any front end sees it. This is the submission-queue / event-queue design
of codex, sized for Python threads.

`send` only enqueues, so a front end may call it from its event loop or from inside an event
callback: jobs go to the worker's queue, answers and interrupts to a control thread of their own,
which acts on them while the worker is busy (an interrupt's callbacks may wait for a process tree).
"""

from __future__ import annotations

import dataclasses
import itertools
import queue
import threading
import traceback
import typing
from pathlib import Path

from core import protocol as ev
from core.cancel import Cancel
from core.config import Settings
from core.i18n import _
from core.modes import ASK, resolve_mode
from core.runtime.commands import Owned, dispatch
from core.runtime.open import Session, open_session
from core.secrets import RedactingEmit, Redactor

_Job = ev.Submit | ev.CommandOp
_JOBS = (ev.Submit, *typing.get_args(ev.CommandOp))
_Control = ev.Answer | tuple[Cancel, str]  # an answer, or the job to stop and why


class Runtime:
    """One session's engine behind a queue. `open()` opens the session (it raises
    `SessionNotFound`/`JournalError` for the front end to report); `start()` starts the worker.
    `mode=None` is the mode the settings ask for, else this machine's default (a ConfigError says
    why the asked-for mode cannot be had)."""

    def __init__(self, settings: Settings, workspace: Path, on_event: ev.Emit, *, mode: str | None = ASK,
                 interactive: bool = True, allow: list[str] | tuple[str, ...] = (), resume: str | None = None,
                 resume_latest: bool = False) -> None:
        self._owned = Owned(settings, resolve_mode(settings) if mode is None else mode)  # the mode and model; /mode and /model write them here
        self._workspace = workspace
        self._interactive, self._allow = interactive, tuple(allow)
        self._resume, self._resume_latest = resume, resume_latest
        self.emit = RedactingEmit(on_event, Redactor(settings.api_key))
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._control: queue.Queue[_Control | None] = queue.Queue()
        self._session: Session | None = None
        self._cancel: Cancel | None = None  # the running job's (set and read whole: no lock needed)
        self._worker: threading.Thread | None = None
        self._controller: threading.Thread | None = None
        self._ids = itertools.count(1)

    # -- lifecycle --------------------------------------------------------------------------------
    def open(self) -> None:
        """Open (or resume) the session and announce it, on the caller's thread."""
        session = self._open(self._resume, self._resume_latest, "")
        self._session = session
        session.agent.announce(resumed=bool(session.agent.history))
        # The user hears of an AGENTS.md that was skipped or cut; the session's instructions tell the model.
        for notice in filter(None, [*session.notices, *session.agent.agents_notices]):
            self.emit(ev.Notice(kind="info", message=notice))

    def start(self) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="agent-runtime", daemon=True)
            self._controller = threading.Thread(target=self._steer, name="agent-control", daemon=True)
            self._worker.start()
            self._controller.start()

    def close(self, timeout: float = 10.0) -> None:
        """Stop taking jobs, interrupt the running one, and close the session (its commands' process
        trees end with it)."""
        self.send(ev.Interrupt(_("the agent is closing")))
        self.send(ev.Shutdown())
        self._control.put(None)  # after the interrupt: the control thread acts on it, then ends
        for thread in (self._worker, self._controller):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
        if self._session is not None:
            self._session.close()

    def _open(self, resume: str | None, resume_latest: bool, exclude: str) -> Session:
        """A session with the runtime's mode, model and allow rules (with those an "always" added in the
        session it replaces: the approval gate keeps them)."""
        if self._session is not None:
            self._allow = self._session.agent.approvals.extra_rules()
        return open_session(self._owned.settings, self.emit, self._workspace, self._owned.mode,
                            interactive=self._interactive, allow=self._allow, resume=resume,
                            resume_latest=resume_latest, exclude=exclude)

    # -- ops --------------------------------------------------------------------------------------
    def send(self, op: ev.Op) -> str:
        """Any thread; only enqueues, never waits. Jobs (a prompt, a slash-command op) queue behind the
        running one, with an id given when the op has none; the id is returned, and the job's events
        carry it. Answers and interrupts go to the control thread, which acts on them at once; an interrupt
        stops the job that runs when it is sent (none: nothing happens), never a later one."""
        if isinstance(op, _JOBS):
            job = op if op.id else dataclasses.replace(op, id=f"op-{next(self._ids)}")
            self._jobs.put(job)
            return job.id
        if isinstance(op, ev.Answer):
            self._control.put(op)
        elif isinstance(op, ev.Interrupt):
            cancel = self._cancel  # the job running now (one read): an interrupt never stops a later job
            if cancel is not None:
                self._control.put((cancel, op.reason))
        elif isinstance(op, ev.Shutdown):
            self._jobs.put(None)
        return ""

    # -- the control thread -----------------------------------------------------------------------
    def _steer(self) -> None:
        """Answers and interrupts, in the order they were sent, beside the running job."""
        while (op := self._control.get()) is not None:
            try:
                match op:
                    case ev.Answer(approval_id=approval_id, decision=decision, reason=reason):
                        if self._session is not None:
                            self._session.agent.approvals.answer(approval_id, decision, reason)
                    case (cancel, reason):
                        cancel.cancel(reason)
            except Exception as exc:  # a bug must not stop the interrupts that follow
                self.emit(ev.InternalError(message=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc()))

    # -- the worker -------------------------------------------------------------------------------
    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            kind = "task" if isinstance(job, ev.Submit) else "command"
            cancel = self._cancel = Cancel()
            self.emit(ev.JobStarted(kind=kind, text=job.text if isinstance(job, ev.Submit) else job.command,
                                    op_id=job.id))
            try:
                if isinstance(job, ev.Submit):
                    self._require().agent.run(job.text, cancel)
                else:
                    self._command(job, cancel)
            except Exception as exc:  # a bug must not kill the worker: say it, take the next job
                self.emit(ev.InternalError(message=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc()))
            finally:
                self._cancel = None
                self.emit(ev.JobEnded(kind=kind, op_id=job.id))

    def _command(self, op: ev.CommandOp, cancel: Cancel) -> None:
        outcome = dispatch(op, self._require(), cancel, self._owned, self._open)
        if outcome.session is not None:  # /resume or /clear: the old session was closed by the command
            self._session = outcome.session
        self.emit(outcome.answer)

    def _require(self) -> Session:
        if self._session is None:
            raise RuntimeError("the runtime has no session: call open() first")
        return self._session
