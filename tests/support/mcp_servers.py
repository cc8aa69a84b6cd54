"""Helpers for the MCP tests: config files naming the demo server, and an HTTP one on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEMO = Path(__file__).with_name("mcp_demo_server.py")
HANG = [sys.executable, "-c", "import time; time.sleep(120)"]  # never answers initialize


def demo_entry(pid_file: Path | None = None, **extra: Any) -> dict[str, Any]:
    env = {"DEMO_PID_FILE": str(pid_file)} if pid_file else {}
    return {"command": sys.executable, "args": [str(DEMO)], "env": env, **extra}


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, ensure_ascii=False), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_server(port: int = 0) -> Iterator[str]:
    """The demo server over streamable HTTP; yields its URL once it accepts connections."""
    port = port or free_port()
    process = subprocess.Popen([sys.executable, str(DEMO), "http", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(10)
