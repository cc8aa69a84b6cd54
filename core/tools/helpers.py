"""The programs the agent runs on its own, unconfined (git for checkpoints, rg for search, the
shell that runs commands), found by absolute path outside the places commands may write.

Commands may write the workspace and the temp folders, and PATH can name folders inside them (an
active venv's `bin`, `node_modules/.bin`, a direnv `PATH_add`, a relative entry). A `git` or `rg`
planted there would run with the agent's rights at the next checkpoint or search, so a helper is
looked up on PATH with those entries skipped, and a program that leads into them through a link
is not taken either. None when no other copy exists: the caller then does without it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from core.sandbox.policy import TEMP_FOLDERS


def find(name: str, avoid: Iterable[Path] = ()) -> str | None:
    """The absolute path of program `name` on PATH outside the temp folders and `avoid` (the
    workspace, or the repository holding it), or None."""
    return _find(name, tuple(sorted({_real(p) for p in avoid})), os.environ.get("PATH", os.defpath))


@lru_cache(maxsize=64)
def _find(name: str, avoid: tuple[Path, ...], search_path: str) -> str | None:
    untrusted = (*avoid, *_temp_folders())
    for entry in search_path.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or _inside(_real(Path(entry)), untrusted):
            continue
        found = shutil.which(name, path=entry)
        if found and os.path.isabs(found) and not _inside(_real(Path(found)), untrusted):
            return found
    return None


def trusted(program: str, avoid: Iterable[Path] = ()) -> bool:
    """Whether `program` (an absolute path) lies outside the temp folders and `avoid`."""
    return os.path.isabs(program) and not _inside(_real(Path(program)), (*map(_real, avoid), *_temp_folders()))


def _temp_folders() -> tuple[Path, ...]:
    names = [tempfile.gettempdir(), os.environ.get("TMPDIR", ""), os.environ.get("TEMP", ""), *TEMP_FOLDERS]
    return tuple(dict.fromkeys(_real(Path(n)) for n in names if n))


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == folder or path.is_relative_to(folder) for folder in folders)


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path
