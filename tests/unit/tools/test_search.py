"""`search` answers the same with and without ripgrep (one documented behaviour),
and a model's regex runs in linear time on both branches."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from core.tools.base import ToolError
from core.tools.search import search
from tests.support.tools import tool_context as ctx

HAVE_RG = shutil.which("rg") is not None
BRANCHES = [pytest.param("python", id="python-walk"),
            pytest.param("rg", id="ripgrep", marks=pytest.mark.skipif(not HAVE_RG, reason="ripgrep is not installed"))]


@pytest.fixture
def branch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr("core.tools.helpers.find", lambda name, avoid=(): None)
    return request.param


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    files = {
        "a.py": "TODO: a\n",
        "src/b.py": "x = 1\r\nTODO: b 你好\r\n",
        "src/z.py": "TODO: z\n",
        "src/deep/c.py": "# TODO: c\n",
        ".github/ci.yml": "# TODO: hidden file\n",
        "gen/out.py": "TODO: ignored by git\n",
        ".gitignore": "gen/\n",
        "node_modules/pkg/index.js": "TODO: skipped folder\n",
        "long.txt": "TODO " + "x" * 1000 + "\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(text.encode())
    (ws / ".git").mkdir()
    (ws / "blob.bin").write_bytes(b"TODO\0\0binary")
    (tmp_path / "outside.txt").write_text("TODO: outside\n")
    os.symlink(tmp_path / "outside.txt", ws / "link.txt")
    return ws


EXPECTED = [".github/ci.yml:1:# TODO: hidden file", "a.py:1:TODO: a", "gen/out.py:1:TODO: ignored by git",
            "long.txt:1:TODO " + "x" * 295, "src/b.py:2:TODO: b 你好", "src/deep/c.py:1:# TODO: c",
            "src/z.py:1:TODO: z"]


@pytest.mark.parametrize("branch", BRANCHES, indirect=True)
@pytest.mark.skipif(sys.platform == "win32", reason="symlink creation needs privileges on Windows")
def test_one_behaviour_on_both_branches(tree: Path, branch: str) -> None:
    assert search({"pattern": "TODO"}, ctx(tree)).output.splitlines() == EXPECTED
    assert search({"pattern": "todo", "ignore_case": True}, ctx(tree)).output.splitlines() == EXPECTED
    # a single file keeps its name; a folder, its relative path
    assert search({"pattern": "TODO", "path": "a.py"}, ctx(tree)).output == "a.py:1:TODO: a"
    assert search({"pattern": "TODO", "path": "src"}, ctx(tree)).output.splitlines() == EXPECTED[4:]
    assert search({"pattern": "TODO", "glob": "*.py"}, ctx(tree)).output.splitlines() == [
        "a.py:1:TODO: a", "gen/out.py:1:TODO: ignored by git", *EXPECTED[4:]]
    assert search({"pattern": r"\p{Han}+"}, ctx(tree)).output == "src/b.py:2:TODO: b 你好"


@pytest.mark.parametrize("branch", BRANCHES, indirect=True)
def test_syntax_outside_re2_is_a_clear_error_on_both_branches(tree: Path, branch: str) -> None:
    for pattern in ("(?<=TODO)x", r"(a)\1", "("):
        with pytest.raises(ToolError, match=r"invalid regular expression.*no lookaround"):
            search({"pattern": pattern}, ctx(tree))


@pytest.mark.parametrize("branch", BRANCHES, indirect=True)
def test_a_backtracking_pattern_runs_in_linear_time(tmp_path: Path, branch: str) -> None:
    """`^(a+)+$` over 40 a's and a '!' takes hours in Python's re; here it must simply answer.
    Compared with an ordinary pattern over the same text, not against the clock."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text(("a" * 40 + "!\n") * 2000)
    start = time.perf_counter()
    assert search({"pattern": "^a+!$"}, ctx(ws)).output.count("\n") == 200  # 201 lines: cut at MAX_RESULTS
    plain = time.perf_counter() - start
    start = time.perf_counter()
    assert "no matches" in search({"pattern": "^(a+)+$"}, ctx(ws)).output
    evil = time.perf_counter() - start
    assert evil < 50 * plain + 1.0, (evil, plain)
