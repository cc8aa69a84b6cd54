"""What the user allowed, per workspace, kept in the agent's data folder across sessions.

Two things: which of a workspace's own `.mcp.json` servers may start (tied to the entry's
fingerprint, so a changed command asks again), and which MCP tools run without asking there
("always for this tool"). The file is small JSON; a damaged one counts as empty and is rewritten.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from core.i18n import _
from core.mcp.config import ServerConfig
from core.private import make_folder

STORE_NAME = "mcp-consent.json"


class ConsentStore:
    def __init__(self, path: Path, workspace: Path) -> None:
        self.path = path
        self.workspace = str(workspace.resolve())
        self._lock = threading.Lock()

    def server_allowed(self, server: ServerConfig) -> bool:
        return self._entry().get("servers", {}).get(server.name) == server.fingerprint()

    def allow_server(self, server: ServerConfig) -> str | None:
        return self._update(lambda entry: entry.setdefault("servers", {}).__setitem__(server.name,
                                                                                      server.fingerprint()))

    def tool_always(self, server: str, tool: str) -> bool:
        return [server, tool] in self._entry().get("tools", [])

    def allow_tool(self, server: str, tool: str) -> str | None:
        def add(entry: dict[str, Any]) -> None:
            tools = entry.setdefault("tools", [])
            if [server, tool] not in tools:
                tools.append([server, tool])

        return self._update(add)

    def _all(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _entry(self) -> dict[str, Any]:
        entry = self._all().get(self.workspace)
        return entry if isinstance(entry, dict) else {}

    def _update(self, change: Any) -> str | None:
        """Apply `change` to this workspace's entry and save; a sentence when it could not be saved."""
        with self._lock:
            data = self._all()
            entry = data.get(self.workspace)
            entry = entry if isinstance(entry, dict) else {}
            change(entry)
            data[self.workspace] = entry
            try:
                make_folder(self.path.parent)
                temp = self.path.with_suffix(f".{os.getpid()}.tmp")
                temp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
                os.replace(temp, self.path)
            except OSError as exc:
                return _("it holds for this run only: {path} could not be written ({problem})").format(
                    path=self.path, problem=exc.strerror or exc)
        return None
