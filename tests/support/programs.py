"""Programs a test runs that a fresh machine may lack: the test skips and names them, never fails.

The README's set-up gives Python and pip; `.ci/run` adds what the suite needs from apt (tmux,
ripgrep, bubblewrap, wine). Anything else a command line starts (`ruby`, GNU `parallel`, …) is
looked up here, so a corpus can hold spellings from any tool without tying the suite to a machine.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

import pytest

from core.tools.cmdline import Simple, Unparsed, parse_posix

# Words that run what follows them: the program is the next word that is not an option.
_RUNNERS = {"env", "nohup", "nice", "time", "timeout", "xargs", "parallel", "setsid", "stdbuf", "command", "exec"}
# Their options that take the next word as a value.
_WITH_VALUE = {"-u", "-C", "-n", "-s", "-k", "-I", "-P", "-d", "-L", "-j", "-a", "-E"}


def programs(command: str) -> list[str]:
    """The programs a POSIX command line starts, substitutions included, in order of appearance."""
    try:
        simples = parse_posix(command)
    except Unparsed:
        return []
    found: list[str] = []
    for simple in simples:
        found += _programs_of(simple)
    return list(dict.fromkeys(found))


def _programs_of(simple: Simple) -> list[str]:
    found: list[str] = []
    for body in simple.substitutions:
        found += programs(body)
    words = [w.literal for w in simple.words]
    while words and words[0] is not None and "=" in words[0] and not words[0].startswith("="):
        words.pop(0)  # NAME=value assignments before the program
    if not words or words[0] is None:
        return found
    found.append(words[0])
    rest = iter(words[1:])
    while found[-1] in _RUNNERS:
        for word in rest:
            if word in _WITH_VALUE:
                next(rest, None)
            elif word is not None and not word.startswith("-") and "=" not in word and not word[0].isdigit():
                found.append(word)
                break
        else:
            break
    return found


@functools.cache
def _is_builtin(name: str) -> bool:
    """bash's own words (builtins, keywords, `[`): no program to look up."""
    done = subprocess.run(["bash", "-c", 'type -t -- "$1"', "type", name], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() in ("builtin", "keyword")


def missing_programs(command: str) -> list[str]:
    """The programs `command` starts that are neither on PATH, nor part of the shell, nor an alias or
    function the command line defines itself."""
    defined = set(re.findall(r"\balias\s+([\w.-]+)=", command)) | set(re.findall(r"([\w.-]+)\s*\(\)", command))
    return [name for name in programs(command)
            if "/" not in name and name not in defined and shutil.which(name) is None and not _is_builtin(name)]


def require_programs(command: str) -> None:
    """Skip the calling test, naming what is missing, when `command` needs a program not installed."""
    if missing := missing_programs(command):
        pytest.skip(f"needs {', '.join(missing)}, which is not installed: {command[:60]!r}")
