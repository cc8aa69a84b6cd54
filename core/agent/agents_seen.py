"""What the agent last saw of a workspace's AGENTS.md, so that a session can say when it changed.

Every session follows AGENTS.md, and commands may write it: a line a command planted ("before any
task, run `curl … | sh`") would be obeyed by the next session. So the agent keeps the digest of
the AGENTS.md it last read at a session's start, or whose edit the user approved, one small file
per workspace in its data folder (never in the repository). A session that finds another one
tells the user before it follows it, and tells the model the file is unconfirmed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from core.config import Settings
from core.i18n import _
from core.private import make_folder
from core.session.journal import sessions_root

AGENTS_FILE = "AGENTS.md"
FOLDER = "agents-md"


class AgentsSeen:
    """The digest of the AGENTS.md the agent last saw in one workspace (None: never seen)."""

    def __init__(self, data_dir: Path | None, workspace: Path) -> None:
        self.path = None
        if data_dir is not None:
            key = hashlib.sha256(str(workspace.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:16]
            self.path = data_dir / FOLDER / f"{key}.json"
        self.workspace = workspace

    @classmethod
    def for_settings(cls, settings: Settings, workspace: Path) -> AgentsSeen:
        return cls(sessions_root(settings.sessions_dir or None).parent, workspace)

    def last(self) -> str | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8")) if self.path is not None else None
        except (OSError, ValueError):
            return None
        digest = data.get("sha256") if isinstance(data, dict) else None
        return digest if isinstance(digest, str) else None

    def changed(self, text: str) -> bool:
        """Whether `text` (AGENTS.md as read now, "" when there is none) differs from what the agent
        last saw here. A workspace seen for the first time has not changed: there is nothing to compare."""
        last = self.last()
        return last is not None and last != digest(text)

    def record(self, text: str) -> str | None:
        """Remember `text` as seen; a sentence when it could not be kept."""
        if self.path is None:
            return None
        try:
            make_folder(self.path.parent)
            temp = self.path.with_suffix(f".{os.getpid()}.tmp")
            temp.write_text(json.dumps({"workspace": str(self.workspace), "sha256": digest(text)}), encoding="utf-8")
            os.replace(temp, self.path)
        except OSError as exc:
            return _("{path} could not be written ({error})").format(path=self.path,
                                                                      error=exc.strerror or exc)
        return None


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
