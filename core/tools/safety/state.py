"""The judging state of one command line, and the command vocabularies every dialect shares."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.cancel import Cancel
from core.i18n import N_, _
from core.sandbox.policy import Policy
from core.tools.cmdline import Simple, Word

INTERRUPTED = N_("interrupted before it could be judged")
# Longer command lines are not read: judging one costs time in proportion to its length, and no
# command typed as one line needs more (a generated one goes through a script file).
MAX_JUDGED_CHARS = 64 * 1024
# Judging is linear in the line's length, but a path costs file-system lookups: a line naming
# thousands of them stops here rather than hold the turn.
MAX_JUDGING_SECONDS = 2.0
_TOO_LONG = N_("names more than can be judged in {seconds:.0f} s before it runs")
TOO_LONG_TO_JUDGE = _TOO_LONG.format(seconds=MAX_JUDGING_SECONDS)
MAX_DEPTH = 6  # nested sh -c / eval / $(...) levels before giving up (and asking)

FORK_BOMB = re.compile(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:")
DEVICE = re.compile(r"^/dev/(?:sd|nvme|hd|disk|mmcblk|vd|xvd|md|dm-|mapper/)")
# bash opens a connection for these, not a file: /dev/tcp/HOST/PORT, /dev/udp/HOST/PORT
NETWORK_REDIRECT = re.compile(r"^/dev/(?P<proto>tcp|udp)/(?P<host>[^/]+)/(?P<port>[^/]+)$")
HARMLESS_SINKS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "$null", "nul"}
WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*:|\\\\|//)")

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"}
INTERPRETERS = {"python": "-c", "python2": "-c", "python3": "-c", "py": "-c", "pypy": "-c", "pypy3": "-c",
                 "node": "-e", "nodejs": "-e", "deno": "eval", "bun": "-e", "perl": "-e", "ruby": "-e",
                 "php": "-r", "lua": "-e", "osascript": "-e"}
_CODE_DANGER = re.compile(
    r"rmtree|\bremove\s*\(|\bunlink|\brmdir|\brm\s*\(|rmSync|\brm_rf\b|\brm_r\b|FileUtils\.rm|File\.delete"
    r"|\brename|\breplace\s*\(|shutil\.move|\bmove\s*\(|truncate|\bsystem\b|subprocess|Popen|\bspawn|execSync"
    r"|child_process|\bexec\s*\(|\beval\s*\(|`|\bos\.exec|\bchmod|\bchown|Remove-Item|\bkill|\bqx\b"
    r"|__import__|\bgetattr|write_text|write_bytes|writeFile", re.IGNORECASE)
# `open(path, 'w')`: the pieces found in one pass (a single regex backtracks over every `open(` that
# has no `)`, quadratic in the line's length).
_OPEN_PIECES = re.compile(r"""open\s*\(|\)|,\s*(?:mode\s*=\s*)?['"][rbt]*[wax+]""", re.IGNORECASE)


def code_danger(code: str) -> str | None:
    """The text in a one-liner that deletes, writes or runs something, or None."""
    match = _CODE_DANGER.search(code)
    if match:
        return match.group()
    opened: int | None = None  # where the `open(` not yet closed by `)` starts
    for piece in _OPEN_PIECES.finditer(code):
        if piece.group() == ")":
            opened = None
        elif not piece.group().startswith(","):
            opened = piece.start() if opened is None else opened
        elif opened is not None:
            found = code[opened:piece.end()]
            return found if len(found) <= 80 else f"{found[:40]}…{found[-30:]}"
    return None
WRAPPERS_WITH_ARGS = {  # a command that runs the rest of its argv, and its options that take a value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"},
    "doas": {"-u", "-C"}, "nice": {"-n", "--adjustment"}, "nohup": set(), "time": {"-f", "-o"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"}, "command": set(), "exec": {"-a"}, "builtin": set(),
    "stdbuf": {"-i", "-o", "-e"}, "ionice": {"-c", "-n", "-p"}, "chrt": set(), "setsid": set(),
    "caffeinate": set(), "unbuffer": set(), "strace": {"-o", "-e", "-p"}, "watch": {"-n", "-d"},
    "busybox": set(), "fakeroot": set(), "unshare": set(), "nsenter": {"-t", "--target"}, "npx": {"-p", "--package"},
    "runuser": {"-u", "-g", "-G", "--user", "--group"}, "systemd-run": {"-p", "--property", "-u", "--unit", "-E",
                                                                    "--setenv", "--uid", "--gid", "-M", "--machine"},
    "then": set(), "do": set(), "else": set(), "elif": set(), "if": set(),
    "while": set(), "until": set(), "!": set(), "{": set(), "}": set(), "&": set(), ".": set(),
}
XARGS_ARGS = {"-I", "-i", "-n", "-P", "-d", "-E", "-e", "-L", "-l", "-s", "-a", "--max-args", "--max-procs",
               "--delimiter", "--arg-file", "--replace"}


@dataclass
class State:
    workspace: Path
    cwd: Path | None
    home: Path
    env: dict[str, str]
    variables: dict[str, str | None] = field(default_factory=dict)
    depth: int = 0
    dialect: str = "posix"
    upstream: Simple | None = None  # the command whose output is piped into the one being judged
    # Symlinks made earlier in this command line (link -> what it points to). Shared with nested
    # shells: a link is on disk for every process, while variables and cwd are per process.
    links: dict[Path, Path] = field(default_factory=dict)
    # The gate's own entry points, so that the dialect handlers can judge nested code without
    # importing the gate (which imports them).
    script: Callable[[str, str, State], str | None] = field(default=lambda *_: None, repr=False)
    argv: Callable[[list[Word], Simple, State], str | None] = field(default=lambda *_: None, repr=False)
    cancel: Cancel | None = field(default=None, repr=False)  # Esc or Ctrl-C: stop judging at once
    # The sandbox's policy when the command will run confined: it alone says what lies outside.
    policy: Policy | None = field(default=None, repr=False)
    deadline: float = field(default_factory=lambda: time.monotonic() + MAX_JUDGING_SECONDS, repr=False)

    def stopped(self) -> str | None:
        """Why judging must stop now: the user interrupted, or this line takes too long to judge."""
        if self.cancel is not None and self.cancel.cancelled:
            return _(INTERRUPTED)
        if time.monotonic() > self.deadline:
            return _(_TOO_LONG).format(seconds=MAX_JUDGING_SECONDS)
        return None


# A command's judge: (its name, its arguments, the command, the state) -> why it must ask, or None.
Handler = Callable[[str, list[Word], Simple, State], str | None]


@dataclass
class Handlers:
    """The judges of commands, registered by the dialect modules as they load: `by_name` for the
    commands their tables name (posix.py), `by_dialect` for whatever else a dialect runs (windows.py,
    for PowerShell and cmd). The gate (__init__.py) only looks them up."""

    by_name: dict[str, Handler] = field(default_factory=dict)
    by_dialect: dict[str, Handler] = field(default_factory=dict)


HANDLERS = Handlers()


def nested(state: State) -> State:
    return State(state.workspace, state.cwd, state.home, state.env, dict(state.variables), state.depth + 1,
                  state.dialect, links=state.links,
                  script=state.script, argv=state.argv, cancel=state.cancel, policy=state.policy,
                  deadline=state.deadline)

DELETERS = {"rm", "rmdir", "unlink", "shred", "truncate", "mv", "srm", "wipe"}
PS_DELETE = {"remove-item", "rm", "del", "erase", "rd", "rmdir", "ri", "clear-content", "clc",
              "clear-item", "cli", "remove-itemproperty", "rp"}
PS_MOVE = {"move-item", "mv", "move", "mi", "rename-item", "ren", "rni"}
PS_LISTERS = {"get-childitem", "gci", "ls", "dir", "get-item", "gi"}
PS_VALUE_PARAMS = {"path", "literalpath", "destination", "filter", "include", "exclude", "erroraction", "ea",
                    "warningaction", "credential", "stream", "value", "encoding", "filepath", "itemtype", "name",
                    "newname", "target", "argumentlist", "scriptblock", "computername", "depth"}
