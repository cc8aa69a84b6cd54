"""The temp folder of this agent's own that confined commands get as TMPDIR.

The shared /tmp holds other programs' sockets and files (tmux's, X's, other users' scratch work), so
commands may not write it; they get a folder of the session's own instead, made on first use in
the system's temp folder and removed when the agent exits. A folder left by an agent that died
without cleaning up is removed by the next one (its name carries the process id)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

PREFIX = "deepseek-agent-"


@lru_cache(maxsize=1)
def folder() -> Path:
    """This process's temp folder for commands (made once, private to the user)."""
    base = Path(tempfile.gettempdir())
    _remove_stale(base)
    made = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getuid() if hasattr(os, 'getuid') else 0}-{os.getpid()}-",
                                 dir=base)).resolve()
    atexit.register(shutil.rmtree, made, ignore_errors=True)
    return made


def _remove_stale(base: Path) -> None:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    for entry in base.glob(f"{PREFIX}{uid}-*-*"):
        try:
            pid = int(entry.name[len(PREFIX):].split("-")[1])
        except (IndexError, ValueError):
            continue
        if not _alive(pid) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
