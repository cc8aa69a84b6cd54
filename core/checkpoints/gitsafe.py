"""Running git for the agent's own bookkeeping without running any program a config names.

A repository's `.git/config` is ordinary file content the model's commands can write, and so are
the user's `~/.gitconfig` and the hooks folder. git runs programs from them on its own: the
fsmonitor hook on every index read, filter drivers (`.gitattributes` `filter=`) when it compares a
file with the index, hooks, pagers, editors, askpass, textconv and external diff. The snapshots
call git around every command, so each of those would run with the agent's rights, in later
sessions too. Here the system and global config are not read, and every program-valued setting
the repository's config could hold is overridden on the command line, which git reads last.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from core.secrets import scrub_env

# Settings that name a program, or make git start one, set to what runs nothing.
BASE_OPTIONS = ("core.quotepath=false", "core.fsmonitor=false", f"core.hooksPath={os.devnull}", "core.pager=cat",
                "core.askPass=", "core.editor=", "sequence.editor=", "core.sshCommand=", "diff.external=",
                "gc.auto=0", "maintenance.auto=false", "core.untrackedCache=false")
# Per-driver settings that run a program; `required` must go too, or git stops at a disabled filter.
_DRIVER_KEYS = {"filter": ("clean", "smudge", "process", "required=false"), "diff": ("textconv", "command"),
                "merge": ("driver",)}
_DRIVER = re.compile(r"(filter|diff|merge)\.(.+)\.[^.]+")
# Environment variables that name a program git would start, or config beyond the repository's.
_PROGRAM_VARIABLES = ("GIT_PAGER", "PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "GIT_ASKPASS",
                      "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND",
                      "GIT_CONFIG", "GIT_CONFIG_SYSTEM")


def safe_env() -> dict[str, str]:
    """The environment for the agent's git: no secrets, no system or global config, no programs."""
    env = scrub_env(os.environ)
    for name in _PROGRAM_VARIABLES:
        env.pop(name, None)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_OPTIONAL_LOCKS": "0",
                "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    return env


def user_excludes_file(git: str, cwd: Path) -> str | None:
    """The ignore file the user's global config names (a list of patterns, not a program): snapshots
    keep honouring it although that config is not read. None when it names none."""
    env = {**scrub_env(os.environ), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    try:
        done = subprocess.run([git, "config", "--global", "--includes", "--path", "--get", "core.excludesFile"],
                              cwd=cwd, capture_output=True, env=env, check=False)
    except OSError:
        return None
    path = done.stdout.decode("utf-8", "surrogateescape").strip()
    return path if done.returncode == 0 and path else None


def driver_options(config_listing: bytes) -> list[str]:
    """`-c` values that switch off every filter, diff and merge driver in `git config -z --get-regexp`
    output (the repository's config and what it includes)."""
    drivers: set[tuple[str, str]] = set()
    for entry in config_listing.decode("utf-8", "surrogateescape").split("\0"):
        match = _DRIVER.fullmatch(entry.split("\n", 1)[0])
        if match:
            drivers.add((match.group(1), match.group(2)))
    options = []
    for kind, name in sorted(drivers):
        for key in _DRIVER_KEYS[kind]:
            options.append(f"{kind}.{name}.{key}" if "=" in key else f"{kind}.{name}.{key}=")
    return options


def git_argv(git: str, options: list[str] | tuple[str, ...], *args: str) -> list[str]:
    """`git` (the program's path) with `-c` for each option, then `args`."""
    argv = [git]
    for option in options:
        argv += ["-c", option]
    return [*argv, *args]
