"""The test tree keeps its shelves: every test file sits in a tier folder, no test file imports
another (what several share is in tests/support/), and a lighter tier uses none of a heavier
tier's harness, so `pytest tests/unit` stays quick and needs no server."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import TIERS
from tests.support.paths import TESTS

# What a tier's files may not import: a module, or "module:name" for one name from it.
HEAVIER = {
    "unit": {"socket", "http.server", "http.client", "urllib.request", "tests.support.sse_server",
             "tests.support.tui_harness", "tests.support.terminal", "tests.support.local_model",
             "tests.support.agent_process:run_agent", "tests.support.agent_process:AGENT"},
    "loopback": {"tests.support.terminal", "tests.support.local_model", "tests.support.agent_process:run_agent",
                 "tests.support.agent_process:AGENT"},
    "e2e": {"tests.support.local_model"},
}


def tier_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def imported(path: Path) -> Iterator[tuple[str, int]]:
    """Each module `path` imports, and each `module:name` it takes from one, with the line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, node.lineno
            for alias in node.names:
                yield f"{node.module}:{alias.name}", node.lineno
                yield f"{node.module}.{alias.name}", node.lineno  # `from tests import test_x`


def test_every_test_file_sits_in_a_tier_folder() -> None:
    files = tier_files()
    assert len(files) > 50
    assert [p.relative_to(TESTS).as_posix() for p in files if p.relative_to(TESTS).parts[0] not in TIERS] == []


def test_no_test_file_imports_another() -> None:
    found = [f"{path.relative_to(TESTS).as_posix()}:{line} imports {name}" for path in tier_files()
             for name, line in imported(path) if ":" not in name and name.rpartition(".")[2].startswith("test_")]
    assert not found, "move what is shared to tests/support/:\n" + "\n".join(found)


def test_a_lighter_tier_uses_no_heavier_harness() -> None:
    found = [f"{path.relative_to(TESTS).as_posix()}:{line} imports {name}" for path in tier_files()
             for name, line in imported(path) if name in HEAVIER.get(path.relative_to(TESTS).parts[0], set())]
    assert not found, "\n".join(found)
