"""A stdio MCP server runs in the sandbox like a command: it writes in the workspace but not outside,
and reads no secret; a server the user marks `trusted` runs unconfined."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.agent_process import run_agent
from tests.support.mcp_servers import write_config
from tests.support.paths import TESTS
from tests.support.sandbox_corpus import CANARY, Layout
from tests.support.sandbox_fixtures import layout
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

__all__ = ["layout"]
WRITER = TESTS / "support" / "mcp_writer_server.py"


def writer(**extra: object) -> dict:
    return {"command": sys.executable, "args": [str(WRITER)], **extra}


def _write(layout: Layout, tmp_path: Path, server: dict, target: Path) -> str:
    config = write_config(layout.base / "user" / "mcp.json", {"notes": server})
    script = [Reply(call_events([("notes__write_note", {"path": str(target), "text": "gone"})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as model:
        done = run_agent(["--one", "note it", "--yes", "--cwd", str(layout.workspace)], model.url, tmp_path,
                         env={"DEEPSEEK_MCP_CONFIG": str(config), "HOME": str(layout.home)})
    assert done.returncode == 0, done.stderr.decode()
    return next(i["output"] for i in model.requests[1]["input"] if i.get("type") == "function_call_output")


def test_a_confined_server_writes_in_the_workspace_and_nothing_outside(layout: Layout, tmp_path: Path) -> None:
    outside = layout.base / "x" / "f.txt"
    assert "could not write" in _write(layout, tmp_path, writer(), outside)
    assert outside.read_text() == CANARY
    assert _write(layout, tmp_path, writer(), layout.workspace / "note.txt").startswith("wrote")
    assert (layout.workspace / "note.txt").read_text() == "gone"


def test_a_trusted_server_runs_outside_the_sandbox(layout: Layout, tmp_path: Path) -> None:
    outside = layout.base / "x" / "f.txt"
    assert _write(layout, tmp_path, writer(trusted=True), outside).startswith("wrote")
    assert outside.read_text() == "gone"


def test_a_workspace_file_never_makes_a_server_run_outside_the_sandbox(layout: Layout, tmp_path: Path) -> None:
    """`--one --yes`: the workspace's .mcp.json marks its server `trusted`; --yes answers the gate's
    questions, never one to leave the sandbox, so the server does not start and the canary stays."""
    outside = layout.base / "x" / "f.txt"
    write_config(layout.workspace / ".mcp.json", {"notes": writer(trusted=True)})
    script = [Reply(call_events([("notes__write_note", {"path": str(outside), "text": "gone"})])),
              Reply(text_events("ok"))]
    with ScriptedServer(script) as model:
        done = run_agent(["--one", "note it", "--yes", "--cwd", str(layout.workspace)], model.url, tmp_path,
                         env={"HOME": str(layout.home)})
    assert done.returncode == 0, done.stderr.decode()
    assert outside.read_text() == CANARY
    assert "notes__write_note" not in [t["name"] for t in model.requests[0].get("tools", [])]
    assert "not starting notes" in done.stderr.decode()
