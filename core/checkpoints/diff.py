"""Unified diffs of file versions as bytes: text with any line endings and encodings, or binary."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 2000  # per file; a rewritten data file should not flood the screen


def _lines(data: bytes) -> list[str]:
    # Undecodable bytes show as U+FFFD; a \r stays, and the front end's sanitiser shows it as "\r",
    # so a change of line endings is visible.
    lines = data.decode("utf-8", errors="replace").split("\n")
    return lines[:-1] if lines[-1] == "" else [*lines, "\\ No newline at end of file"]


def _binary(data: bytes | None) -> bool:
    return data is not None and b"\0" in data[:8192]


def unified(path: str, old: bytes | None, new: bytes | None) -> str:
    """`--- a/path` / `+++ b/path` hunks (a missing side is /dev/null); "" when nothing differs."""
    if old == new:
        return ""
    head_old = f"a/{path}" if old is not None else "/dev/null"
    head_new = f"b/{path}" if new is not None else "/dev/null"
    if _binary(old) or _binary(new):
        return f"--- {head_old}\n+++ {head_new}\nBinary file {path} differs"
    old_lines = _lines(old) if old else []
    new_lines = _lines(new) if new else []
    diff = list(difflib.unified_diff(old_lines, new_lines, head_old, head_new, lineterm=""))
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"… {len(diff) - MAX_DIFF_LINES:,} more diff lines"]
    return "\n".join(diff)
