"""`ShowMcp`: the servers with their state and tools, as the protocol's rows."""

from __future__ import annotations

from core import protocol as ev
from core.mcp.manager import ServerView, state_line
from core.mcp.tools import McpTools


def mcp_servers(tools: McpTools | None) -> list[ev.McpServerRow]:
    if tools is None:
        return []
    offered = {(t.server, t.name): name for name, t in tools.by_name.items()}
    return [_server(view, offered) for view in tools.manager.views()]


def _server(view: ServerView, offered: dict[tuple[str, str], str]) -> ev.McpServerRow:
    return ev.McpServerRow(
        name=view.name, state=view.state, reason=view.reason, summary=state_line(view), transport=view.transport,
        source=view.source, from_workspace=view.from_workspace,
        tools=[ev.McpToolRow(name=t.name, offered_as=offered.get((t.server, t.name), ""), read_only=t.read_only,
                             description=t.description) for t in view.tools])
