"""Opening a session: a new journal, or an old one resumed, wired to an Agent."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core import protocol as ev
from core.agent.loop import Agent
from core.checkpoints.ledger import session_checkpoints_size
from core.config import Settings
from core.i18n import _
from core.mcp.open import open_mcp
from core.modes import ASK
from core.prune.archive import OutputArchive
from core.sandbox import probe, trampoline
from core.sandbox.reaper import helper_environment  # noqa: F401 - re-exported for front ends (Session)
from core.sanitize import shown_deep
from core.secrets import Redactor
from core.session.journal import (  # noqa: F401 - JournalError re-exported: what opening a session raises
    Journal,
    JournalError,
    SessionLocked,
    find_sessions,
    list_sessions,
    load,
    sessions_root,
)
from core.tools.shell import kill_lingering

OUTPUTS_FOLDER = "outputs"


class SessionNotFound(Exception):
    """No saved session matches what was asked for; the message lists what there is."""


class SessionBusy(SessionNotFound):
    """The session asked for is open in another agent; the message says which process."""


@dataclass
class Session:
    """An open session. Closing it ends every process its commands left behind, except the front
    end's own helpers (the TUI's clipboard server), which start with `helper_environment()`."""

    agent: Agent
    journal: Journal
    notices: list[str] = field(default_factory=list)

    def close(self) -> None:
        if self.agent.mcp is not None:
            self.agent.mcp.manager.close()
        self.journal.close()
        self.agent.client.close()
        kill_lingering()
        if self.agent.network is not None:
            self.agent.network.close()


def open_session(settings: Settings, emit: ev.Emit, workspace: Path, mode: str = ASK, *, interactive: bool = True,
                 allow: tuple[str, ...] = (),
                 resume: str | None = None, resume_latest: bool = False, exclude: str = "") -> Session:
    """A fresh session, or (with `resume`/`resume_latest`) the chosen one continued; `exclude`
    is the session asking to switch, never a candidate."""
    root = sessions_root(settings.sessions_dir or None)
    redact = Redactor(settings.api_key)
    notices: list[str] = []
    history = []
    loaded_usage: list[dict] = []
    events: list[tuple[int, dict]] = []
    if resume or resume_latest:
        matches = find_sessions(root, resume, exclude)
        if len(matches) != 1:
            if len(matches) > 1:
                what = _("{id!r} matches {count} sessions ({ids}); give more of the id").format(
                    id=resume, count=len(matches), ids=", ".join(m.id for m in matches[:4]))
            else:
                known = ", ".join(s.id for s in list_sessions(root)[:5]) or _("none yet")
                what = (_("no session matches {id!r} in {folder} (recent: {known})") if resume
                        else _("there is no session to resume in {folder} (recent: {known})")).format(
                            id=resume, folder=root, known=known)
            raise SessionNotFound(_("{problem}; list them with --sessions").format(problem=what))
        info = matches[0]
        loaded = load(info.folder)
        notices += loaded.notices
        history = loaded.items
        loaded_usage = loaded.usage + [c["usage"] for c in loaded.compactions if isinstance(c.get("usage"), dict)]
        events = loaded.events
        try:
            journal = Journal(info.folder, redact)
        except SessionLocked as exc:
            raise SessionBusy(str(exc)) from None
        if info.workspace and Path(info.workspace) != workspace.resolve():
            notices.append(_("this session was started in {started}; continuing in {workspace}").format(
                started=info.workspace, workspace=workspace))
    else:
        journal = Journal.create(root, workspace.resolve(), settings.model, redact)
    archive = OutputArchive(journal.folder / OUTPUTS_FOLDER, redact=redact)
    sandboxed = probe(settings.sandbox, settings.network).active  # stdio servers run confined too
    mcp, mcp_notices = open_mcp(settings, workspace, journal.folder, confine=(
        (lambda program, args: trampoline.command(workspace, program, args, settings)) if sandboxed else None))
    notices += mcp_notices
    agent = Agent(settings, emit, workspace, mode, interactive=interactive, allow=allow, journal=journal,
                  history=history, archive=archive, mcp=mcp)
    for record in loaded_usage:  # the session's cost goes on from where it was, summaries included
        agent.usage.add(*(int(record.get(k) or 0) for k in ("input_tokens", "cached_tokens", "output_tokens",
                                                           "reasoning_tokens")))
    agent.context.restore(history, events, agent.instructions)  # and its context shaping too
    return Session(agent=agent, journal=journal, notices=notices)


def list_session_rows(settings: Settings, limit: int = 30) -> tuple[str, list[ev.SessionRow], int]:
    """The sessions' folder, its newest `limit` sessions, and how many older ones were left out."""
    root = sessions_root(settings.sessions_dir or None)
    sessions = list_sessions(root)
    rows = [ev.SessionRow(id=info.id, created=info.created, size=info.size(),
                          checkpoints_size=session_checkpoints_size(info.folder), first_prompt=info.first_prompt)
            for info in sessions[:limit]]
    return str(root), rows, max(0, len(sessions) - limit)


def sessions_listing(settings: Settings) -> ev.SessionsListed:
    """`--sessions`' answer, asked before any runtime runs: the sessions as `ListSessions` lists them,
    through the sanitiser the runtime passes every event through."""
    listing = ev.SessionsListed("", *list_session_rows(settings), current="")
    return shown_deep(listing)  # type: ignore[return-value]


def data_folder(settings: Settings) -> Path:
    """The agent's own folder of data (sessions, the input history): a front end keeps its files there."""
    return sessions_root(settings.sessions_dir or None).parent
