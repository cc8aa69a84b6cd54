"""What tool a command line ran, seen through wrappers (`npx`, `uv run`, `python -m`, `sudo`...).

Family detection starts here: `npx jest --ci`, `cd app && python -m pytest -q 2>&1 | tee log` and
`FORCE_COLOR=1 poetry run pytest` all ran pytest or jest, and the program name says so.
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
                   "bunx", "pnpx", "doas", "unbuffer", "caffeinate", "timeout", "xargs"}
# Wrappers with a subcommand before the program: `uv run pytest`, `poetry run pytest`, `npm exec jest`.
_RUN_WRAPPERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
                 "pnpm": "exec", "yarn": "exec", "bundle": "exec", "conda": "run", "mamba": "run", "npm": "exec"}
_DLX = {"pnpm": "dlx", "yarn": "dlx"}
_NUMBER_RE = re.compile(r"^\d+(\.\d+)?[smhd]?$")
# shlex grows each token a character at a time (quadratic): a longer line is split on spaces.
MAX_LEXED_CHARS = 16 * 1024


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
    output, `pytest 2>&1 | tail -30` pytest's.
    """
    visible: list[tuple[str, ...]] = []
    for pipeline in _split(raw):
        argvs = [a for a in (_unwrap(s) for s in pipeline) if a]
        while len(argvs) > 1 and argvs[-1][0] in _PASS_THROUGH:
            argvs.pop()
        visible += argvs[-1:]
    return Command(raw, tuple(visible))


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
        elif prog.startswith("python") and rest[:1] == ["-m"] and len(rest) > 1:
            args = rest[1:]
        else:
            return (prog, *rest)
    return tuple(args)
