"""The runtime: the one object a front end talks to. Ops go in through `send`, events come out
through the callback given at construction, and nothing else crosses.

It owns the worker thread that runs tasks and slash commands one at a time, the session (which
/resume and /clear swap inside it), the approval policy, and redaction: every event passes one
`RedactingEmit` before any front end sees it. This is the submission-queue / event-queue design
of codex, sized for Python threads.
"""

from __future__ import annotations

import queue
import threading
import traceback
from pathlib import Path

from core import protocol as ev
from core.cancel import Cancel
from core.config import Settings
from core.modes import ASK
from core.runtime.commands import run_command
from core.runtime.open import Session, open_session
from core.secrets import RedactingEmit, Redactor

_Job = ev.Submit | ev.RunCommand


class Runtime:
    """One session's engine behind a queue. `open()` opens the session (it raises
    `SessionNotFound`/`JournalError` for the front end to report); `start()` starts the worker."""

    def __init__(self, settings: Settings, workspace: Path, on_event: ev.Emit, *, mode: str = ASK,
                 interactive: bool = True, allow: list[str] | tuple[str, ...] = (), resume: str | None = None,
                 resume_latest: bool = False) -> None:
        self._settings = settings
        self._workspace = workspace
        self._mode, self._interactive, self._allow = mode, interactive, tuple(allow)
        self._resume, self._resume_latest = resume, resume_latest
        self.emit = RedactingEmit(on_event, Redactor(settings.api_key))
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._session: Session | None = None
        self._cancel: Cancel | None = None  # the running job's
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    def open(self) -> None:
        """Open (or resume) the session and announce it, on the caller's thread."""
        session = open_session(self._settings, self.emit, self._workspace, self._mode, interactive=self._interactive,
                               allow=self._allow,
                               resume=self._resume, resume_latest=self._resume_latest)
        self._session = session
        session.agent.announce(resumed=bool(session.agent.history))
        # The user hears of an AGENTS.md that was skipped or cut; the session's instructions tell the model.
        for notice in filter(None, [*session.notices, *session.agent.agents_notices]):
            self.emit(ev.Notice(kind="info", message=notice))

    def start(self) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="agent-runtime", daemon=True)
            self._worker.start()

    def close(self, timeout: float = 10.0) -> None:
        """Stop taking jobs, interrupt the running one, and close the session (its commands' process
        trees end with it)."""
        self.send(ev.Interrupt("the agent is closing"))
        self.send(ev.Shutdown())
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout)
        if self._session is not None:
            self._session.close()

    # -- ops --------------------------------------------------------------------------------------
    def send(self, op: ev.Op) -> None:
        """Any thread. Jobs queue behind the running one; answers and interrupts act at once."""
        match op:
            case ev.Submit() | ev.RunCommand():
                self._jobs.put(op)
            case ev.Answer(approval_id=approval_id, decision=decision, reason=reason):
                if self._session is not None:
                    self._session.agent.approvals.answer(approval_id, decision, reason)
            case ev.Interrupt(reason=reason):
                with self._lock:
                    cancel = self._cancel
                if cancel is not None:
                    cancel.cancel(reason)
            case ev.Shutdown():
                self._jobs.put(None)

    # -- the worker -------------------------------------------------------------------------------
    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            kind = "task" if isinstance(job, ev.Submit) else "command"
            cancel = Cancel()
            with self._lock:
                self._cancel = cancel
            self.emit(ev.JobStarted(kind=kind, text=job.text if isinstance(job, ev.Submit) else job.line))
            try:
                if isinstance(job, ev.Submit):
                    self._require().agent.run(job.text, cancel)
                else:
                    self._command(job.line, cancel)
            except Exception as exc:  # a bug must not kill the worker: say it, take the next job
                self.emit(ev.InternalError(message=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc()))
            finally:
                with self._lock:
                    self._cancel = None
                self.emit(ev.JobEnded(kind=kind))

    def _command(self, line: str, cancel: Cancel) -> None:
        reply = run_command(line, self._require(), cancel)
        if reply.session is not None:  # /resume or /clear: the old session was closed by the command
            self._session = reply.session
        self.emit(ev.CommandResult(command=line.split()[0].lower() if line.split() else "", text=reply.text,
                                   data=reply.data, exit=reply.exit))

    def _require(self) -> Session:
        if self._session is None:
            raise RuntimeError("the runtime has no session: call open() first")
        return self._session
