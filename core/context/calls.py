"""What a tool call does to the workspace: whether a shell command only looks, and a call's identity.

Clearing an old result is only safe when the call can be repeated to get it back: "only looks" is
judged conservatively (known viewers, no redirection, no substitution; `sed -i`, `sort -o`,
`git diff --output`, `find -fprint` write). Repeats are compared by `call_key`.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from ..session.items import FunctionCall

MUTATING_TOOLS = frozenset({"write_file", "edit_file", "multi_edit"})
SHELL_TOOL = "run_shell"

_VIEWERS = {"cat", "head", "tail", "less", "more", "nl", "sed", "wc", "file", "stat", "diff", "cmp"}
_LISTERS = {"ls", "dir", "tree", "find", "du", "df", "which", "whereis", "type", "realpath"}
_SEARCHERS = {"grep", "egrep", "fgrep", "rg"}
_INFO = {"sort", "uniq", "cut", "echo", "pwd", "whoami", "date", "printenv", "dirname", "basename"}
_POWERSHELL = {"get-content", "get-childitem", "select-string", "get-location"}
_READ_ONLY_PROGRAMS = frozenset({"git", *_VIEWERS, *_LISTERS, *_SEARCHERS, *_INFO, *_POWERSHELL})
_READ_ONLY_GIT = frozenset(
    {"status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "grep", "shortlog"}
)
_WRITING_FIND_ACTIONS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_SED_IN_PLACE = re.compile(r"^-[A-Za-z]*i|^--in-place")  # -i, -ni, -i.bak, --in-place=.orig
_OUTPUT_OPTION = re.compile(r"^(?:-o|--output)(?:=|$)|^-[A-Za-z]*o")  # sort -o f, sort -uo f, --output=f
_HARMLESS_REDIRECTS = re.compile(r"\d?>\s*/dev/null|\d?>&\d|\d?>\s*nul\b", re.IGNORECASE)
_SEGMENTS = re.compile(r"&&|\|\||[;|&\n]")


def arguments(call: FunctionCall) -> dict[str, Any]:
    """The call's arguments as a dict ({} when the model wrote something that is not a JSON object)."""
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def call_key(call: FunctionCall) -> tuple[str, str]:
    """Tool name and arguments, normalised so that key order and spacing do not hide a repeat."""
    try:
        normal = json.dumps(json.loads(call.arguments), sort_keys=True, ensure_ascii=False)
    except ValueError:
        normal = call.arguments.strip()
    return call.name, normal


def is_read_only_command(command: str) -> bool:
    """True only for commands that obviously just look: known viewers, no redirection, no substitution."""
    command = _HARMLESS_REDIRECTS.sub("", command)
    if not command.strip() or "`" in command or "$(" in command or ">" in command:
        return False
    return all(_read_only_segment(segment) for segment in _SEGMENTS.split(command) if segment.strip())


def _read_only_segment(segment: str) -> bool:
    try:
        words = shlex.split(segment)
    except ValueError:
        return False
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):  # FOO=bar cmd
        words.pop(0)
    if not words:
        return True
    program = words[0].rsplit("/", 1)[-1].lower()
    if program not in _READ_ONLY_PROGRAMS:
        return False
    if program == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return sub in _READ_ONLY_GIT and not any(w.startswith("--output") for w in words[1:])
    if program == "find":
        return not _WRITING_FIND_ACTIONS.intersection(words)
    if program == "sed":
        return not any(_SED_IN_PLACE.match(w) for w in words[1:])
    if program == "sort":
        return not any(_OUTPUT_OPTION.match(w) for w in words[1:])
    return True
