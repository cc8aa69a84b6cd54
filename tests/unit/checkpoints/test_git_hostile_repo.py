"""The agent's own git calls (checkpoints, undo, diff) run no program a repository, or a config
the model could have written, names: fsmonitor, hooks, filter drivers, pagers, editors, askpass."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.checkpoints import Checkpoints

pytestmark = pytest.mark.skipif(shutil.which("git") is None or os.name == "nt",
                                reason="needs git and a POSIX shell for the canary programs")


def _program(folder: Path, name: str) -> str:
    """An executable that leaves `canary-<name>` in `folder` when anything runs it (and passes its input on)."""
    path = folder / f"run-{name}"
    path.write_text(f"#!/bin/sh\ntouch '{folder}/canary-{name}'\ncat\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


HOOKS = ("post-index-change", "pre-commit", "post-checkout", "pre-auto-gc", "fsmonitor-watchman", "reference-transaction")


def _hostile_repository(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    canaries = tmp_path / "canaries"
    canaries.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "a.txt").write_text("one\n")
    (repo / "b.dat").write_text("two\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=repo, check=True)
    config = {"core.fsmonitor": _program(canaries, "fsmonitor"), "core.pager": _program(canaries, "pager"),
              "core.editor": _program(canaries, "editor"), "core.askPass": _program(canaries, "askpass"),
              "diff.external": _program(canaries, "diff-external"), "diff.evil.textconv": _program(canaries, "textconv"),
              "filter.evil.clean": _program(canaries, "clean"), "filter.evil.smudge": _program(canaries, "smudge"),
              "filter.evil.required": "true", "filter.lfs.process": _program(canaries, "process"),
              "core.hooksPath": str(repo / ".git" / "hooks"), "gc.auto": "1", "core.sshCommand": _program(canaries, "ssh")}
    for key, value in config.items():
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    hooks = repo / ".git" / "hooks"
    for hook in HOOKS:
        shutil.copy(_program(canaries, f"hook-{hook}"), hooks / hook)
    (repo / ".gitattributes").write_text("*.txt filter=evil diff=evil\n*.dat filter=lfs\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    # The user's global and system-wide config are not the agent's either: the model can write ~/.gitconfig.
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    for path in (home / ".gitconfig", home / ".config" / "git" / "config", tmp_path / "global"):
        path.write_text(f"[core]\n\tfsmonitor = {_program(canaries, 'global-fsmonitor')}\n"
                        f"[filter \"evil\"]\n\tclean = {_program(canaries, 'global-clean')}\n")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(tmp_path / "global"),
           "GIT_PAGER": _program(canaries, "env-pager"), "GIT_EDITOR": _program(canaries, "env-editor"),
           "GIT_ASKPASS": _program(canaries, "env-askpass"), "GIT_EXTERNAL_DIFF": _program(canaries, "env-diff")}
    return repo, canaries, env


def test_checkpoints_undo_and_diff_run_no_program_of_the_repository(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo, canaries, env = _hostile_repository(tmp_path)
    # The hostile set-up itself works: plain git runs them (the canaries prove what they detect).
    probe = subprocess.run(["git", "status", "--short"], cwd=repo, env={**os.environ, **env}, capture_output=True)
    assert probe.returncode == 0 and {p.name for p in canaries.glob("canary-*")} >= {"canary-fsmonitor", "canary-clean"}
    for canary in canaries.glob("canary-*"):
        canary.unlink()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    folder = tmp_path / "session"
    folder.mkdir()
    records: list[dict[str, Any]] = []
    checkpoints = Checkpoints(folder, repo, records.append, lambda event: None)
    for turn in range(3):
        checkpoints.begin_turn(f"turn {turn}")
        with checkpoints.command("edit"):
            (repo / "a.txt").write_text(f"changed {turn}\n")
            (repo / "b.dat").write_text(f"data {turn}\n")
            (repo / f"new{turn}.txt").write_text("new\n")
            os.utime(repo / "a.txt", (1, 1))  # old times: git must look at the content (racy-clean checks)
    many = [repo / f"bulk{n}.txt" for n in range(250)]  # enough files for the fast-import path
    checkpoints.begin_turn("many")
    with checkpoints.command("bulk"):
        for path in many:
            path.write_text(path.name)
    assert "a.txt" in checkpoints.diff()
    assert checkpoints.apply_undo(checkpoints.plan_undo(4))[0]
    assert (repo / "a.txt").read_text() == "one\n" and not (repo / "bulk0.txt").exists()
    assert json.dumps(records).count('"a.txt"') >= 3
    assert sorted(p.name for p in canaries.glob("canary-*")) == []


def test_snapshots_still_honour_the_users_global_ignore_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The global config is not read, but the ignore file it names still is: it is a list of
    patterns, not a program, and without it every editor backup would be copied into the session."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    ignore = tmp_path / "my-ignore"
    ignore.write_text("*.swp\n")
    (tmp_path / "global").write_text(f"[core]\n\texcludesFile = {ignore}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global"))
    folder = tmp_path / "session"
    folder.mkdir()
    records: list[dict[str, Any]] = []
    checkpoints = Checkpoints(folder, repo, records.append, lambda event: None)
    checkpoints.begin_turn("t")
    with checkpoints.command("edit"):
        (repo / "kept.txt").write_text("x\n")
        (repo / "backup.swp").write_text("x\n")
    changes = {c["path"]: c for c in records[0]["changes"]}
    assert "kept.txt" in changes and "backup.swp" not in changes
