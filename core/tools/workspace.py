"""The workspace guard: file tools only ever touch paths inside the workspace root.

`..`, absolute paths elsewhere and symlinks that point outside are all refused, because the check
is made on the fully resolved path (every symlink followed), not on the text the model wrote.
"""

from __future__ import annotations

import os
from pathlib import Path


class OutsideWorkspace(Exception):
    pass


class Workspace:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        if not path or not path.strip():
            raise OutsideWorkspace("the path is empty")
        candidate = Path(os.path.expanduser(path.strip()))
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()
        if resolved != self.root and not resolved.is_relative_to(self.root):
            why = " (through a symlink)" if _has_symlink(candidate, self.root) else ""
            raise OutsideWorkspace(
                f"{path!r} is outside the workspace {self.root}{why}; file tools only work inside it"
            )
        return resolved

    def rel(self, path: Path) -> str:
        """The workspace-relative POSIX form, as shown to the model and kept in meta."""
        try:
            relative = path.resolve().relative_to(self.root)
        except ValueError:
            return str(path)
        return relative.as_posix() or "."


def _has_symlink(candidate: Path, root: Path) -> bool:
    current = candidate
    while current != current.parent:
        if current.is_symlink():
            return True
        if current == root:
            break
        current = current.parent
    return False
