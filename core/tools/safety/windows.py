"""PowerShell cmdlets and cmd.exe built-ins: what they do to files."""

from __future__ import annotations

import re

from core.i18n import _
from core.tools.cmdline import Simple, Word
from core.tools.safety.state import HANDLERS, PS_DELETE, PS_MOVE, PS_VALUE_PARAMS, State, nested
from core.tools.safety.targets import command_name, piped_items, targets_reason, word_value

# -- PowerShell cmdlets and cmd.exe built-ins ----------------------------------------------------
_PS_WRITE = {"copy-item", "cp", "copy", "cpi", "set-content", "sc", "out-file", "add-content", "ac", "xcopy",
             "robocopy", "new-item", "ni"}
_PS_DISK = {"format-volume", "clear-disk", "initialize-disk", "remove-partition", "set-partition", "format"}
_PS_POWER = {"stop-computer", "restart-computer"}
_PS_EVAL = {"invoke-expression", "iex", "start-process", "saps", "start", "invoke-command", "icm"}
_PS_DOTNET_WRITE = re.compile(r"\[(?:system\.)?io\.(?:file|directory)\]::(?:delete|move|replace|write|append|copy"
                              r"|create|open|setattributes)", re.IGNORECASE)
def windows_command(base: str, args: list[Word], cmd: Simple, state: State) -> str | None:
    named: dict[str, list[Word]] = {}
    positional: list[Word] = []
    words = list(args)
    while words:
        word = words.pop(0)
        value = word_value(word, state)
        if value and cmd.dialect == "powershell" and re.fullmatch(r"-[A-Za-z][\w-]*(?::.*)?", value):
            key, _colon, inline = value[1:].partition(":")
            key = key.lower()
            if inline:
                named.setdefault(key, []).append(Word.of(inline))
            elif key in PS_VALUE_PARAMS and words:
                named.setdefault(key, []).append(words.pop(0))
            else:
                named.setdefault(key, [])
        elif value and cmd.dialect == "cmd" and re.fullmatch(r"/[A-Za-z0-9:-]+", value):
            named.setdefault(value[1:].lower(), [])
        else:
            positional.append(word)
    if "whatif" in named and not any((word_value(w, state) or "").lower() in ("false", "0") for w in named["whatif"]):
        return None  # -WhatIf only tells what would happen; -WhatIf:$false does it
    if cmd.dialect == "powershell" and _PS_DOTNET_WRITE.match(base):
        return _("a .NET call that deletes, moves or writes files ({name})").format(name=base)
    if base in _PS_EVAL:
        code = [word_value(w, state) for w in [*named.get("scriptblock", []), *named.get("argumentlist", []),
                                                *positional]]
        if base in ("start-process", "saps", "start"):
            return None if all(code) and not any(command_name(c or "", "cmd") in PS_DELETE for c in code) \
                else _("{name} of a command that is only known when it runs").format(name=base)
        if any(c is None for c in code):
            return _("{name} of text that is only known when it runs").format(name=base)
        return state.script(" ".join(c for c in code if c), cmd.dialect, nested(state))
    if base in _PS_DISK:
        return _("disk or filesystem tool")
    if base in _PS_POWER:
        return _("shuts the machine down")
    paths = [*named.get("path", []), *named.get("literalpath", []), *positional]
    if not paths and cmd.piped and cmd.dialect == "powershell" and (base in PS_DELETE or base in PS_MOVE):
        return piped_items(base, cmd, state)
    if base in PS_DELETE:
        return targets_reason("deletes", paths, state, cmd.dialect)
    if base in PS_MOVE:
        return targets_reason("moves", [*paths, *named.get("destination", [])], state, cmd.dialect)
    if base in _PS_WRITE:
        copies = base in ("copy-item", "cp", "copy", "cpi", "xcopy", "robocopy")  # their -Path is the source
        destination = named.get("destination") or named.get("filepath") or (
            positional[1:2] if copies else named.get("path") or named.get("literalpath") or positional[:1])
        if base == "robocopy" and ({"mir", "purge", "move"} & set(named)):
            return targets_reason("deletes or moves", positional[:2], state, cmd.dialect)
        return targets_reason("writes to", list(destination or []), state, cmd.dialect, write=True)
    return None


HANDLERS.by_dialect.update(powershell=windows_command, cmd=windows_command)
