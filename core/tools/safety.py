"""Which commands and writes need the user's yes before they run.

Fails closed: when nobody can answer (`--one` without `--yes`, piped input), the action is refused
and the model is told why, so it can choose a safer way.
"""

from __future__ import annotations

import re

_BROAD_TARGET = r"""(?:/|/\*|~/?|~/\*|\*|\.|\./|\./\*|\.\.|\.\./?\*?|\$HOME/?\*?|"\$HOME"/?|/(?:usr|etc|var|bin|boot|home|lib|opt|root|srv|sys|dev)/?\*?|[A-Za-z]:\\?\*?)"""
_END = r"""(?:\s|$|;|&|\||\))"""

_DESTRUCTIVE: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), why) for p, why in (
    (r"\brm\s+(?:-[a-z]*\s+)*(?:-[a-z]*r[a-z]*f|-[a-z]*f[a-z]*r|--recursive\s+--force|--force\s+--recursive"
     r"|-r\s+-f|-f\s+-r|-R\s+-f|-f\s+-R)[a-z]*\s+(?:--\s+)?(?:\S+\s+)*" + _BROAD_TARGET + _END,
     "recursive forced delete of a broad path"),
    (r"\b(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted|diskpart)\b|\bformat(?:\.com)?\s+[a-z]:",
     "disk or filesystem tool"),
    (r"\bdd\b[^;&|]*\bof=/dev/", "raw write to a device"),
    (r">\s*/dev/(?:sd|nvme|hd|disk|mmcblk)", "raw write to a device"),
    (r"\bshred\b", "irrecoverable file wipe"),
    (r"\bgit\s+push\b[^;&|]*(?:\s--force(?:-with-lease)?\b|\s-f\b|\s\+\S)", "force push"),
    (r"\bgit\s+reset\s+--hard\b", "discards uncommitted work"),
    (r"\bgit\s+clean\s+-[a-z]*f", "deletes untracked files"),
    (r"\bchmod\s+(?:-[a-z]*R[a-z]*\s+)\S*\s+" + _BROAD_TARGET + _END, "recursive permission change of a broad path"),
    (r"\bchown\s+(?:-[a-z]*R[a-z]*\s+)\S*\s+" + _BROAD_TARGET + _END, "recursive owner change of a broad path"),
    (r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "fork bomb"),
    (r"\bRemove-Item\b[^;|]*-Recurse[^;|]*" + _BROAD_TARGET.replace("(?:", "(?:\\s", 1) + _END,
     "recursive forced delete of a broad path"),
    (r"\b(?:rd|rmdir)\s+/s\b", "recursive delete"),
    (r"\bdel\s+(?:/[a-z]\s+)*/s\b", "recursive delete"),
    (r"(?:^|[;&|(]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff)\b", "shuts the machine down"),
    (r"\bgit\s+(?:checkout\s+(?:\S+\s+)?--\s+\.|restore\s+(?![^;&|]*--staged\b)(?:--?\S+\s+)*\.)(?:\s|$|;|&)",
     "discards uncommitted work"),
))

# Files that hold credentials: writing to them needs a yes.
_CREDENTIAL_PATH = re.compile(
    r"(?:^|[/\\])(?:\.ssh[/\\]|\.aws[/\\]credentials|\.netrc$|_netrc$|\.git-credentials$|\.npmrc$|\.pypirc$"
    r"|\.docker[/\\]config\.json$|\.kube[/\\]config$|\.env(?!\.(?:example|sample|template|dist)$)(?:\.[\w.-]+)?$|id_(?:rsa|ed25519|ecdsa|dsa)\b"
    r"|\.gnupg[/\\]|credentials\.json$)",
    re.IGNORECASE,
)
_REDIRECT_TARGETS = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?|\bcp\s+\S+\s+|\bmv\s+\S+\s+)\s*(['\"]?)([^\s;&|'\"]+)\1")


def destructive_reason(command: str) -> str | None:
    """Why this shell command needs approval, or None when it does not."""
    for pattern, why in _DESTRUCTIVE:
        if pattern.search(command):
            return why
    for match in _REDIRECT_TARGETS.finditer(command):
        if is_credential_path(match.group(2)):
            return f"writes to a credential file ({match.group(2)})"
    return None


def is_credential_path(path: str) -> bool:
    return bool(_CREDENTIAL_PATH.search(path.strip()))
