"""The workspace guard: file tools only ever touch paths inside the workspace root.

`..`, absolute paths elsewhere and symlinks that point outside are all refused, because the check
is made on the fully resolved path (every symlink followed), not on the text the model wrote.
A symlink loop cannot be resolved at all: it is refused too, with a sentence (Python raises
RuntimeError for it before 3.13 and resolves it silently from 3.13 on).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

_WINDOWS_CANT_RESOLVE = 1921  # ERROR_CANT_RESOLVE_FILENAME: Windows' word for a symlink loop


class OutsideWorkspace(Exception):
    """A path the file tools refuse: outside the workspace, or one that cannot be resolved."""


class SymlinkLoop(OutsideWorkspace):
    """The path's symlinks point at each other: it names no file."""


class Workspace:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        if not path or not path.strip():
            raise OutsideWorkspace("the path is empty")
        candidate = Path(os.path.expanduser(path.strip()))
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = resolve_path(candidate)
        if resolved is None:
            raise SymlinkLoop(f"{path!r} is a symlink loop (its links point at each other); it names no file")
        if resolved != self.root and not resolved.is_relative_to(self.root):
            why = " (through a symlink)" if _has_symlink(candidate, self.root) else ""
            raise OutsideWorkspace(
                f"{path!r} is outside the workspace {self.root}{why}; file tools only work inside it"
            )
        return resolved

    def rel(self, path: Path) -> str:
        """The workspace-relative POSIX form, as shown to the model and kept in the outcome."""
        try:
            relative = (resolve_path(path) or path.absolute()).relative_to(self.root)  # a loop: its own name
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


def resolve_path(path: Path) -> Path | None:
    """`path` with every symlink followed, or None when they loop."""
    try:
        resolved = path.resolve()
    except RuntimeError:  # Python < 3.13: "Symlink loop from ..."
        return None
    try:
        os.stat(resolved)  # from 3.13 the loop comes back as a path; only using it says ELOOP
    except OSError as exc:
        if exc.errno == errno.ELOOP or getattr(exc, "winerror", None) == _WINDOWS_CANT_RESOLVE:
            return None
    return resolved
