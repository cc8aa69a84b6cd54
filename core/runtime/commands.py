"""What the slash-command ops do. Each takes its op and the runtime's session, acts, and returns the
typed answer (with the op's id) and, for `NewSession`/`Resume`, the session to continue with; the
new session has announced itself with a `SessionOpened` event. The words are the front ends'.

The approval mode and the model are the runtime's (`Owned`): `SetMode` and `SetModel` write them
there, and the open session follows; the next session a switch opens starts from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from core import protocol as ev
from core.cancel import Cancel
from core.checkpoints.commands import diff_of, undo
from core.config import Settings
from core.i18n import _
from core.mcp.open import allow_workspace_server
from core.mcp.report import mcp_servers
from core.modes import AUTO, MODES
from core.runtime.open import Session, SessionBusy, SessionNotFound, list_session_rows
from core.session.journal import JournalError

# Opens the session a switch goes to: (resume, resume_latest, exclude) -> Session.
Reopen = Callable[[str | None, bool, str], Session]


@dataclass
class Owned:
    """What the runtime owns across its sessions."""

    settings: Settings  # its model is the one every request uses
    mode: str  # the approval mode


def follow(owned: Owned, session: Session) -> None:
    """The session takes the runtime's mode and model."""
    agent = session.agent
    agent.approvals.mode = owned.mode
    if agent.settings is not owned.settings:
        agent.settings = agent.client.settings = owned.settings
        agent.usage.prices = agent.prices.get(owned.settings.model)


@dataclass
class Outcome:
    answer: ev.CommandAnswer
    session: Session | None = None  # set when the op switched to another session


def dispatch(op: ev.CommandOp, session: Session, cancel: Cancel, owned: Owned, reopen: Reopen) -> Outcome:
    """Do `op` in `session`; `reopen` opens another one from what the runtime owns."""
    agent = session.agent
    match op:
        case ev.SetMode():
            return Outcome(_mode(op, session, owned))
        case ev.SetModel(model=None):
            return Outcome(ev.ModelChanged(op.id, owned.settings.model, changed=False))
        case ev.SetModel(model=name):
            owned.settings = dataclasses.replace(owned.settings, model=name)
            follow(owned, session)
            return Outcome(ev.ModelChanged(op.id, name, changed=True))
        case ev.ShowContext():
            return Outcome(ev.ContextReport(op_id=op.id, **agent.context_data()))
        case ev.Compact():
            return Outcome(ev.Compacted(op.id, agent.compact(cancel)))
        case ev.ShowDiff(last=last):
            diff = diff_of(agent, last)
            return Outcome(ev.DiffShown(op.id, last, diff or "", checkpoints=diff is not None))
        case ev.Undo(turns=turns):
            return Outcome(dataclasses.replace(undo(agent, turns, cancel), op_id=op.id))
        case ev.ListSessions():
            folder, rows, more = list_session_rows(agent.settings)
            return Outcome(ev.SessionsListed(op.id, folder, rows, more, current=session.journal.id))
        case ev.NewSession() | ev.Resume():
            return _switch(op, session, reopen)
        case ev.ShowMcp():
            return Outcome(ev.McpReport(op.id, mcp_servers(agent.mcp)))
        case ev.McpRestart(server=name) | ev.McpAllow(server=name):
            if agent.mcp is None:
                return Outcome(ev.CommandFailed(op.id, op.command, "unavailable",
                                                _("No MCP servers are configured.")))
            if isinstance(op, ev.McpAllow):
                return Outcome(ev.McpChanged(op.id, "allow", name, allow_workspace_server(agent.mcp, name)))
            return Outcome(ev.McpChanged(op.id, "restart", name, agent.mcp.manager.restart(name)))
    raise TypeError(f"not a slash-command op: {op!r}")


def _mode(op: ev.SetMode, session: Session, owned: Owned) -> ev.ModeChanged | ev.CommandFailed:
    sandbox = session.agent.approvals.sandbox
    usable = [m for m in MODES if m != AUTO or sandbox.active]
    name = op.mode
    if name == "next":  # the next mode this machine can use
        name = usable[(usable.index(owned.mode) + 1) % len(usable)] if owned.mode in usable else usable[0]
    if name is not None and name not in usable:
        return ev.CommandFailed(op.id, op.command, "unavailable",
                                _("The auto mode runs commands in a sandbox, and none works here "
                                  "({reason}).").format(reason=_(sandbox.reason)))
    if name is not None:
        owned.mode = name
        follow(owned, session)
    return ev.ModeChanged(op.id, owned.mode, changed=name is not None, usable=usable, sandbox=sandbox.describe())


def _switch(op: ev.NewSession | ev.Resume, session: Session, reopen: Reopen) -> Outcome:
    resuming = isinstance(op, ev.Resume)
    try:
        new = reopen(op.session, not op.session, session.journal.id) if isinstance(op, ev.Resume) \
            else reopen(None, False, "")
    except SessionBusy as exc:
        return Outcome(ev.CommandFailed(op.id, op.command, "busy", str(exc)))
    except SessionNotFound as exc:
        return Outcome(ev.CommandFailed(op.id, op.command, "not_found", str(exc)))
    except JournalError as exc:
        return Outcome(ev.CommandFailed(op.id, op.command, "failed", str(exc)))
    session.close()
    new.agent.announce(resumed=resuming)
    return Outcome(ev.SessionSwitched(op.id, new.journal.id, session.journal.id, resuming, len(new.agent.history),
                                      list(new.notices)), session=new)
