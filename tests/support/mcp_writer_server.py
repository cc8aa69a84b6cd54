"""A real MCP server with one tool, `write_note`, that writes a file where it is told: what a confined
server cannot do outside the workspace. `python mcp_writer_server.py` speaks stdio."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("writer")


@app.tool()
def write_note(path: str, text: str) -> str:
    """Write a note to a file."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        return f"could not write {path}: {exc.strerror}"
    return f"wrote {path}"


if __name__ == "__main__":
    app.run()
