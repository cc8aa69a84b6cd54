"""One agent per session: a lock held while a session is open, and a note saying who holds it.

Two terminals resuming the same session would interleave their turns in one journal. The lock is
an OS file lock (`flock` on POSIX, `msvcrt.locking` on Windows), so it goes away with the process
that held it, even after kill -9: there is no stale lock to clean up. Beside the lock the holder
writes who it is (pid, host, since when), for the message the second one shows.
"""

from __future__ import annotations

import datetime
import os
import socket
import sys
from pathlib import Path

from core.i18n import _

LOCK_NAME = "lock"
_WINDOWS_LOCK_OFFSET = 1 << 20  # Windows locks are mandatory: lock a byte past the note, not the note


class Locked(Exception):
    """Another process holds the lock; the message says who."""


class FileLock:
    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, what: str) -> None:
        """Take the lock or raise Locked naming the holder; `what` names the thing locked."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        try:
            _lock(fd)
        except OSError:
            holder = _read_note(fd)
            os.close(fd)
            raise Locked(_("{what} is open in another deepseek-agent ({holder}); close it there first")
                         .format(what=what, holder=holder or _("holder unknown"))) from None
        note = (f"pid {os.getpid()} on {socket.gethostname()}, since "
                f"{datetime.datetime.now().isoformat(sep=' ', timespec='seconds')}").encode()
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, note)
        os.ftruncate(fd, len(note))
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                _unlock(fd)
            finally:
                os.close(fd)


def _read_note(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 512).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
