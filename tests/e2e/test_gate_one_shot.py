"""The approval gate end to end: `agent.py --one` without `--yes` against a scripted model that asks
for destructive commands. HOME is a scratch folder; what lies outside the workspace, and the
repository's history, survive, and the model is told why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


@pytest.mark.parametrize("command", ['rm -rf "${HOME}"', "rm -r --force ~", "find ~ -delete", "rm -rf ../sibling",
                                     "sed -i s/keep/gone/ ../sibling/keep.txt"])
def test_one_shot_without_yes_leaves_the_folder_outside_the_workspace(tmp_path: Path, command: str) -> None:
    """HOME is a scratch folder; without --yes nothing outside the workspace goes."""
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "thesis.txt").write_text("years of work")
    sibling = tmp_path / "sibling"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("keep")
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("I will not."))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "clean up"], server.url, tmp_path, env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr.decode()
    assert (home / "docs" / "thesis.txt").read_text() == "years of work"
    assert (sibling / "keep.txt").read_text() == "keep"
    output = server.requests[1]["input"][-1]["output"]
    assert output.startswith("refused") and "--yes" in output


@pytest.mark.skipif(sys.platform == "win32", reason="the commands run in a POSIX shell")
@pytest.mark.parametrize("command", [
    'export X=~/docs; rm -rf "$X"',
    "bash -c -- 'rm -rf \"$HOME\"/docs'",
    "sh -c 'rm -rf \"$1\"' _ \"$HOME\"/docs",
    "flock \"$HOME\"/lock rm -rf \"$HOME\"/docs",
    'ln -s "$HOME" x && rm -rf x/docs',
    "function f { rm -rf ~/docs; }; f",
    "sed -i s/years/nothing/ \"$HOME\"/docs/thesis.txt",
])
def test_one_shot_without_yes_keeps_the_home_folder(tmp_path: Path, command: str) -> None:
    """End to end: HOME is a scratch folder outside the workspace; without --yes it survives."""
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "thesis.txt").write_text("years of work")
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("I will not."))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "clean up"], server.url, tmp_path, env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr.decode()
    assert (home / "docs" / "thesis.txt").read_text() == "years of work"
    output = server.requests[1]["input"][-1]["output"]
    assert output.startswith("refused") and "--yes" in output


def test_one_shot_without_yes_keeps_the_repository_history(tmp_path: Path) -> None:
    """`rm -rf .git` is inside the workspace but takes every commit with it: it is refused."""
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    (tmp_path / "ws" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    script = [Reply(call_events([("run_shell", {"command": "rm -rf .git"})])), Reply(text_events("I will not."))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "start over"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "ws" / ".git" / "HEAD").exists()
    assert server.requests[1]["input"][-1]["output"].startswith("refused")
