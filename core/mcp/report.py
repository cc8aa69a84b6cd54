"""`/mcp`: the servers with their state and tools, as text and as fields for a front end that draws."""

from __future__ import annotations

from typing import Any

from core.mcp.manager import ServerView, state_line
from core.mcp.tools import McpTools


def mcp_data(tools: McpTools | None) -> dict[str, Any]:
    if tools is None:
        return {"servers": []}
    offered = {(t.server, t.name): name for name, t in tools.by_name.items()}
    return {"servers": [_server(view, offered) for view in tools.manager.views()]}


def _server(view: ServerView, offered: dict[tuple[str, str], str]) -> dict[str, Any]:
    return {"name": view.name, "state": view.state, "reason": view.reason, "summary": state_line(view),
            "transport": view.transport, "source": view.source, "from_workspace": view.from_workspace,
            "tools": [{"name": t.name, "offered_as": offered.get((t.server, t.name), ""), "read_only": t.read_only,
                       "description": t.description} for t in view.tools]}


def mcp_text(tools: McpTools | None) -> str:
    data = mcp_data(tools)
    if not data["servers"]:
        return ("No MCP servers are configured. Put them in mcp.json beside the .env, in the file named by "
                "DEEPSEEK_MCP_CONFIG, or in the workspace's .mcp.json (see docs/mcp.md).")
    lines = ["MCP servers:"]
    for server in data["servers"]:
        lines.append(f"  {server['name']} ({server['transport']}): {server['summary']}")
        for tool in server["tools"]:
            mark = "read-only" if tool["read_only"] else "asks"
            lines.append(f"    {tool['offered_as'] or tool['name']:<40} {mark}")
    lines.append("/mcp restart NAME restarts one; /mcp allow NAME starts a workspace server that waits for a yes.")
    return "\n".join(lines)
