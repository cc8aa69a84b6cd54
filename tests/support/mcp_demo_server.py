"""A real MCP server for the tests, written with the SDK: `python mcp_demo_server.py [stdio | http PORT]`.

Its tools: `lookup` (read-only, answers in Chinese) and `delete_note` (no annotations, so
potentially destructive). It writes its pid to $DEMO_PID_FILE when that is set, so a test can kill it.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("demo")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(word: str) -> str:
    """Look a word up in the dictionary."""
    return f"词典：{word} 的意思是「你好，世界」"


@app.tool()
def delete_note(name: str) -> str:
    """Delete a note."""
    return f"deleted {name}"


if __name__ == "__main__":
    if os.environ.get("DEMO_PID_FILE"):
        with open(os.environ["DEMO_PID_FILE"], "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    if sys.argv[1:2] == ["http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
