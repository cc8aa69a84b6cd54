"""The test tree keeps its shelves: every test file sits in a tier folder, the in-process tiers mirror
the code (a test sits in the wing of the package it tests), no test file imports another (what
several share is in tests/support/), and a lighter tier uses none of a heavier tier's harness, so
`pytest tests/unit` stays quick and needs no server."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TIERS
from tests.support.paths import ROOT, TESTS

# What a tier's files may not import: a module, or "module:name" for one name from it.
HEAVIER = {
    "unit": {"socket", "http.server", "http.client", "urllib.request", "tests.support.sse_server",
             "tests.support.tui_harness", "tests.support.terminal", "devtools.local_model",
             "tests.support.agent_process:run_agent", "tests.support.agent_process:AGENT"},
    "loopback": {"tests.support.terminal", "devtools.local_model", "tests.support.agent_process:run_agent",
                 "tests.support.agent_process:AGENT"},
    "e2e": {"devtools.local_model"},
}

# The tiers that mirror the code, and the files that test the tree, the docs or the harness as a
# whole rather than one package: only these sit at such a tier's top level.
MIRRORED = {"unit": {"test_shape.py", "test_tiers.py", "test_docs.py", "test_programs.py",
                     "test_windows_runner.py"}, "loopback": set()}


def wings(root: Path = ROOT) -> set[str]:
    """The folders a mirrored tier may hold: one per package of core/ (`agent` for core/agent/),
    `core` for core's own modules and `ui` for the front ends."""
    return {"core", "ui"} | {init.parent.name for init in (root / "core").glob("*/__init__.py")}


def misplaced(tests: Path, wings: set[str]) -> list[str]:
    """Each test file of a mirrored tier at its top level (not one of the listed) or in a folder that
    names no wing."""
    found = []
    for tier, top in MIRRORED.items():
        for path in sorted((tests / tier).rglob("test_*.py")):
            parts = path.relative_to(tests / tier).parts
            if (len(parts) == 1 and parts[0] not in top) or (len(parts) > 1 and parts[0] not in wings):
                found.append(path.relative_to(tests).as_posix())
    return found


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


def test_the_in_process_tiers_mirror_the_code() -> None:
    assert {"agent", "prune", "runtime", "core", "ui"} <= wings()
    assert misplaced(TESTS, wings()) == [], "move each into tests/<tier>/<wing>/, the wing of the code it tests"


@pytest.mark.parametrize("where", ["unit/test_loop.py", "loopback/test_client.py", "unit/tests/test_x.py",
                                   "loopback/tui/deep/test_app.py", "unit/core_agent/test_loop.py"])
def test_a_file_outside_a_wing_is_named(tmp_path: Path, where: str) -> None:
    placed = ["unit/test_shape.py", "unit/prune/test_clean.py", "loopback/agent/test_loop.py",
              "unit/ui/tui/test_app.py", "e2e/test_one_shot.py", "unit/core/test_config.py"]
    for name in [*placed, where]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    assert misplaced(tmp_path, wings()) == [where]


def test_no_test_file_imports_another() -> None:
    found = [f"{path.relative_to(TESTS).as_posix()}:{line} imports {name}" for path in tier_files()
             for name, line in imported(path) if ":" not in name and name.rpartition(".")[2].startswith("test_")]
    assert not found, "move what is shared to tests/support/:\n" + "\n".join(found)


def test_a_lighter_tier_uses_no_heavier_harness() -> None:
    found = [f"{path.relative_to(TESTS).as_posix()}:{line} imports {name}" for path in tier_files()
             for name, line in imported(path) if name in HEAVIER.get(path.relative_to(TESTS).parts[0], set())]
    assert not found, "\n".join(found)
