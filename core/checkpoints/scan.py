"""What a command changed outside git: a bounded scan of sizes and modification times.

Without a repository there is no cheap copy of the work tree to go back to, so the agent can only
say which files a command created, changed or deleted (and that it cannot restore them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_SCAN_ENTRIES = 20_000  # ~150 ms for the two scans around a command at worst
# Big, generated folders a command changes wholesale (installs, builds): named as one, not scanned.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", "env", ".tox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", ".gradle", ".next", "target",
                       "dist", "build"})


@dataclass
class Scan:
    files: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, mtime_ns)
    complete: bool = True  # False when the scan stopped at MAX_SCAN_ENTRIES


@dataclass
class ScanChanges:
    created: list[str]
    changed: list[str]
    deleted: list[str]
    complete: bool

    @property
    def paths(self) -> list[str]:
        return sorted(self.created + self.changed + self.deleted)


def scan(root: Path, limit: int | None = None) -> Scan:
    """Size and mtime of every file under `root` (at most `limit`, MAX_SCAN_ENTRIES by default),
    skipping SKIP_DIRS and symlinked folders."""
    limit = limit or MAX_SCAN_ENTRIES
    result = Scan()
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        stack.append((entry.path, f"{prefix}{entry.name}/"))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            result.files[prefix + entry.name] = (info.st_size, info.st_mtime_ns)
            if len(result.files) >= limit:
                result.complete = False
                return result
    return result


def compare(before: Scan, after: Scan) -> ScanChanges:
    created = sorted(set(after.files) - set(before.files))
    deleted = sorted(set(before.files) - set(after.files))
    changed = sorted(p for p in set(before.files) & set(after.files) if before.files[p] != after.files[p])
    if not (before.complete and after.complete):  # a path beyond the limit in one scan only proves nothing
        created, deleted = [], []
    return ScanChanges(created, changed, deleted, before.complete and after.complete)
