"""A session's MCP servers: read the configuration, ask about the workspace's own servers, start.

A workspace's `.mcp.json` came with the repository, so its servers start only after a yes, asked
once per workspace and server (remembered in the agent's data folder). Without anyone to ask
(`--one` without `--yes`) none of them starts, and one line says so. A front end that answers
approvals later (the TUI) leaves them waiting; `/mcp allow NAME` starts one.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from core.mcp.config import WORKSPACE_FILE, ServerConfig, load_servers
from core.mcp.consent import STORE_NAME, ConsentStore
from core.mcp.manager import Confine, McpManager
from core.mcp.tools import McpTools
from core.session.journal import sessions_root
from core.tools import TOOLS
from core.tools.base import Approve

LOG_FOLDER = "mcp"


def consent_store(settings: Settings, workspace: Path) -> ConsentStore:
    return ConsentStore(sessions_root(settings.sessions_dir or None).parent / STORE_NAME, workspace)


def open_mcp(settings: Settings, workspace: Path, session_folder: Path | None, approve: Approve | None,
             confine: Confine | None = None) -> tuple[McpTools | None, list[str]]:
    """The session's MCP tools (None when no server is configured) and one-line notices."""
    loaded = load_servers(settings.env_file, workspace, settings.mcp_config)
    if not loaded.servers:
        return None, loaded.notices
    store = consent_store(settings, workspace)
    start, refusals, waiting = [], [], []
    for server in loaded.servers:
        if not server.from_workspace or store.server_allowed(server):
            start.append(server.name)
        elif approve is None:
            waiting.append(server.name)
        else:
            refusal = approve(_what(server), f"{WORKSPACE_FILE} in this workspace wants to start an MCP server")
            if refusal is None:
                store.allow_server(server)
                start.append(server.name)
            else:
                refusals.append((server.name, refusal))
    notices = list(loaded.notices)
    if refusals:
        names = ", ".join(name for name, _ in refusals)
        notices.append(f"MCP: not starting {names} from the workspace's {WORKSPACE_FILE} without a yes "
                       f"({refusals[0][1]})")
    if waiting:
        notices.append(f"MCP: {', '.join(waiting)} from the workspace's {WORKSPACE_FILE} wait for a yes: "
                       f"/mcp allow {waiting[0]}")
    manager = McpManager(loaded.servers, session_folder / LOG_FOLDER if session_folder else None, confine)
    manager.start(start)
    tools = McpTools(manager, {s.name: s for s in loaded.servers}, store, frozenset(TOOLS))
    return tools, notices


def allow_workspace_server(tools: McpTools, name: str) -> str:
    """`/mcp allow NAME`: the user's yes for a waiting workspace server; starts it."""
    config = tools.configs.get(name)
    if config is None:
        return f"There is no MCP server named {name!r}."
    tools.consent.allow_server(config)
    tools.manager.start([name])
    return f"Starting {name} ({_what(config)}); /mcp shows when it is ready."


def _what(server: ServerConfig) -> str:
    """The server as a question shows it: its variables unexpanded, so no secret is printed."""
    return f"MCP server {server.name}: {server.shown}"
