r"""What tool a command line ran, seen as the shell sees it.

Family detection starts here: `npx jest --ci`, `cd app && python -m pytest -q 2>&1 | tee log` and
`FORCE_COLOR=1 poetry run pytest` all ran pytest or jest, and the program name says so. A command
substitution's output became arguments, not output (`javac $(find src -name '*.java')` printed what
javac printed); `bash -c '…'`, `cmd /c …` and `powershell -Command …` ran the command in their
argument; `cd`, `export` and `set -e` print nothing; `C:\py311\python.exe -m pytest` is pytest.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

_PIPES = {"|", "|&"}
_SEPARATORS = {"||", "&&", ";", "&", "(", ")", ";;"}
# Filters that show what the command before them printed (a part of it, or sorted).
_PASS_THROUGH = {"tee", "head", "tail", "cat", "less", "more", "sort", "uniq", "ts", "pv"}
_REDIRECTS = {">", ">>", "<", "<<", ">&", "&>", "&>>", "<&", ">|", "<<<"}
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VERSION_SUFFIX_RE = re.compile(r"(?<=[a-z])[\d.]+$")  # python3.11 -> python, pip3 -> pip

# Wrappers whose first non-option argument is the real program.
_PLAIN_WRAPPERS = {"sudo", "env", "time", "nice", "nohup", "stdbuf", "xvfb-run", "command", "exec", "npx",
                   "bunx", "pnpx", "doas", "unbuffer", "caffeinate", "timeout", "xargs", "uvx", "call", "start"}
# Shells that run the command line in an argument: `bash -c '…'`, `cmd /c …`, `powershell -Command …`.
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "fish", "busybox"}
_SHELL_FLAGS = {"-c", "-lc", "-ic", "-ec", "-xc", "-cl"}
_CMD_FLAGS = {"/c", "/k", "/r"}
_POWERSHELLS = {"powershell", "pwsh"}
_POWERSHELL_FLAGS = {"-command", "-c", "/command", "/c"}
# Builtins and file commands that print nothing when they work: not the program whose output this is.
_SILENT = {"cd", "pushd", "popd", "export", "unset", "source", ".", "mkdir", "rm", "rmdir", "cp", "mv", "touch",
           "true", ":", "chmod", "chown", "ln", "trap", "sleep", "wait", "cls", "clear", "setlocal", "endlocal",
           "rem", "chcp", "set-location", "sl", "push-location", "pop-location", "md", "del", "copy", "move",
           "shopt", "ulimit", "umask", "alias", "activate", "deactivate"}
# `set -euo pipefail` and cmd's `set NAME=value` print nothing; a bare `set` lists variables.
_SILENT_WITH_ARGS = {"set", "@echo", "echo"}
_WINDOWS_PATH_RE = re.compile(r"(?:^|[\s\"'=])(?:[A-Za-z]:\\|\.\\|\\\\)|\\[\w.-]+\.(?:exe|bat|cmd|ps1)\b", re.I)
# Wrappers with a subcommand before the program: `uv run pytest`, `poetry run pytest`, `npm exec jest`.
_RUN_WRAPPERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
                 "pnpm": "exec", "yarn": "exec", "bundle": "exec", "conda": "run", "mamba": "run", "npm": "exec"}
_DLX = {"pnpm": "dlx", "yarn": "dlx"}
_NUMBER_RE = re.compile(r"^\d+(\.\d+)?[smhd]?$")
# shlex grows each token a character at a time (quadratic): a longer line is split on spaces.
MAX_LEXED_CHARS = 16 * 1024
MAX_NESTING = 4  # `bash -c "cmd /c …"` and deeper


@dataclass(frozen=True)
class Command:
    """A parsed command line: one argv per simple command, wrappers removed, programs normalised."""

    raw: str
    segments: tuple[tuple[str, ...], ...]

    @property
    def programs(self) -> tuple[str, ...]:
        return tuple(seg[0] for seg in self.segments if seg)

    def runs(self, *names: str) -> bool:
        return any(p in names for p in self.programs)

    def args(self, program: str) -> tuple[str, ...] | None:
        """The arguments of the first segment that runs `program`, or None."""
        for seg in self.segments:
            if seg and seg[0] == program:
                return seg[1:]
        return None

    def subcommand(self, program: str) -> str | None:
        """The first non-option argument of `program` (`git diff --stat` -> "diff")."""
        args = self.args(program)
        if not args:
            return None
        return next((a for a in args if not a.startswith("-")), None)


def parse_command(raw: str) -> Command:
    """The simple commands whose output reaches the terminal, wrappers removed.

    In a pipeline only the last command prints, unless it only passes lines through (`| tee log`,
    `| tail -50`, `| sort`): then the command before it does. `find . | xargs grep x` printed grep's
    output, `pytest 2>&1 | tail -30` pytest's. Commands that print nothing (`cd x &&`) are left out.
    """
    return Command(raw, _visible(raw, depth=0))


def _visible(raw: str, depth: int) -> tuple[tuple[str, ...], ...]:
    if _WINDOWS_PATH_RE.search(raw):  # backslashes are folder separators here, not escapes
        raw = raw.replace("\\", "/")
    visible: list[tuple[str, ...]] = []
    for pipeline in _split(_without_substitutions(raw)):
        argvs: list[tuple[str, ...]] = []
        for seg in pipeline:
            argv = _unwrap(seg)
            inner = _shell_argument(argv) if depth < MAX_NESTING else None
            if inner is not None:
                argvs += _visible(inner, depth + 1)
            elif argv:
                argvs.append(argv)
        while len(argvs) > 1 and argvs[-1][0] in _PASS_THROUGH:
            argvs.pop()
        visible += argvs[-1:]
    printing = [argv for argv in visible if not _silent(argv)]
    return tuple(printing or visible[-1:])


def _silent(argv: tuple[str, ...]) -> bool:
    program = argv[0]
    if program in _SILENT_WITH_ARGS:
        return (program == "set" and len(argv) > 1) or argv[1:2] == ("off",)
    return program in _SILENT or bool(_ASSIGNMENT_RE.match(program))


def _shell_argument(argv: tuple[str, ...]) -> str | None:
    """The command line a shell was given to run: `bash -c 'make test'`, `cmd /c dir /s`."""
    if not argv:
        return None
    program, args = argv[0], list(argv[1:])
    if program in _SHELLS:
        for k, arg in enumerate(args):
            if arg in _SHELL_FLAGS and k + 1 < len(args):
                return args[k + 1]
    elif program == "cmd":
        for k, arg in enumerate(args):
            if arg.lower() in _CMD_FLAGS:
                return " ".join(args[k + 1:])
    elif program in _POWERSHELLS:
        for k, arg in enumerate(args):
            if arg.lower() in _POWERSHELL_FLAGS:
                return " ".join(args[k + 1:])
    return None


def _without_substitutions(raw: str) -> str:
    """`$(…)`, `<(…)` and backquotes replaced by one word: their output became arguments, not output."""
    if "$(" not in raw and "`" not in raw and "<(" not in raw:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    quote = ""
    while i < n:
        char = raw[i]
        if quote == "'":
            out.append(char)
            quote = "" if char == "'" else quote
        elif char == "'" and not quote:
            quote = "'"
            out.append(char)
        elif char == '"':
            quote = "" if quote == '"' else '"'
            out.append(char)
        elif char == "\\" and i + 1 < n:
            out.append(raw[i:i + 2])
            i += 1
        elif raw.startswith(("$(", "<("), i) or char == "`":
            i = _substitution_end(raw, i)
            out.append("SUBST")
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _substitution_end(raw: str, start: int) -> int:
    """Where the substitution starting at `start` ends (past its `)` or closing backquote)."""
    if raw[start] == "`":
        end = raw.find("`", start + 1)
        return len(raw) if end < 0 else end + 1
    level, i, quote = 0, start + 1, ""
    while i < len(raw):
        char = raw[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            level += 1
        elif char == ")":
            level -= 1
            if level == 0:
                return i + 1
        i += 1
    return len(raw)


def _split(raw: str) -> list[list[list[str]]]:
    """Pipelines, each a list of simple commands' words (redirections left out)."""
    try:
        if len(raw) > MAX_LEXED_CHARS:
            raise ValueError("too long for shlex")
        lexer = shlex.shlex(raw, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes, or too long: a rough split still names the programs
        tokens = raw.split()
    pipelines: list[list[list[str]]] = [[[]]]
    segments = pipelines[-1]
    skip = False
    for tok in tokens:
        if skip:
            skip = False
        elif tok in _PIPES:
            segments.append([])
        elif tok in _SEPARATORS:
            segments = [[]]
            pipelines.append(segments)
        elif tok in _REDIRECTS or (tok[:1] in "<>&" and set(tok) <= set("<>&|")):
            skip = True
            if segments[-1] and segments[-1][-1].isdigit():
                segments[-1].pop()  # the "2" of "2>&1"
        else:
            segments[-1].append(tok)
    return pipelines


def _program(word: str) -> str:
    name = os.path.basename(word.replace("\\", "/")).lower()
    name = name.removesuffix(".exe").removesuffix(".cmd").removesuffix(".bat")
    return _VERSION_SUFFIX_RE.sub("", name) if name.startswith(("python", "pip", "gcc", "g++", "clang")) else name


def _unwrap(argv: list[str]) -> tuple[str, ...]:
    """Drop environment assignments and wrappers until the real program comes first."""
    args = list(argv)
    for _ in range(8):
        while args and _ASSIGNMENT_RE.match(args[0]):
            args.pop(0)
        if not args:
            return ()
        prog = _program(args[0])
        rest = args[1:]
        if prog in _PLAIN_WRAPPERS:
            # options, VAR=value, numbers (`timeout 60`, `nice -n 10`) and `xargs -I {}` come first
            while rest and (rest[0].startswith("-") or _ASSIGNMENT_RE.match(rest[0]) or _NUMBER_RE.match(rest[0])
                            or rest[0] == "{}"):
                rest.pop(0)
            args = rest
        elif prog in _RUN_WRAPPERS and rest and rest[0] in (_RUN_WRAPPERS[prog], _DLX.get(prog)):
            rest = rest[1:]
            while rest and rest[0].startswith("-"):
                rest.pop(0)
                if prog in ("conda", "mamba") and rest:
                    rest.pop(0)  # -n ENV
            args = rest
        elif (prog == "pipx" and rest[:1] == ["run"]) or (
                (prog.startswith("python") or prog == "py") and rest[:1] == ["-m"] and len(rest) > 1):
            args = rest[1:]
        else:
            return (prog, *rest)
    return tuple(args)
