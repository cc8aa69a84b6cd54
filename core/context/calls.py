"""What a tool call does to the workspace: whether it may change state, and its identity.

Shaping needs this twice: a re-read is only a duplicate, and a repeated call only a loop, when
nothing could have changed the workspace in between. "Could have" is judged conservatively: any
write or edit, and any shell command that is not obviously read-only.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from ..items import FunctionCall

MUTATING_TOOLS = frozenset({"write_file", "edit_file"})
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


def changes_state(call: FunctionCall) -> bool:
    """True when the call may have changed the workspace (writes, edits, non-read-only shell)."""
    if call.name in MUTATING_TOOLS:
        return True
    if call.name == SHELL_TOOL:
        return not is_read_only_command(str(arguments(call).get("command", "")))
    return False


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
