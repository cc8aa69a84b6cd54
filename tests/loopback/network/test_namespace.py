"""A command in its own network namespace (`unshare -rn`, as a sandbox would start it): with the
bridge and the proxy environment, curl reaches an allowed host through the proxy, is refused
another, and has no direct route anywhere; a server it starts on its own loopback answers it."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.network.child_env import proxy_environment
from core.network.hosts import HostRules
from core.network.proxy import Proxy

ROOT = Path(__file__).resolve().parents[3]


def _namespaces_work() -> bool:
    if not shutil.which("unshare") or not shutil.which("curl"):
        return False
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=20)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not _namespaces_work(),
    reason="needs unshare -rn (user and network namespaces) and curl",
)


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"stand-in answered {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def test_a_command_in_its_own_namespace_reaches_only_what_the_proxy_allows(tmp_path: Path) -> None:
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = upstream.server_address[1]
    socket_file = tmp_path / "proxy.sock"
    script = f"""
ip link set lo up
{sys.executable} -m core.network.bridge {socket_file} 3128 >/dev/null 2>&1 & bridge=$!
{sys.executable} -m http.server 8765 --bind 127.0.0.1 --directory {tmp_path} >/dev/null 2>&1 & server=$!
sleep 1
echo "allowed: $(curl -sS --max-time 10 http://pypi.org/simple/ 2>&1)"
echo "refused: $(curl -sS --max-time 10 http://collector.example/ 2>&1 | head -1)"
echo "direct: $(curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{port}/ 2>&1)"
echo "own server: $(curl -sS --max-time 10 -o /dev/null -w '%{{http_code}}' http://127.0.0.1:8765/ 2>&1)"
kill $bridge $server
"""
    try:
        with Proxy(HostRules.of(), resolve=lambda host, _: ("127.0.0.1", port), listen=socket_file) as proxy:
            env = proxy_environment(dict(os.environ, PYTHONPATH=str(ROOT)), "http://127.0.0.1:3128")
            out = subprocess.run(
                ["unshare", "-rn", "sh", "-c", script],
                env=env,
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=90,
            ).stdout
    finally:
        upstream.shutdown()
        upstream.server_close()
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines["allowed"] == "stand-in answered /simple/", out
    assert lines["refused"].startswith(
        "deepseek-agent's network proxy refused a connection to collector.example:80"
    ), out
    assert "stand-in" not in lines["direct"] and "curl:" in lines["direct"], (
        out
    )  # the host's loopback is not theirs
    assert lines["own server"] == "200", out
    assert [(d.host, d.allowed) for d in proxy.decisions] == [
        ("pypi.org", True),
        ("collector.example", False),
    ]
