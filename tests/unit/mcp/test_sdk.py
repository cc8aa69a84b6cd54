"""The MCP SDK's client is imported without its server side, and a session without MCP servers
imports no SDK at all."""

from __future__ import annotations

import subprocess
import sys

from core.mcp.sdk import CLIENT_MODULES, SERVER_SIDE
from tests.support.paths import ROOT


def _modules_after(code: str) -> set[str]:
    """The top-level and `mcp.*` modules a fresh interpreter holds after running `code`."""
    probe = code + "\nimport sys\nprint('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(done.stdout.split())


def _imported(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_the_client_imports_nothing_of_the_server_side() -> None:
    modules = _modules_after("from core.mcp.sdk import load_client\nload_client()")
    assert set(CLIENT_MODULES) <= modules
    assert _imported(modules, SERVER_SIDE) == []


def test_the_client_still_works_after_the_whole_sdk_was_imported() -> None:
    modules = _modules_after("import mcp\nfrom core.mcp.sdk import load_client\nload_client()\n"
                             "from mcp.client.session import ClientSession")
    assert "mcp.server" in modules and set(CLIENT_MODULES) <= modules


def test_a_missing_sdk_is_an_import_error_that_names_it() -> None:
    code = ("import sys\nsys.modules['mcp'] = None\nfrom core.mcp.sdk import load_client\n"
            "try:\n    load_client()\nexcept ImportError as exc:\n    print('refused:', exc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "refused:" in done.stdout and "mcp" in done.stdout


def test_settings_and_the_front_ends_import_no_sdk_without_servers() -> None:
    modules = _modules_after("import agent, tui, core.runtime, ui.plain.repl, ui.tui.app, core.mcp.manager")
    assert _imported(modules, ("mcp", "mcp_types", "pydantic", "anyio", *SERVER_SIDE)) == []
