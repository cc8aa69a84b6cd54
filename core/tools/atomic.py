"""Replace a workspace file's content all at once, never through a link or a swapped folder.

The new bytes go to a temporary file in the same folder, which is then renamed over the target: a
reader sees the old file or the new one, never half of it, and a full disk leaves the old file as it
was. On POSIX the folder is reached one component at a time from the workspace root with O_NOFOLLOW,
and the temporary file and the rename use that folder's descriptor, so a folder swapped for a symlink
after the workspace guard checked the path cannot redirect the write. Renaming also means a hard
link to a file outside the workspace is unlinked from, not written through, and a FIFO planted at
the path is replaced rather than opened (which would hang). The file's mode bits are kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class WriteFailed(Exception):
    """The file could not be replaced; it is unchanged. The message is for the model and the user."""


def write_atomically(root: Path, target: Path, data: bytes, make_parents: bool = False) -> None:
    """Make `target` (inside `root`, already resolved by the workspace guard) hold exactly `data`."""
    rel = target.relative_to(root)
    try:
        if os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd:  # os.replace shares rename's support
            _write_posix(root, rel, data, make_parents)
        else:
            _write_portable(target, data, make_parents)
    except OSError as exc:
        raise WriteFailed(_explain(rel.as_posix(), exc)) from None


def _write_posix(root: Path, rel: Path, data: bytes, make_parents: bool) -> None:
    folder = _open_folder(root, rel.parts[:-1], make_parents)
    try:
        _replace_in(folder, rel.name, data)
    finally:
        os.close(folder)


def _open_folder(root: Path, parts: tuple[str, ...], make_parents: bool) -> int:
    """A descriptor of root/parts, each step opened with O_NOFOLLOW relative to the last."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            if make_parents:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OSError(exc.errno, f"{part!r} is no longer a plain folder (a symlink or file took "
                                  "its place)") from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _replace_in(folder: int, name: str, data: bytes) -> None:
    mode: int | None = None  # a new file gets 0o666 less the umask, from os.open
    owner: tuple[int, int] | None = None
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a directory")
        if stat.S_ISREG(info.st_mode):
            mode, owner = stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid)
    temp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, _NEW_FLAGS, 0o666 if mode is None else 0o600, dir_fd=folder)
    try:
        try:
            _write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            if owner is not None and hasattr(os, "fchown"):
                with contextlib.suppress(PermissionError):
                    os.fchown(fd, *owner)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


def _write_portable(target: Path, data: bytes, make_parents: bool) -> None:
    """Windows: no folder descriptors, but the same temporary-file-and-rename."""
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else None
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temp, _NEW_FLAGS, 0o666)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _explain(rel: str, exc: OSError) -> str:
    if exc.errno in _DISK_FULL:
        return f"could not write {rel}: the disk is full (no space left on the device); {rel} is unchanged"
    reason = exc.strerror or str(exc)
    return f"could not write {rel}: {reason}; {rel} is unchanged"
