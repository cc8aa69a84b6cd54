"""The one slash-command parser of every front end: a line such as "/mode ask" becomes the typed op
that does it (`SetMode(mode="ask")`), a command the front end does itself (`/help`, `/exit`) a
`Local`, and anything else a `Usage` saying what is wrong. `/help` lists `COMMANDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import get_args

from core import protocol as ev
from core.i18n import N_, _


@dataclass(frozen=True)
class Local:
    """A command the front end does itself: `/help`, `/exit`, `/quit`, and any it names."""

    name: str
    arg: str


@dataclass(frozen=True)
class Usage:
    """The line names no command, or gives one what it cannot take; `message` says which and how."""

    command: str
    message: str


Parsed = ev.CommandOp | Local | Usage


def _none(make: Callable[[], ev.CommandOp]) -> Callable[[str, str], Parsed]:
    """A command that takes no argument."""
    return lambda name, arg: Usage(name, _("{command} takes no argument, got {arg!r}.").format(
        command=name, arg=arg)) if arg else make()


def _mode(name: str, arg: str) -> Parsed:
    if not arg:
        return ev.SetMode()
    word = arg.split()[0].lower()
    modes = get_args(ev.Mode)
    if word not in (*modes, "next"):
        return Usage(name, _("Unknown mode {word!r}: the modes are {modes}.").format(word=word, modes=", ".join(modes)))
    return ev.SetMode(mode=word)  # type: ignore[arg-type]


def _diff(name: str, arg: str) -> Parsed:
    if arg.lower() in ("", "session"):
        return ev.ShowDiff()
    if arg.lower() in ("last", "turn", "-1"):
        return ev.ShowDiff(last=True)
    return Usage(name, _("/diff shows the session's changes, /diff last the last turn's; got {arg!r}.").format(arg=arg))


def _undo(name: str, arg: str) -> Parsed:
    try:
        turns = int(arg) if arg else 1
    except ValueError:
        return Usage(name, _("/undo takes a number of turns, got {arg!r}.").format(arg=arg))
    if turns < 1:
        return Usage(name, _("/undo takes a number of turns of at least 1."))
    return ev.Undo(turns=turns)


def _mcp(name: str, arg: str) -> Parsed:
    verb, _sep, server = arg.partition(" ")
    server = server.strip()
    if not verb:
        return ev.ShowMcp()
    if verb in ("restart", "allow"):
        if not server:
            return Usage(name, _("Usage: /mcp {verb} NAME").format(verb=verb))
        return ev.McpRestart(server=server) if verb == "restart" else ev.McpAllow(server=server)
    return Usage(name, _("Unknown /mcp command {verb!r}: /mcp, /mcp restart NAME, /mcp allow NAME.").format(verb=verb))


COMMANDS: dict[str, tuple[Callable[[str, str], Parsed], str]] = {
    "/help": (Local, N_("show this list")),
    "/context": (_none(ev.ShowContext), N_("what the next request holds, by source, against the budget")),
    "/mcp": (_mcp, N_("MCP servers and their tools; /mcp restart NAME, /mcp allow NAME")),
    "/compact": (_none(ev.Compact), N_("summarise older turns now to free context")),
    "/clear": (_none(ev.NewSession), N_("start a new conversation (the current one stays saved)")),
    "/model": (lambda name, arg: ev.SetModel(model=arg.split()[0] if arg else None),
               N_("show the model, or switch: /model NAME")),
    "/mode": (_mode, N_("show the approval mode, or switch: /mode auto|ask|yes")),
    "/diff": (_diff, N_("what the agent changed: /diff (session), /diff last")),
    "/undo": (_undo, N_("put files back as before the last turn: /undo [N]")),
    "/sessions": (_none(ev.ListSessions), N_("list saved sessions")),
    "/resume": (lambda name, arg: ev.Resume(session=arg.split()[0] if arg else None),
                N_("continue a saved session: /resume [ID] (latest without ID)")),
    "/exit": (Local, N_("quit (Ctrl-D works too)")),
    "/quit": (Local, N_("quit")),
}


def parse(line: str, local: tuple[str, ...] = ()) -> Parsed:
    """`line` (it starts with "/") as an op, a `Local` (also for the front end's own `local` names),
    or a `Usage`."""
    name, _sep, arg = line.strip().partition(" ")
    name, arg = name.lower(), arg.strip()
    if name in local:
        return Local(name, arg)
    entry = COMMANDS.get(name)
    if entry is None:
        return Usage(name, _("Unknown command {command}; /help lists them.").format(command=name))
    return entry[0](name, arg)


def command_docs(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Every command with what it does, the front end's own (`extra`) after the shared ones."""
    return {**{name: doc for name, (_, doc) in COMMANDS.items()}, **(extra or {})}


def help_lines(extra: dict[str, str] | None = None) -> list[str]:
    """/help's list."""
    return [_("Commands:")] + [f"  {name:<12} {_(doc)}" for name, doc in command_docs(extra).items()]
