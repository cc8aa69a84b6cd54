"""The agent's own helpers (git for checkpoints, rg for search, the shell) are never taken from
where a command could have planted them: the workspace, the temp folders, a relative PATH entry,
or a link into one of them. Fakes are planted on PATH ahead of the real programs; each fake leaves
a mark when it runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.checkpoints.gitsnap import GitSnapshots
from core.tools import helpers
from core.tools.search import search
from core.tools.shell import run_command
from core.tools.shells import detect_shell
from tests.support.tools import tool_context

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fakes are POSIX scripts")
REAL = {name: shutil.which(name) for name in ("git", "rg", "bash")}


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder outside every temp folder (they are untrusted as a whole): the workspace and a
    trusted bin folder live here."""
    made = Path.home() / ".cache" / "deepseek-agent-helper-tests" / uuid.uuid4().hex
    (made / "ws").mkdir(parents=True)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _plant(folder: Path, name: str, mark: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / name
    fake.write_text(f"#!/bin/sh\necho ran >> '{mark}'\nexit 0\n")
    fake.chmod(0o755)
    return fake


def _path(*entries: str | Path) -> str:
    real = [os.path.dirname(p) for p in REAL.values() if p]
    return os.pathsep.join([*map(str, entries), *dict.fromkeys(real)])


def _places(base: Path) -> dict[str, Path]:
    ws = base / "ws"
    return {
        "venv": ws / ".venv" / "bin",
        "node": ws / "node_modules" / ".bin",
        "temp": Path(tempfile.mkdtemp(prefix="planted-")) / "bin",
    }


@pytest.mark.parametrize("name", ["git", "rg", "bash"])
@pytest.mark.parametrize("place", ["venv", "node", "temp", "relative", "link"])
def test_a_helper_planted_where_commands_write_is_skipped(
    base: Path, monkeypatch: pytest.MonkeyPatch, name: str, place: str
) -> None:
    if REAL[name] is None:
        pytest.skip(f"no {name} here")
    ws, mark = base / "ws", base / "mark"
    places = _places(base)
    if place == "relative":  # PATH=node_modules/.bin:... with the agent started in the workspace
        _plant(places["node"], name, mark)
        monkeypatch.chdir(ws)
        entry: str | Path = "node_modules/.bin"
    elif place == "link":  # a trusted folder holding a link into the workspace
        fake = _plant(places["venv"], name, mark)
        (base / "bin").mkdir()
        (base / "bin" / name).symlink_to(fake)
        entry = base / "bin"
    else:
        entry = _plant(places[place], name, mark).parent
    monkeypatch.setenv("PATH", _path(entry))
    found = helpers.find(name, [ws])
    assert found is not None and os.path.realpath(found) == os.path.realpath(REAL[name]), found
    shutil.rmtree(places["temp"].parent, ignore_errors=True)


def test_a_helper_outside_those_places_is_taken(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's own bin folder (outside the workspace and the temp folders) is trusted."""
    fake = _plant(base / "bin", "rg", base / "mark")
    monkeypatch.setenv("PATH", _path(base / "bin"))
    assert helpers.find("rg", [base / "ws"]) == str(fake)
    assert helpers.find("no-such-program-anywhere", [base / "ws"]) is None


def test_checkpoints_search_and_the_shell_never_run_a_planted_helper(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helpers as the agent uses them, with a fake of each first on PATH (an active venv)."""
    if None in REAL.values():
        pytest.skip("needs git, rg and bash")
    ws, mark = base / "ws", base / "mark"
    for name in REAL:
        _plant(ws / ".venv" / "bin", name, mark)
    monkeypatch.setenv("PATH", _path(ws / ".venv" / "bin"))
    subprocess.run([REAL["git"], "init", "-q"], cwd=ws, check=True)
    (ws / "a.txt").write_text("hello\n")
    git = GitSnapshots.detect(ws, base / "scratch")
    assert git is not None and git.git == REAL["git"]
    assert git.snapshot() is not None
    result = search({"pattern": "hello"}, tool_context(ws))
    assert "a.txt" in result.output
    detect_shell.cache_clear()
    assert detect_shell(ws).path == REAL["bash"]
    run = run_command("echo fine", ws, 20, Cancel())
    assert run.exit_code == 0 and b"fine" in run.output
    assert not mark.exists(), "a planted helper ran"
