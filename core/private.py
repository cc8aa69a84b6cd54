"""Session files readable only by their owner: folders 0700, files 0600.

The journal and the output archives hold everything the agent saw, redacted of the secrets it
knows but not of every secret a command may print. On POSIX they are created private (not chmodded
after the fact, so there is no moment when they are readable). On Windows they live in the user's
own profile folder, which other users cannot read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import BinaryIO

POSIX = sys.platform != "win32"


def make_folder(path: Path) -> None:
    """Create `path` (and parents) and make it private, even when it already existed."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if POSIX:
        os.chmod(path, 0o700)


def open_file(path: Path, mode: str = "ab", exclusive: bool = False, buffering: int = -1) -> BinaryIO:
    """Open `path` for writing ("ab" or "a+b"), creating it 0600; `exclusive` fails if it exists."""
    flags = os.O_CREAT | os.O_APPEND | (os.O_RDWR if "+" in mode else os.O_WRONLY) | getattr(os, "O_BINARY", 0)
    if exclusive:
        flags |= os.O_EXCL
    fd = os.open(path, flags, 0o600)
    try:
        if POSIX:
            os.fchmod(fd, 0o600)  # an older file may have been created with the default mode
        return os.fdopen(fd, mode, buffering=buffering)
    except BaseException:
        os.close(fd)
        raise
