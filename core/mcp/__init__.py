"""The MCP client: servers from mcp.json files, their tools offered to the model (see docs/mcp.md).

config (files and entries), naming (tool names), consent (what the user allowed per workspace),
manager (the servers' lifecycle on one event-loop thread), tools (the adapter and approval by
annotations), open (a session's servers), report (/mcp).
"""
