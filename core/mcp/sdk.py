"""The MCP SDK's client side, imported without its server side.

The SDK's package initialisers (`mcp/__init__.py`, `mcp/client/__init__.py`) import its server: an
ASGI framework, a web server, an SSE server and a cryptography library, none of which a client
runs. Registering those two packages bare (their folders on the path, their initialisers not run)
lets the client modules import as usual while the server stays on disk, and lets the one-file exe
leave it out (deepseek-agent.spec's excludes; tests/e2e/test_exe.py starts a real server from it).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

# The packages whose initialisers import the server, parents first.
_BARE_PACKAGES = ("mcp", "mcp.client")
# What the client uses: importing them here makes a missing piece fail at start-up, with its name.
CLIENT_MODULES = ("mcp.client.session", "mcp.client.stdio", "mcp.client.streamable_http",
                  "mcp.shared._httpx_utils", "mcp.shared.exceptions", "mcp_types")
# The SDK's server side and what only it needs: the client never imports them (a test checks), so the
# exe leaves them out. jsonschema stays: the client checks a tool's structured result against the
# tool's output schema with it, when the call returns.
SERVER_SIDE = ("mcp.server", "mcp.cli", "uvicorn", "starlette", "sse_starlette", "cryptography", "cffi", "jwt",
               "click", "python_multipart", "multipart")


def load_client() -> None:
    """Import the SDK's client modules (ImportError when the SDK or a piece of it is missing)."""
    for name in _BARE_PACKAGES:
        if name in sys.modules:
            continue  # already imported, whole or bare
        spec = importlib.util.find_spec(name)
        if spec is None or spec.submodule_search_locations is None:
            raise ImportError(f"the package {name} is not installed", name=name)
        package = importlib.util.module_from_spec(spec)  # __path__ set, the initialiser not run
        sys.modules[name] = package
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, package)
    for name in CLIENT_MODULES:
        importlib.import_module(name)
