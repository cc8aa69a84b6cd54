"""Words and paths: what a word means when the command runs, and where a target lies (inside the
workspace, in scratch space, in the repository's history, or outside)."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from core.credentials import is_credential_path
from core.i18n import N_, _
from core.tools.cmdline import GLOB, LIT, PARSERS, SUB, TILDE, VAR, Simple, Unparsed, Word
from core.tools.safety.reasons import BEYOND, OTHER, OUTSIDE, Reason
from core.tools.safety.state import (
    DELETERS,
    DEVICE,
    HARMLESS_SINKS,
    NETWORK_REDIRECT,
    PS_DELETE,
    PS_LISTERS,
    PS_VALUE_PARAMS,
    WINDOWS_ABSOLUTE,
    State,
)


# -- words and paths ------------------------------------------------------------------------------
def word_value(word: Word, state: State) -> str | None:
    """The word's value after the expansions known before the command runs; None when not known."""
    out: list[str] = []
    for kind, text in word.parts:
        if kind in (LIT, GLOB):
            out.append(text)
        elif kind == TILDE:
            if text:
                expanded = os.path.expanduser("~" + text)
                if expanded.startswith("~"):
                    return None
                out.append(expanded)
            else:
                out.append(str(state.home))
        elif kind == VAR:
            value = _variable(text, state)
            if value is None:
                return None
            out.append(value)
        elif kind == SUB:
            joined = _join_path(text, state) if state.dialect == "powershell" else None
            if joined is None:
                return None
            out.append(joined)
    return "".join(out)


def piped_items(base: str, cmd: Simple, state: State) -> str | None:
    """`Get-ChildItem X | Remove-Item`: what goes is what the listing gives, the items under X."""
    up = state.upstream
    name = command_name(word_value(up.words[0], state) or "", "powershell") if up is not None and up.words else ""
    if up is None or name not in PS_LISTERS:
        return _("{name} acts on what the pipeline gives it, known only when it runs").format(name=base)
    roots: list[str | None] = []
    filtered = False
    words = list(up.words[1:])
    while words:
        value = word_value(words.pop(0), state)
        key = (value or "")[1:].partition(":")[0].lower() if (value or "").startswith("-") else ""
        if key in ("path", "literalpath") and words:
            roots.append(word_value(words.pop(0), state))
        elif key:
            filtered = filtered or key in ("filter", "include", "exclude", "name")
            if key in PS_VALUE_PARAMS and ":" not in (value or "") and words:
                words.pop(0)
        else:
            roots.append(value)
    items = [Word([(SUB, "pipeline")]) if root is None else Word.of(root) if name in ("get-item", "gi")
             else Word([(LIT, root.rstrip("/\\") + "/"), (GLOB, "*")]) for root in roots or ["."]]
    what = "deletes" if base in PS_DELETE else "moves"
    return targets_reason(what, items, state, cmd.dialect, some=filtered)


def _join_path(body: str, state: State) -> str | None:
    """`(Join-Path $HOME 'x')` is known before it runs: the parts joined by a backslash."""
    try:
        commands = PARSERS["powershell"](body)
    except Unparsed:
        return None
    words = commands[0].words if len(commands) == 1 else []
    if not words or (words[0].literal or "").lower() != "join-path":
        return None
    values = [word_value(w, state) for w in words[1:] if not (w.literal or "").startswith("-")]
    if len(values) < 2 or any(v is None for v in values):
        return None
    return "\\".join(v.rstrip("/\\") for v in values if v is not None)


def _variable(name: str, state: State) -> str | None:
    if state.dialect != "posix":
        name = name.lower()  # PowerShell and cmd names ignore case
    if name in state.variables:
        return state.variables[name]
    if name.isdigit():  # $1 of a function or script: not known here
        return None
    if name.lower().startswith("env:"):  # $env:X, %X%: unset is unknown, not empty
        wanted = name[4:].lower()
        return next((v for k, v in state.env.items() if k.lower() == wanted), None)
    if name.lower() == "home":
        return str(state.home)
    if name.lower() == "pwd":
        return None if state.cwd is None else str(state.cwd)
    if state.dialect != "posix":
        return {"null": "$null", "true": "true", "false": "false"}.get(name)
    # An unset POSIX variable expands to nothing ("$UNSET/" is "/"): that is what runs.
    return state.env.get(name, "")


def assignment(word: Word) -> bool:
    return bool(word.parts) and word.parts[0][0] == LIT and re.match(r"[A-Za-z_]\w*=", word.parts[0][1]) is not None


def after_equals(word: Word) -> list[tuple[str, str]]:
    first = word.parts[0][1].partition("=")[2]
    tilde = re.match(r"~([\w.-]*)(?=/|$)", first)
    head = [(TILDE, tilde.group(1)), (LIT, first[tilde.end():])] if tilde else [(LIT, first)]
    return [*(head if first else []), *word.parts[1:]]


def command_name(name: str, dialect: str) -> str:
    base = re.split(r"[/\\]", name)[-1]
    if dialect != "posix" or sys.platform == "win32":
        base = base.lower()
        base = re.sub(r"\.(exe|cmd|bat|com)$", "", base)
    if re.fullmatch(r"mkfs(\.\w+)?", base):
        return "mkfs"
    if re.fullmatch(r"(python|pypy)[\d.]*", base):
        return "python3"
    return base


def skip_options(args: list[Word], with_value: set[str]) -> list[Word]:
    rest = list(args)
    while rest:
        value = rest[0].literal
        if value is None or not value.startswith("-") or value == "-":
            break
        rest = rest[2:] if value in with_value else rest[1:]
        if value == "--":
            break
    if rest and rest[0].literal and re.fullmatch(r"\d+(\.\d+)?[smhd]?", rest[0].literal):
        rest = rest[1:]  # timeout's duration, nice's priority
    return rest


def operand_words(args: list[Word], state: State, with_value: set[str] | None = None) -> list[Word]:
    out: list[Word] = []
    options = True
    skip = False
    for word in args:
        value = word_value(word, state)
        if skip:
            skip = False
            continue
        if options and value == "--":
            options = False
        elif options and value is not None and value.startswith("-") and value != "-":
            skip = value in (with_value or set())
        else:
            out.append(word)
    return out


def operands_and_target(args: list[Word], state: State) -> tuple[list[Word], Word | None]:
    target: Word | None = None
    rest: list[Word] = []
    words = list(args)
    while words:
        word = words.pop(0)
        value = word_value(word, state) or ""
        if value in ("-t", "--target-directory") and words:
            target = words.pop(0)
        elif value.startswith("--target-directory="):
            target = Word.of(value.partition("=")[2])
        elif value in ("-S", "--suffix") and words:
            words.pop(0)
        else:
            rest.append(word)
    return operand_words(rest, state), target


def unknown_args(rest: list[Word], cmd: Simple, state: State) -> str | None:
    name = command_name(word_value(rest[0], state) or "", cmd.dialect)
    if name in DELETERS or name in ("chmod", "chown", "shred", "dd", "tee", "cp", "git"):
        return _("{name} acts on names that are only known when it runs (fed in by xargs or parallel)"
                 ).format(name=name)
    return None


# What each verb does to its target, as a whole sentence: a translation may put the target anywhere.
SENTENCES = {
    "deletes": N_("deletes {target}"),
    "deletes files under": N_("deletes files under {target}"),
    "deletes or moves": N_("deletes or moves {target}"),
    "truncates": N_("truncates {target}"),
    "moves": N_("moves {target}"),
    "moves into": N_("moves into {target}"),
    "overwrites": N_("overwrites {target}"),
    "writes to": N_("writes to {target}"),
    "rewrites": N_("rewrites {target}"),
    "extracts over": N_("extracts over {target}"),
    "recursive permission change of": N_("recursive permission change of {target}"),
}


def _sentence(verb: str, target: str, **fields: str) -> str:
    """The verb's sentence, its target (a phrase with `fields`) translated with it."""
    return _(SENTENCES[verb]).format(target=_(target).format(**fields))


def targets_reason(verb: str, words: list[Word], state: State, dialect: str, write: bool = False,
                   some: bool = False) -> str | None:
    for word in words:
        why = target_reason(verb, word, state, dialect, write, some)
        if why:
            return why
    return None


def target_reason(verb: str, word: Word, state: State, dialect: str, write: bool = False,
                  some: bool = False) -> str | None:
    """Why acting on this word's path needs a yes; `some`: only some of the files under it."""
    if stop := state.stopped():
        return stop
    value = word_value(word, state)
    if value is None:
        return _sentence(verb, N_("a path that is only known when it runs"))
    if value == "":
        return None
    if is_credential_path(value) and verb != "deletes":
        return _("writes to a credential file ({path})").format(path=value)
    if value.lower() in HARMLESS_SINKS or (write and value.startswith("/dev/fd/")):
        return None
    if dialect == "posix" and (connection := NETWORK_REDIRECT.match(value)):
        if state.policy is not None:
            return None  # confined: the sandbox's network rules decide where it may connect
        return Reason(_("connects to {host} port {port} over {protocol} (bash's {path})").format(
            host=connection["host"], port=connection["port"], protocol=connection["proto"], path=value))
    if DEVICE.match(value):
        return Reason(_("raw write to a device"), OUTSIDE, Path(value))
    path = _path(value, state, dialect)
    if path is None:
        return Reason(_sentence(verb, N_("{path}, a path outside the workspace"), path=value), OUTSIDE)
    if not write and _history(path, state):
        return Reason(_sentence(verb, N_("{path} (the repository's history)"), path=value), BEYOND, path)
    if programs := _git_programs(path, state):
        return _sentence(verb, N_("{path} ({why})"), path=value, why=_(programs))
    if some:
        path = path / "*.selected"
    glob = some or any(kind == GLOB for kind, _ in word.parts) or (
        any(kind == VAR for kind, _ in word.parts) and any(c in value for c in "*?["))  # $f from `for f in *`
    where = _where(path, glob, state, spelled_in_temp=_spelled_in_temp(value, state))
    if where is None:
        return None
    text = _sentence(verb, N_("{path} ({why})"), path=value, why=_(where))
    if where in (_ITSELF, _ABOVE, _HOME):  # a recursive permission change leaves the files the workspace keeps
        return Reason(text, OTHER if verb.startswith("recursive permission change") else BEYOND, path)
    return Reason(text, OUTSIDE, Path(os.path.realpath(_above_glob(path))))


def _path(value: str, state: State, dialect: str) -> Path | None:
    """The absolute path a word names, or None for a Windows path on a POSIX machine (outside)."""
    if sys.platform != "win32":
        if WINDOWS_ABSOLUTE.match(value) and dialect != "posix":
            return None
        if dialect != "posix":
            value = value.replace("\\", "/")
    elif dialect == "posix" and re.match(r"^/[A-Za-z](/|$)", value):  # Git Bash: /c/Users -> C:/Users
        value = f"{value[1]}:/{value[3:]}"
    elif dialect == "posix" and re.match(r"^/tmp(/|$)", value):  # Git Bash mounts the user's temp folder there
        value = tempfile.gettempdir() + value[4:]
    path = Path(value)
    if not path.is_absolute():
        if state.cwd is None:
            return Path(os.path.normpath(state.workspace / ".." / value)) if ".." in value else None
        path = state.cwd / path
    return _through_links(Path(os.path.normpath(path)), value, state)


def _through_links(path: Path, value: str, state: State) -> Path:
    """Where a path leads through a link made earlier in the line: `x/` and `x/docs` follow it, `x` alone
    names the link itself (which is all `rm -rf x` deletes)."""
    for link, points_to in state.links.items():
        if path.is_relative_to(link) and (path != link or value.endswith(("/", "\\", "/."))):
            return Path(os.path.normpath(points_to / path.relative_to(link)))
    return path


def remember_link(args: list[Word], operands: list[Word], link: Word | None, state: State) -> None:
    """`ln -s TARGET LINK`: later paths through LINK lead to TARGET (relative to the link's folder)."""
    symbolic = any(re.fullmatch(r"-[A-Za-z]*s[A-Za-z]*|--symbolic", word_value(w, state) or "") for w in args)
    if not symbolic or link is None or len(operands) != 2:
        return
    target, where = word_value(operands[0], state), word_value(link, state)
    link_path = _path(where, state, "posix") if where else None
    if target is None or link_path is None:
        return
    if link_path.is_dir() and not link_path.is_symlink():
        link_path = link_path / Path(target).name
    state.links[link_path] = Path(os.path.normpath(link_path.parent / os.path.expanduser(target)))


# Where a target lies, kept untranslated to be compared; translated in the reason.
_ITSELF, _ABOVE = N_("the workspace itself"), N_("a folder that holds the workspace")
_HOME = N_("the home folder, which the sandbox lets commands write here")


def _above_glob(path: Path) -> Path:
    """The part of `path` before its first pattern: what a sandbox's policy is asked about."""
    parts = path.parts
    first = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), None)
    return path if first is None else Path(*parts[:first]) if first else Path(path.anchor)


def _where(path: Path, glob: bool, state: State, spelled_in_temp: bool) -> str | None:
    """Why deleting or overwriting `path` needs a yes: outside, the workspace, or above it."""
    parts = path.parts
    first_glob = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), None) if glob else None
    everything = False
    if first_glob is not None:
        pattern = parts[first_glob]
        everything = first_glob == len(parts) - 1 and set(pattern) <= set("*?.[]!") and "*" in pattern
        path = Path(*parts[:first_glob]) if first_glob else Path(path.anchor)
    root = state.workspace
    if path == root or root.is_relative_to(path):
        if path == root and first_glob is not None and not everything:
            return None  # *.pyc in the workspace: some of its files
        return _ITSELF if path == root else _ABOVE
    real = Path(os.path.realpath(path))
    if state.policy is not None and real != root and state.policy.may_write(real):
        # Confined, the command may write there: the sandbox's policy says so; but a home folder
        # that lies in a writable place (a temp folder) is never scratch space, nor is what it holds.
        home = Path(os.path.realpath(state.home))
        granted_whole = any(home.is_relative_to(w) for w in state.policy.writable if w != root)
        at_home = real == home or home.is_relative_to(real) or (real.is_relative_to(home) and granted_whole)
        return _HOME if at_home and not real.is_relative_to(root) else None
    if path.is_relative_to(root):
        if real == root or not real.is_relative_to(root):
            return N_("it leads out of the workspace through a symlink")
        return None
    if state.policy is None and spelled_in_temp and _scratch(path, state):
        return None
    return N_("outside the workspace")


def _history(path: Path, state: State) -> bool:
    """`.git` itself, or its objects, refs or logs: deleting them loses commits (a lock file does not)."""
    git = state.workspace / ".git"
    return path == git or any(path.is_relative_to(git / part) for part in ("objects", "refs", "logs", "HEAD"))


def _git_programs(path: Path, state: State) -> str | None:
    """`.git/config` and `.git/hooks/*` name programs that git runs by itself (fsmonitor at every
    status, filters, aliases; a hook at the next commit), with the user's rights, in later sessions
    too: a change to them is never routine."""
    git = state.workspace / ".git"
    if path == git / "config" or path.is_relative_to(git / "config.worktree"):
        return N_("git's configuration, which names programs git runs by itself")
    if path.is_relative_to(git / "hooks"):
        return N_("a git hook, a program git runs at the next commit, checkout or push")
    return None


def _spelled_in_temp(value: str, state: State) -> bool:
    """Written as a temp path (`/tmp/x`, `$TMPDIR/x`), not reached from elsewhere (`~`, `..`)."""
    temps = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()), "/tmp", "/var/tmp"}
    return ".." not in Path(value).parts and any(value.startswith(t.rstrip("/\\") + sep) for t in temps
                                                 for sep in "/\\")


def _scratch(path: Path, state: State) -> bool:
    """The system temp folder's contents are scratch space, unless they hold the user's home or lie
    in it (a home inside /tmp); Windows' temp folder itself lies in the home (AppData\\Local\\Temp)."""
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(state.home))
    in_home = real.is_relative_to(home) and not temp.is_relative_to(home)
    return real != temp and real.is_relative_to(temp) and not (real == home or home.is_relative_to(real) or in_home)


def loop_variable(name: str, items: list[Word], state: State) -> None:
    """`for f in a *.pyc ~/x`: `$f` stands for the item a delete would be asked about, if any (so
    `rm $f` in the loop is judged on it), else for the first: every item is as safe as that one."""
    values = [word_value(word, state) for word in items]
    if not name or any(v is None for v in values):
        state.variables[name] = None
        return
    risky = [v for word, v in zip(items, values, strict=True)
             if target_reason("writes to", word, state, state.dialect)]
    state.variables[name] = (risky or values)[0]


def change_dir(args: list[Word], state: State) -> None:
    values = [word_value(w, state) for w in args if (w.literal or "") not in ("-L", "-P", "-e", "--")]
    if not values:
        state.cwd = state.home
        return
    target = values[0]
    if target is None or target == "-":
        state.cwd = None
        return
    path = _path(target, state, "posix")
    state.cwd = path


def is_existing_path(value: str, state: State) -> bool:
    if state.cwd is None or not value or any(c in value for c in "*?["):
        return any(c in value for c in "*?[")
    return (state.cwd / value).exists() and not (state.cwd / ".git" / "refs" / "heads" / value).exists()
