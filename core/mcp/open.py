"""A session's MCP servers: read the configuration, ask about the workspace's own servers, start.

A workspace's `.mcp.json` came with the repository, so its servers start only after a yes, asked
once per workspace and server (remembered in the agent's data folder) when the first turn begins.
Without anyone to ask (`--one` without `--yes`) none of them starts, and one line says so; one
refused stays waiting until `/mcp allow NAME`.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from core.i18n import _
from core.mcp.config import load_servers
from core.mcp.consent import STORE_NAME, ConsentStore
from core.mcp.manager import Confine, McpManager
from core.mcp.tools import McpTools
from core.session.journal import sessions_root
from core.tools import TOOLS

LOG_FOLDER = "mcp"


def consent_store(settings: Settings, workspace: Path) -> ConsentStore:
    return ConsentStore(sessions_root(settings.sessions_dir or None).parent / STORE_NAME, workspace)


def open_mcp(settings: Settings, workspace: Path, session_folder: Path | None,
             confine: Confine | None = None) -> tuple[McpTools | None, list[str]]:
    """The session's MCP tools (None when no server is configured) and one-line notices. The
    user's servers, and the workspace's ones allowed before, start now; the others wait for the
    question the first turn asks (`McpTools.refresh`)."""
    loaded = load_servers(settings.env_file, workspace, settings.mcp_config)
    if not loaded.servers:
        return None, loaded.notices
    store = consent_store(settings, workspace)
    manager = McpManager(loaded.servers, session_folder / LOG_FOLDER if session_folder else None, confine)
    manager.start([s.name for s in loaded.servers if not s.from_workspace or store.server_allowed(s)])
    unasked = [s for s in loaded.servers if s.from_workspace and not store.server_allowed(s)]
    return McpTools(manager, {s.name: s for s in loaded.servers}, store, frozenset(TOOLS), unasked), loaded.notices


def allow_workspace_server(tools: McpTools, name: str) -> str:
    """`/mcp allow NAME`: the user's yes for a waiting workspace server; starts it."""
    config = tools.configs.get(name)
    if config is None:
        return _("There is no MCP server named {name!r}.").format(name=name)
    tools.unasked = [s for s in tools.unasked if s.name != name]
    failed = tools.consent.allow_server(config)
    tools.manager.start([name])
    kept = f" ({failed})" if failed else ""
    where = _(" outside the sandbox, as its entry asks (\"trusted\": true)") \
        if tools.manager.outside_the_sandbox(config) else ""
    return _("Starting {name}{where} ({how}){kept}; /mcp shows when it is ready.").format(
        name=name, where=where, how=config.described, kept=kept)
