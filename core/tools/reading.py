"""How the agent reads files it did not make: what a walk skips, what counts as text, and a read
that neither hangs on a FIFO nor grows with the file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

SNIFF_BYTES = 8192
# Folders that are big, generated and almost never what the model is looking for.
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", ".hypothesis", ".idea", ".gradle", ".next", ".cache"})


def looks_binary(head: bytes) -> bool:
    """NUL bytes, or mostly undecodable bytes, in the first block: not text."""
    if b"\0" in head:
        return True
    if not head:
        return False
    text = head.decode("utf-8", errors="replace")
    # A multi-byte character cut at the block's end is not evidence.
    return text.count("\ufffd") > max(8, len(text) // 10)


def read_regular(path: Path, limit: int) -> tuple[bytes, int] | None:
    """At most `limit` bytes of `path` and its size, or None when it is not a regular file. Opened
    without blocking, so a FIFO swapped in after a check cannot hang the caller."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        return handle.read(limit), info.st_size
