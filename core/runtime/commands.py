"""Slash commands shared by every interactive front end (plain REPL and TUI).

A command returns a `Reply`: text for a line front end, `data` for one that draws (the TUI shows
/context as a gauge), and the session to continue with when it switched (/resume, /clear); the new
session has announced itself with a `session` event. Commands a front end handles itself (/copy,
/mouse, /export in the TUI) are listed by that front end, not here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.cancel import Cancel
from core.checkpoints.commands import diff_text, undo_text
from core.mcp.open import allow_workspace_server
from core.mcp.report import mcp_data, mcp_text
from core.modes import AUTO, MODES, SUMMARY
from core.runtime.open import Session, SessionNotFound, format_sessions, open_session
from core.session.journal import JournalError


@dataclass
class Reply:
    text: str = ""
    exit: bool = False
    session: Session | None = None  # set when the command switched to another session
    data: dict[str, Any] = field(default_factory=dict)  # the same as `text`, as fields (/context)


def _help(session: Session, arg: str, cancel: Cancel) -> Reply:
    lines = ["Commands:"] + [f"  {name:<12} {doc}" for name, (_, doc) in COMMANDS.items()]
    return Reply("\n".join(lines))


def _exit(session: Session, arg: str, cancel: Cancel) -> Reply:
    return Reply(exit=True)


def _sessions(session: Session, arg: str, cancel: Cancel) -> Reply:
    return Reply(format_sessions(session.agent.settings) + f"\n(current: {session.journal.id})")


def _resume(session: Session, arg: str, cancel: Cancel) -> Reply:
    agent = session.agent
    try:
        new = open_session(agent.settings, agent.emit, agent.workspace.root, agent.approvals.mode,
                           interactive=agent.approvals.interactive, allow=agent.approvals.extra_rules(),
                           resume=arg or None, resume_latest=not arg, exclude=session.journal.id)
    except (SessionNotFound, JournalError) as exc:
        return Reply(f"Cannot resume: {exc}")
    session.close()
    new.agent.announce(resumed=True)
    notes = "".join(f"\n! {notice}" for notice in new.notices)
    return Reply(f"Resumed session {new.journal.id} ({len(new.agent.history)} items).{notes}", session=new)


def _clear(session: Session, arg: str, cancel: Cancel) -> Reply:
    agent = session.agent
    try:
        new = open_session(agent.settings, agent.emit, agent.workspace.root, agent.approvals.mode,
                           interactive=agent.approvals.interactive, allow=agent.approvals.extra_rules())
    except JournalError as exc:
        return Reply(f"Cannot start a new session: {exc}")
    session.close()
    new.agent.announce()
    return Reply(f"New conversation (session {new.journal.id}); the last one is kept: /resume {session.journal.id}",
                 session=new)


def _model(session: Session, arg: str, cancel: Cancel) -> Reply:
    agent = session.agent
    if not arg:
        return Reply(f"Model: {agent.settings.model} (switch with /model NAME)", data={"model": agent.settings.model})
    name = arg.split()[0]
    agent.settings = dataclasses.replace(agent.settings, model=name)
    agent.client.settings = agent.settings
    agent.usage.prices = agent.prices.get(name)
    return Reply(f"Model: {name} from the next request on", data={"model": name})


def _mode(session: Session, arg: str, cancel: Cancel) -> Reply:
    approvals = session.agent.approvals
    sandbox = approvals.sandbox
    usable = [m for m in MODES if m != AUTO or sandbox.active]
    name = arg.split()[0].lower() if arg.strip() else ""
    if name == "next":  # Shift-Tab in the TUI: the next mode this machine can use
        name = usable[(usable.index(approvals.mode) + 1) % len(usable)] if approvals.mode in usable else usable[0]
    if not name:
        return Reply(f"Mode: {approvals.mode} ({SUMMARY[approvals.mode]}). Sandbox: {sandbox.describe()}.\n"
                     f"Switch with /mode {'|'.join(usable)}.", data={"mode": approvals.mode})
    if name not in MODES:
        return Reply(f"Unknown mode {name!r}: the modes are {', '.join(MODES)}.")
    if name not in usable:
        return Reply(f"The auto mode runs commands in a sandbox, and none works here ({sandbox.reason}).")
    approvals.mode = name
    return Reply(f"Mode: {name} ({SUMMARY[name]}) from the next command on.", data={"mode": name})


def _context(session: Session, arg: str, cancel: Cancel) -> Reply:
    return Reply(session.agent.context_report(), data=session.agent.context_data())


def _mcp(session: Session, arg: str, cancel: Cancel) -> Reply:
    tools = session.agent.mcp
    verb, _, name = arg.partition(" ")
    if verb in ("restart", "allow"):
        if not name.strip():
            return Reply(f"Usage: /mcp {verb} NAME")
        if tools is None:
            return Reply("No MCP servers are configured.")
        if verb == "allow":
            return Reply(allow_workspace_server(tools, name.strip()))
        return Reply(tools.manager.restart(name.strip()))
    if verb:
        return Reply(f"Unknown /mcp command {verb!r}: /mcp, /mcp restart NAME, /mcp allow NAME.")
    return Reply(mcp_text(tools), data=mcp_data(tools))


def _compact(session: Session, arg: str, cancel: Cancel) -> Reply:
    return Reply(session.agent.compact(cancel))


COMMANDS: dict[str, tuple[Callable[[Session, str, Cancel], Reply], str]] = {
    "/help": (_help, "show this list"),
    "/context": (_context, "what the next request holds, by source, against the budget"),
    "/mcp": (_mcp, "MCP servers and their tools; /mcp restart NAME, /mcp allow NAME"),
    "/compact": (_compact, "summarise older turns now to free context"),
    "/clear": (_clear, "start a new conversation (the current one stays saved)"),
    "/model": (_model, "show the model, or switch: /model NAME"),
    "/mode": (_mode, "show the approval mode, or switch: /mode auto|ask|yes"),
    "/diff": (lambda s, a, c: Reply(diff_text(s.agent, a)), "what the agent changed: /diff (session), /diff last"),
    "/undo": (lambda s, a, c: Reply(undo_text(s.agent, a, c)), "put files back as before the last turn: /undo [N]"),
    "/sessions": (_sessions, "list saved sessions"),
    "/resume": (_resume, "continue a saved session: /resume [ID] (latest without ID)"),
    "/exit": (_exit, "quit (Ctrl-D works too)"),
    "/quit": (_exit, "quit"),
}


def run_command(line: str, session: Session, cancel: Cancel | None = None) -> Reply:
    name, _, arg = line.strip().partition(" ")
    entry = COMMANDS.get(name.lower())
    if entry is None:
        return Reply(f"Unknown command {name}; /help lists them.")
    return entry[0](session, arg.strip(), cancel or Cancel())
