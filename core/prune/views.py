"""Views and queries: commands whose output is the answer, not a log about doing something.

`cat`, `head`, `sed -n`, `grep`, `ls`, `git show`, `pip freeze`, `npm ls`, `env`... print what the
model asked to see. Hiding part of it as "noise" misleads and costs a turn, so such output is kept
whole up to the result budget, and only beyond it cut head and tail with a pointer to the rest.
Bulk listings (`find`, `tar -tv`, `du`) are not views: thousands of paths are summarised by the
listing family instead.
"""

from __future__ import annotations

import re

from core.prune.command import Command

# Programs whose output is data: files, matches, settings, inventories.
_VIEWERS = {
    "cat", "bat", "batcat", "head", "tail", "less", "more", "nl", "tac", "sed", "awk", "gawk", "cut", "column",
    "jq", "yq", "xxd", "od", "hexdump", "strings", "grep", "egrep", "fgrep", "rg", "ag", "ack", "ls", "dir", "exa",
    "eza", "lsd", "env", "printenv", "set", "export", "declare", "wc", "stat", "file", "readlink", "realpath",
    "which", "whereis", "type", "echo", "printf", "diff3", "comm", "join", "paste", "sort", "uniq", "get-content",
    "select-string", "get-childitem", "findstr", "ps", "df", "free", "uname", "id", "locale", "crontab",
    "get-item", "sqlite3", "psql", "mysql", "where", "gci", "gc", "sls", "get-itemproperty", "get-command",
    "get-process", "get-service", "get-location", "pwd",
}
_GIT_VIEWS = {"show", "blame", "grep", "branch", "tag", "remote", "config", "cat-file", "ls-tree", "ls-remote",
              "rev-parse", "describe", "stash", "worktree", "notes", "for-each-ref", "show-ref", "reflog"}
_PACKAGE_VIEWS = {"pip": {"list", "freeze", "show", "inspect", "index", "config"},
                  "npm": {"ls", "list", "la", "ll", "view", "info", "show", "outdated", "config", "explain", "why"},
                  "pnpm": {"ls", "list", "why", "outdated"}, "yarn": {"list", "info", "why", "outdated"},
                  "conda": {"list", "info"}, "cargo": {"tree", "metadata"}, "go": {"list", "env", "version"},
                  "poetry": {"show"}, "uv": {"tree"}, "gem": {"list"}, "brew": {"list", "info"},
                  "docker": {"ps", "images", "inspect", "logs"}, "kubectl": {"get", "describe", "logs"}}
_FEW_COMMITS_RE = re.compile(r"^-(?:n\s*)?(\d+)$|^--max-count=(\d+)$")
FEW_COMMITS = 5  # with their patches
MANY_COMMITS = 200  # without: a bounded history is a query


def is_view(command: Command) -> bool:
    """Whether the visible output is a view or a query, judged by the command that printed it."""
    segments = [seg for seg in command.segments if seg]
    return bool(segments) and all(_is_view(seg) for seg in segments)


def _is_view(seg: tuple[str, ...]) -> bool:
    program, args = seg[0], seg[1:]
    if program in _VIEWERS:
        return not (program == "sed" and any(a.startswith(("-i", "--in-place")) for a in args))
    sub = next((a for a in args if not a.startswith("-")), None)
    if program == "git":
        if sub in _GIT_VIEWS:
            return True
        if sub != "log":
            return False
        patches = "-p" in args or "--patch" in args
        return _few_commits(args, FEW_COMMITS if patches else MANY_COMMITS)
    views = _PACKAGE_VIEWS.get(program)
    return views is not None and sub in views


def _few_commits(args: tuple[str, ...], most: int) -> bool:
    """`git log -3`, `-n 20`, `--max-count=4`: as many commits as were asked for, if not more than `most`."""
    for k, a in enumerate(args):
        m = _FEW_COMMITS_RE.match(a)
        if m:
            return int(m.group(1) or m.group(2)) <= most
        if a == "-n" and k + 1 < len(args) and args[k + 1].isdigit():
            return int(args[k + 1]) <= most
    return False
