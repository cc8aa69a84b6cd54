"""Commands known to only read: in `ask` mode (no sandbox) they run unasked, everything else asks.

Judged on the parsed command line, every simple command of it: a known reader, with no option that
writes or runs something else, no redirect to a file and no command substitution that is not itself
read-only. What is not known is not read-only: the list errs on the side of asking.
"""

from __future__ import annotations

from core.tools.cmdline import PARSERS, Simple, Unparsed
from core.tools.safety.state import HARMLESS_SINKS, MAX_JUDGED_CHARS

# Readers, and the options that make them write or run something (any option when the value is None).
_READERS: dict[str, frozenset[str]] = {name: frozenset() for name in (
    "ls", "dir", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack", "tree", "pwd",
    "echo", "which", "where", "type", "file", "stat", "du", "df", "diff", "cmp", "cut", "tr", "nl", "date",
    "whoami", "id", "uname", "hostname", "printenv", "basename", "dirname", "realpath", "readlink",
    "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "jq", "true", "false", "test", "[", "seq",
    "column", "od", "hexdump", "strings", "nproc", "free", "uptime", "ps", "locale", "less", "more",
    # PowerShell and cmd.exe
    "get-childitem", "gci", "get-content", "gc", "select-string", "sls", "get-location", "gl",
    "get-item", "gi", "test-path", "measure-object", "write-output", "write-host", "resolve-path",
    "get-command", "gcm", "findstr", "get-date",
)}
_READERS.update({
    "find": frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}),
    "sort": frozenset({"-o", "--output"}),
    "xxd": frozenset({"-r", "-revert"}),
    "sed": frozenset({"-i", "--in-place", "w", "W"}),  # and never a script with `w`/`e` (checked below)
})
# Tools whose subcommand says whether they only read.
_READ_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep",
                      "describe", "shortlog", "cat-file", "reflog", "whatchanged", "version", "help"}),
    "pip": frozenset({"list", "show", "freeze", "check", "--version", "-V", "help"}),
    "pip3": frozenset({"list", "show", "freeze", "check", "--version", "-V", "help"}),
    "npm": frozenset({"ls", "list", "view", "outdated", "--version", "-v", "help"}),
    "cargo": frozenset({"--version", "-V", "tree", "metadata", "help"}),
    "go": frozenset({"version", "env", "list", "doc", "help"}),
}
_KEYWORDS = {"do", "then", "else", "elif", "if", "while", "until", "!", "{", "}", "done", "fi", "esac", "for",
             "select", "case", "time"}
# Interpreters and compilers asked only for their version.
_VERSION_ONLY = {"python", "python3", "py", "node", "ruby", "perl", "java", "javac", "gcc", "cc", "clang",
                 "make", "cmake", "rustc", "dotnet", "php", "go", "bash", "sh", "pwsh", "powershell"}


def is_read_only(command: str, dialect: str) -> bool:
    """True when every command of the line is known to only read (see the module's docstring)."""
    if len(command) > MAX_JUDGED_CHARS:
        return False
    try:
        commands = PARSERS[dialect](command)
    except Unparsed:
        return False
    return bool(commands) and all(_reads(simple, dialect) for simple in commands)


def _reads(cmd: Simple, dialect: str) -> bool:
    if any(not is_read_only(body, "powershell" if dialect == "powershell" else "posix") for body in cmd.substitutions):
        return False
    for op, target in cmd.redirects:
        if op.startswith("<") or op in (">&", "<&") or (target.literal or "").lstrip("-").isdigit():
            continue
        if (target.literal or "").lower() not in HARMLESS_SINKS:
            return False
    words = [w.literal for w in cmd.words]
    while words and words[0] in _KEYWORDS:  # `do wc -l "$f"`, `then cat x`: the command after the keyword
        if words[0] in ("for", "select", "case"):
            return True  # the loop's header only names its items; its body is judged command by command
        words = words[1:]
    if not words:
        return True  # `done`, `fi`, `}`
    if words[0] is None:  # a command whose name is only known when it runs
        return False
    name = words[0].lower().rsplit("/", 1)[-1].rsplit("\\", 1)[-1].removesuffix(".exe")
    if any(w is None for w in words[1:]) and (name not in _READERS or _READERS[name]):
        return False  # an argument only known when it runs could be any option
    args = [w for w in words[1:] if w is not None]
    if name in _READ_SUBCOMMANDS:
        sub = next((a for a in args if not a.startswith("-")), None) if name != "git" else _git_sub(args)
        return (sub or (args[0] if args else "")) in _READ_SUBCOMMANDS[name]
    if name in _VERSION_ONLY:
        return args in (["--version"], ["-V"], ["-v"], ["version"])
    if name not in _READERS:
        return False
    writers = _READERS[name]
    if any(a in writers or a.split("=", 1)[0] in writers for a in args):
        return False
    if name == "sed":  # a script that writes (w FILE) or runs (e) is no reader
        return not any(";w " in a or a.startswith("w ") or "e " in a for a in args)
    return name != "echo" or dialect != "cmd" or ">" not in " ".join(args)


def _git_sub(args: list[str]) -> str | None:
    """git's subcommand after its global options (`-C dir`, `-c k=v`, `--no-pager`)."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-C", "-c", "--git-dir", "--work-tree") else rest[1:]
    if rest[:1] in (["branch"], ["tag"], ["remote"], ["stash"], ["config"]):
        return _listing(rest)
    return rest[0] if rest else None


def _listing(rest: list[str]) -> str | None:
    """`git branch`, `git tag -l`, `git remote -v`, `git stash list`, `git config --get`: they list."""
    sub, options = rest[0], rest[1:]
    listing = {
        "branch": not options or set(options) <= {"-a", "-r", "-v", "-vv", "--list", "--all", "--show-current"},
        "tag": not options or options[:1] in (["-l"], ["--list"]),
        "remote": not options or options in (["-v"], ["show"]) or options[:1] == ["get-url"],
        "stash": options[:1] in (["list"], ["show"]),
        "config": bool(options) and options[0] in ("--get", "--list", "-l", "--get-all"),
    }[sub]
    return "status" if listing else None
