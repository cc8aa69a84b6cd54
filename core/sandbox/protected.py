"""The floor under the protected files of the workspace: seen before a command, put back after it.

`.git/config`, `.git/hooks`, `.git/info`, `.gitmodules` and `.mcp.json` are what the user's own
git and the next session run or trust later. A mount namespace (Landlock, where the kernel lets
the agent make one) or bubblewrap's read-only binds keep commands from writing them; a command can
still move `.git` aside and put a new one in its place, and Landlock alone cannot hold them at all
(it only allows, and git needs `.git` writable). So every confined command's protected files are
read before it runs and put back as they were when it changed them; the model is told what was
reverted. A path that went through a symlink before the command (a `.git` file or link of a
worktree) is not watched: it lies elsewhere."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

# A file: (mode, content or a symlink's target); a folder: its entries by relative path. None: absent.
Entry = tuple[int, bytes]
MAX_BYTES = 4 * 1024 * 1024  # a folder holding more is not copied (it is not what git makes)


@dataclass(frozen=True)
class Snapshot:
    root: Path
    seen: dict[Path, dict[str, Entry] | None]

    @classmethod
    def take(cls, root: Path, protected: tuple[Path, ...]) -> Snapshot:
        seen = {}
        for path in protected:
            if _plain_path(root, path):
                seen[path] = _read(path)
        return cls(root, seen)

    def restore(self) -> list[str]:
        """Put back what changed; the paths put back, relative to the workspace."""
        reverted = []
        for path, before in self.seen.items():
            if _plain_path(self.root, path) and _read(path) == before:
                continue
            _unlink_symlinks_on_the_way(self.root, path)
            _remove(path)
            if before is not None:
                _write(path, before)
            reverted.append(str(path.relative_to(self.root)))
        return reverted


def _plain_path(root: Path, path: Path) -> bool:
    """Whether no part of `path` below `root` is a symlink (what is read is what lies there)."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return False
        if not current.exists():
            return True
    return True


def _read(path: Path) -> dict[str, Entry] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return {"": _entry(path, info)}
    entries: dict[str, Entry] = {".": (stat.S_IMODE(info.st_mode) | stat.S_IFDIR, b"")}
    total = 0
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            full = Path(folder, name)
            entry = _entry(full, full.lstat())
            total += len(entry[1])
            if total > MAX_BYTES:
                return entries
            entries[str(full.relative_to(path))] = entry
    return entries


def _entry(path: Path, info: os.stat_result) -> Entry:
    if stat.S_ISLNK(info.st_mode):
        return info.st_mode, os.readlink(path).encode()
    if stat.S_ISREG(info.st_mode):
        try:
            return info.st_mode, path.read_bytes()
        except OSError:
            return info.st_mode, b""
    return info.st_mode, b""


def _unlink_symlinks_on_the_way(root: Path, path: Path) -> None:
    current = root
    for part in path.relative_to(root).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def _write(path: Path, entries: dict[str, Entry]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for relative, (mode, data) in sorted(entries.items()):
        target = path if relative in ("", ".") else path / relative
        if stat.S_ISDIR(mode):
            target.mkdir(exist_ok=True)
        elif stat.S_ISLNK(mode):
            os.symlink(data.decode(), target)
        elif stat.S_ISREG(mode):
            target.write_bytes(data)
        else:
            continue
        if not stat.S_ISLNK(mode):
            os.chmod(target, stat.S_IMODE(mode))
