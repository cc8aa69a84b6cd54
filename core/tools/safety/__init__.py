"""Which commands and writes need the user's yes before they run.

Judged on the parsed command (`core.tools.cmdline`), not on its text: the argv after quoting and
known expansions (including variables set earlier in the line by `X=`, `export`, `declare`, `printf -v`,
and symlinks made earlier by `ln -s`), looking through `sudo`, `env`, `flock`, `xargs`, `find -exec`,
`sh -c`, `eval`, functions and interpreter one-liners. Asked about:

- a delete, move, overwrite, in-place edit (`sed -i`, `perl -pi`), truncate or recursive permission
  change whose target is outside the workspace, is the workspace itself or a folder holding it (the
  system temp folder's contents and `/dev/null` are scratch space);
- a delete or move of the repository's history (`.git`, its objects, refs, logs);
- git commands that discard uncommitted work, rewrite history or destroy remote refs;
- disk and filesystem tools, raw device writes, shutdown, irrecoverable wipes, writes to credential
  files;
- what cannot be judged before it runs: a target or command name known only at run time, text
  piped into a shell, `eval` of something computed, an interpreter one-liner that deletes or spawns.

This is a guard rail against mistakes, not a sandbox: without one, commands run with the user's
rights, and `--yes` answers every question it asks (never one to leave a sandbox). Each reason says
what a sandbox makes of it (`reasons.py`); under a sandbox, where commands may write is the
sandbox's policy's to say, not the gate's. Fails closed: when nobody can answer (`--one` without `--yes`, piped
input), the action is refused and the model is told why, so it can choose a safer way.

The judge is this module; `state.py` holds a line's judging state and the shared vocabularies,
`targets.py` resolves what a command touches, `readonly.py` knows the commands that only read, and the
dialect modules (`posix.py`, `windows.py`) register their command handlers in `state.HANDLERS`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.cancel import Cancel
from core.i18n import N_, _
from core.modes import ASK
from core.sandbox.policy import Policy
from core.tools.cmdline import PARSERS, VAR, Simple, Unparsed, Word
from core.tools.safety import posix, windows  # noqa: F401  (loading them registers their HANDLERS)
from core.tools.safety.posix import (
    DECLARERS,
    WRAPPERS_AFTER_OPERAND,
    declare,
    env_command,
    parallel,
)
from core.tools.safety.readonly import is_read_only
from core.tools.safety.reasons import BEYOND, OUTSIDE, Reason, as_reason, joined
from core.tools.safety.state import (
    FORK_BOMB,
    HANDLERS,
    MAX_DEPTH,
    MAX_JUDGED_CHARS,
    PS_DELETE,
    PS_MOVE,
    WRAPPERS_WITH_ARGS,
    XARGS_ARGS,
    State,
    nested,
)
from core.tools.safety.targets import (
    after_equals,
    assignment,
    change_dir,
    command_name,
    loop_variable,
    skip_options,
    target_reason,
    unknown_args,
    word_value,
)
from core.tools.shells import detect_shell

__all__ = ["MAX_JUDGED_CHARS", "NOT_KNOWN_READ_ONLY", "Question", "Reason", "command_question",
           "destructive_reason", "platform_dialect"]

NOT_KNOWN_READ_ONLY = N_("not known to only read")  # translated where it is shown


@dataclass(frozen=True)
class Question:
    """Why a command must ask before it runs, and what is asked: "command" (may it run?) or
    "unconfined" (may it run outside the sandbox, which would block it?); `paths`: for
    "unconfined", the places outside what the sandbox lets commands write."""

    reason: str
    kind: str = "command"
    paths: tuple[Path, ...] = ()


def command_question(command: str, workspace: Path, mode: str, *, policy: Policy | None,
                     allowed: Callable[[str, str], bool], cancel: Cancel | None = None) -> Question | None:
    """What this command must ask before it runs in `mode` (see core.modes), or None.

    Confined by a sandbox whose `policy` is given (auto and yes): what no sandbox stops asks; what
    the policy would surely refuse (a write where it lets no command write) asks to run outside the
    sandbox; everything else runs confined (and asks afterwards if the sandbox blocked it).
    Unconfined, the gate's reasons ask; and in ask mode also every command not known to only read,
    unless the workspace's allow rules name it."""
    dialect = platform_dialect()
    confined = policy is not None and mode != ASK
    why = destructive_reason(command, workspace, dialect, cancel, policy if confined else None)
    if confined:
        reasons = why.parts if why else ()
        kept = [reason for reason in reasons if reason.scope == BEYOND]
        if kept:
            return Question(_("; ").join(kept))
        outside = [reason for reason in reasons if reason.scope == OUTSIDE]
        paths = tuple(dict.fromkeys(r.path for r in outside if r.path is not None))
        return Question(_("; ").join(outside), "unconfined", paths) if outside else None
    if why:
        return Question(why)
    if mode != ASK or is_read_only(command, dialect) or allowed(command, dialect):
        return None
    return Question(NOT_KNOWN_READ_ONLY)


def destructive_reason(command: str, workspace: Path | None = None, dialect: str | None = None,
                       cancel: Cancel | None = None, policy: Policy | None = None) -> Reason | None:
    """Why this shell command needs approval, or None when it does not.

    `dialect` is "posix", "powershell" or "cmd" (default: the platform shell's). Judging stops when
    `cancel` fires (the reason then says so). With the sandbox's `policy` (the command will run
    confined), a path is outside when the policy keeps commands from writing it, and only then."""
    if len(command) > MAX_JUDGED_CHARS:
        return Reason(_("it is {length:,} characters long, over the {limit:,} judged before a command runs: "
                        "write the long part to a file (write_file) and have a short command read it").format(
            length=len(command), limit=MAX_JUDGED_CHARS))
    root = Path(workspace or Path.cwd()).resolve()
    # The command sees the session's temp folder as $TMPDIR when it runs confined: so does the gate.
    env = {**os.environ, **(policy.temp_environment() if policy is not None else {})}
    state = State(workspace=root, cwd=root, home=Path(os.path.expanduser("~")), env=env,
                   script=_script, argv=_argv, cancel=cancel, policy=policy)
    if FORK_BOMB.search(command):
        return Reason(_("fork bomb"), BEYOND)
    why = _script(command, dialect or platform_dialect(), state)
    return as_reason(why) if why else None


def platform_dialect() -> str:
    """The dialect commands are written in here: the platform shell's."""
    return "powershell" if "PowerShell" in detect_shell().dialect else "posix"


def _script(text: str, dialect: str, state: State) -> str | None:
    if state.depth > MAX_DEPTH:
        return _("nested too deeply to judge before it runs")
    try:
        commands = PARSERS[dialect](text)
    except Unparsed as exc:
        return _("cannot be parsed ({error}), so it cannot be judged before it runs").format(error=exc)
    # The whole line is judged: every risky command of it gives its reason, so a question shows
    # them all, not only the first. Inside nested code the first reason is enough.
    top, reasons = state.depth == 0, []
    state.depth += 1
    try:
        previous: Simple | None = None
        for simple in commands:
            if stop := state.stopped():
                return joined([*reasons, stop])
            state.upstream = previous if simple.piped else None
            why = _simple(simple, state)
            if why and not top:
                return why
            if why and why not in reasons:
                reasons.append(why)
            previous = simple
    finally:
        state.depth -= 1
    return joined(reasons)


def _simple(cmd: Simple, state: State) -> str | None:
    state.dialect = cmd.dialect
    for body in cmd.substitutions:
        why = _script(body, "powershell" if cmd.dialect == "powershell" else "posix", nested(state))
        if why:
            return why
    for op, target in cmd.redirects:
        if op in (">&", "<&") or (target.literal or "").lstrip("-").isdigit() or op.startswith("<"):
            continue
        why = target_reason("writes to", target, state, cmd.dialect, write=True)
        if why:
            return why
    words = list(cmd.words)
    prefix: dict[str, str | None] = {}
    if cmd.dialect == "posix":
        while words and assignment(words[0]):  # NAME=value before a command, or on its own
            name, _, _ = (words[0].parts[0][1]).partition("=")
            value = word_value(Word(after_equals(words[0])), state)
            if len(words) == 1:
                state.variables[name] = value
            else:
                prefix[name] = value
            words.pop(0)
    if cmd.dialect == "powershell" and len(words) >= 2 and words[1].literal == "=" and words[0].parts[:1] \
            and words[0].parts[0][0] == VAR:
        assigned = word_value(words[2], state) if len(words) > 2 else "$null"
        state.variables[words[0].parts[0][1].lower()] = assigned
        return None
    if not words:
        return None
    if not prefix:
        return _argv(words, cmd, state)
    # `X=~ sh -c 'rm -rf "$X"'`: the command (and what it starts) sees X, the rest of the line does not
    inner = nested(state)
    inner.depth = state.depth
    inner.variables.update(prefix)
    why = _argv(words, cmd, inner)
    state.cwd = inner.cwd  # `X=1 cd /` still changes the folder
    return why


def _argv(words: list[Word], cmd: Simple, state: State) -> str | None:
    name = word_value(words[0], state)
    if name is None:
        return _("runs a command whose name is only known when it runs")
    base = command_name(name, cmd.dialect)
    args = words[1:]
    if base in WRAPPERS_WITH_ARGS:
        return _argv(skip_options(args, WRAPPERS_WITH_ARGS[base]), cmd, state) if args else None
    if base == "env":
        return env_command(args, cmd, state)
    if base in WRAPPERS_AFTER_OPERAND:  # flock LOCKFILE command..., chroot NEWROOT command...
        rest = skip_options(args, WRAPPERS_AFTER_OPERAND[base])
        return _argv(rest[1:], cmd, state) if len(rest) > 1 else None
    if base == "parallel":
        return parallel(args, cmd, state)
    if cmd.dialect == "posix" and base == "function":  # `function f { body; }`: the body is judged as if it ran
        return _argv(args[1:], cmd, state) if len(args) > 1 else None
    if cmd.dialect == "posix" and base in DECLARERS:
        declare(base, args, state)
        return None
    if base == "xargs":
        rest = skip_options(args, XARGS_ARGS)
        if not rest:
            return None
        return _argv(rest, cmd, state) or unknown_args(rest, cmd, state)
    if base in ("cd", "pushd", "set-location", "sl", "chdir"):
        change_dir(args, state)
        return None
    if cmd.dialect == "posix" and base in ("for", "select") and len(args) > 2 and args[1].literal == "in":
        loop_variable(args[0].literal or "", args[2:], state)
        return None
    if cmd.dialect == "posix" and base in ("for", "read", "select"):
        for word in args:
            if (word.literal or "") in ("in", "do", ";"):
                break
            if word.literal and re.fullmatch(r"[A-Za-z_]\w*", word.literal):
                state.variables[word.literal] = None
        return None
    handler = HANDLERS.by_name.get(base)
    if cmd.dialect == "powershell" and cmd.piped and (base in PS_DELETE or base in PS_MOVE):
        # `gci ~ | rm -r`: PowerShell's rm takes its paths from the pipeline
        handler = HANDLERS.by_dialect["powershell"]
    handler = handler or HANDLERS.by_dialect.get(cmd.dialect)
    return handler(base, args, cmd, state) if handler is not None else None
