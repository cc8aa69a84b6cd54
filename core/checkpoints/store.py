"""A content-addressed store of file contents in the session folder: `blobs/ab/abcdef…` by SHA-256.

The same bytes are kept once however often a file goes back to them, and what is stored is the
file's exact bytes (line endings and undecodable bytes included).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from core.private import make_folder


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._private = False  # the store's folders made private (0700) in this process

    def _path(self, sha: str) -> Path:
        return self.root / sha[:2] / sha

    def put(self, data: bytes) -> str:
        """Keep `data` (once) and return its address. Written to a temporary file and renamed, so a
        crash never leaves a blob that is cut short under its address."""
        sha = digest(data)
        path = self._path(sha)
        if path.exists():
            return sha
        if not self._private:  # also when an older version left them readable by others
            make_folder(self.root.parent)
            make_folder(self.root)
            self._private = True
        if not path.parent.is_dir():
            make_folder(path.parent)
        temp = path.with_name(f"{sha}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
        if sys.platform != "win32":
            os.chmod(path, 0o600)
        return sha

    def get(self, sha: str) -> bytes | None:
        try:
            data = self._path(sha).read_bytes()
        except OSError:
            return None
        return data if digest(data) == sha else None  # a damaged blob is as good as none

    def size(self) -> int:
        return sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file()) if self.root.is_dir() else 0
