"""Tool names as the model sees them: `server__tool`, within the Responses API's name rules.

Names must match ^[a-zA-Z0-9_-]{1,64}$ and be unique across every tool offered. Other characters
become `_`; a name that is too long keeps its start and gets a short hash of the whole, so two
long names that share a start stay apart; a clash with a name already taken gets `_2`, `_3`….
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
SEPARATOR = "__"
_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def _clean(text: str) -> str:
    return _BAD.sub("_", text) or "_"


def _fit(name: str, whole: str) -> str:
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(whole.encode("utf-8")).hexdigest()[:8]
    return f"{name[:MAX_NAME - len(digest) - 1]}_{digest}"


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """The offered name of `tool` on `server`, added to `taken`."""
    whole = f"{server}{SEPARATOR}{tool}"
    name = _fit(f"{_clean(server)}{SEPARATOR}{_clean(tool)}", whole)
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = name[:MAX_NAME - len(suffix)] + suffix
    taken.add(candidate)
    return candidate
