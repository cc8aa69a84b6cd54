"""What a session that uses an MCP server imports: the SDK's client, and nothing of its server side
(the exe leaves that out, so an import of it there would be a crash)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.mcp.sdk import SERVER_SIDE
from tests.support.mcp_servers import DEMO
from tests.support.paths import ROOT

SCRIPT = """
import json, os, sys
from pathlib import Path
from core.cancel import Cancel
from core.mcp.config import parse_entry
from core.mcp.manager import McpManager
entry = {"command": sys.executable, "args": [sys.argv[1]]}
manager = McpManager([parse_entry("demo", entry, "test", False, os.environ, Path(sys.argv[2]))], Path(sys.argv[2]))
try:
    manager.start(["demo"])
    manager.wait_started()
    result = manager.call("demo", "lookup", {"word": "猫"}, Cancel())
finally:
    manager.close()
print(json.dumps({"text": result.content[0].text, "modules": sorted(sys.modules)}))
"""


def test_calling_a_tool_with_an_output_schema_imports_nothing_of_the_server_side(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(DEMO), str(tmp_path)], capture_output=True,
                          text=True, encoding="utf-8", cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert "猫" in found["text"]
    assert "jsonschema" in found["modules"]  # the result was checked against the tool's output schema
    server_side = [m for m in found["modules"] if any(m == n or m.startswith(n + ".") for n in SERVER_SIDE)]
    assert server_side == []
