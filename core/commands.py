"""Slash commands shared by every interactive front end (plain REPL and TUI)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.cancel import Cancel
from core.checkpoints.commands import diff_text, undo_text
from core.journal import JournalError
from core.session import Session, SessionNotFound, format_sessions, open_session


@dataclass
class Reply:
    text: str = ""
    exit: bool = False
    session: Session | None = None  # set when the command switched to another session


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
        new = open_session(agent.settings, agent.emit, agent.workspace.root, agent.approve,
                           resume=arg or None, resume_latest=not arg, exclude=session.journal.id)
    except (SessionNotFound, JournalError) as exc:
        return Reply(f"Cannot resume: {exc}")
    session.close()
    notes = "".join(f"\n! {notice}" for notice in new.notices)
    return Reply(f"Resumed session {new.journal.id} ({len(new.agent.history)} items).{notes}", session=new)


def _context(session: Session, arg: str, cancel: Cancel) -> Reply:
    return Reply(session.agent.context_report())


def _compact(session: Session, arg: str, cancel: Cancel) -> Reply:
    return Reply(session.agent.compact(cancel))


COMMANDS: dict[str, tuple[Callable[[Session, str, Cancel], Reply], str]] = {
    "/help": (_help, "show this list"),
    "/context": (_context, "what the next request holds, by source, against the budget"),
    "/compact": (_compact, "summarise older turns now to free context"),
    "/diff": (lambda s, a, c: Reply(diff_text(s.agent, a)), "what the agent changed: /diff (session), /diff last"),
    "/undo": (lambda s, a, c: Reply(undo_text(s.agent, a)), "put files back as before the last turn: /undo [N]"),
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
