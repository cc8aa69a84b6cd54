"""The checkpoint machinery on its own: git snapshots in a sub-folder, big files, scans, diffs and
records that survive a restart. The agent-level behaviour is in test_checkpoints.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import protocol as ev
from core.checkpoints import Checkpoints, gitsnap
from core.checkpoints.diff import unified
from core.checkpoints.scan import compare, scan
from core.protocol import discard
from tests.support.events import Recorder
from tests.support.git_repos import CONVERTED, SETUPS, converting_repository, needs_git


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def _repo(tmp_path: Path) -> Path:
    """An empty git work tree."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q")
    return ws


def _checkpoints(tmp_path: Path, workspace: Path, name: str = "s") -> tuple[Checkpoints, list[dict[str, Any]]]:
    folder = tmp_path / "sessions" / name
    folder.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []

    def write(record: dict[str, Any]) -> None:
        records.append(record)
        with (folder / "journal.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    return Checkpoints(folder, workspace, write, discard), records


def _sh(command: str, cwd: Path) -> None:
    subprocess.run(command, shell=True, cwd=cwd, check=True)


@needs_git
def test_a_workspace_inside_a_repository_only_sees_its_own_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "main.py").write_text("v1\n")
    (repo / "other.txt").write_text("outside the workspace\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    checkpoints, records = _checkpoints(tmp_path, repo / "app")
    checkpoints.begin_turn("change both")
    with checkpoints.command("edit"):
        _sh("echo v2 > main.py && echo changed > ../other.txt", repo / "app")
    assert [c["path"] for c in records[0]["changes"]] == ["main.py"]
    assert checkpoints.apply_undo(checkpoints.plan_undo()) == (["main.py"], [])
    assert (repo / "app" / "main.py").read_text() == "v1\n"
    assert (repo / "other.txt").read_text() == "changed\n"  # outside the workspace: not the agent's to undo
    assert _git(repo, "for-each-ref").count("\n") == 1  # no ref of ours: only the branch


@needs_git
def test_files_too_big_to_snapshot_are_named_not_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitsnap, "MAX_FILE_BYTES", 100)
    ws = _repo(tmp_path)
    (ws / "big.dat").write_bytes(b"x" * 500)
    (ws / "small.txt").write_text("keep me\n")
    checkpoints, records = _checkpoints(tmp_path, ws)
    checkpoints.begin_turn("clean up")
    with checkpoints.command("rm big.dat small.txt"):
        _sh("rm big.dat small.txt", ws)
    changes = {c["path"]: c["before"] for c in records[0]["changes"]}
    assert changes["big.dat"] == "?" and len(changes["small.txt"]) == 64
    plan = checkpoints.plan_undo()
    assert [r.path for r in plan.restores] == ["small.txt"] and plan.cannot[0][0] == "big.dat"
    checkpoints.apply_undo(plan)
    assert (ws / "small.txt").read_text() == "keep me\n" and not (ws / "big.dat").exists()


def test_records_survive_a_restart_and_undo_goes_on_from_there(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    checkpoints, _ = _checkpoints(tmp_path, ws)
    for turn, content in enumerate((b"one\r\n", b"two\xff\r\n"), 1):
        checkpoints.begin_turn(f"turn {turn}")
        before = (ws / "f.txt").read_bytes() if (ws / "f.txt").exists() else None
        (ws / "f.txt").write_bytes(content)
        checkpoints.file_changed("write_file", "f.txt", before, content)
    again, _ = _checkpoints(tmp_path, ws)  # a resumed session reads its journal
    assert again.undoable_turns() == [1, 2] and again.turn == 2
    again.apply_undo(again.plan_undo())
    assert (ws / "f.txt").read_bytes() == b"one\r\n"
    third, _ = _checkpoints(tmp_path, ws)
    assert third.undoable_turns() == [1]  # the undo was journaled too
    assert third.diff() == "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+one\r"


def test_the_store_keeps_each_content_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    checkpoints, _ = _checkpoints(tmp_path, ws)
    checkpoints.begin_turn("flip")
    for _ in range(20):
        checkpoints.file_changed("write_file", "a.txt", b"A" * 1000, b"B" * 1000)
        checkpoints.file_changed("write_file", "a.txt", b"B" * 1000, b"A" * 1000)
    assert len([f for f in checkpoints.store.root.rglob("*") if f.is_file()]) == 2


def test_the_scan_sees_created_changed_and_deleted_files_and_skips_noise(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    start = scan(tmp_path)
    (tmp_path / "a.txt").write_text("aa")
    (tmp_path / "b.txt").unlink()
    (tmp_path / "c.txt").write_text("c")
    (tmp_path / "node_modules" / "pkg" / "x.js").write_text("x")
    found = compare(start, scan(tmp_path))
    assert (found.created, found.changed, found.deleted) == (["c.txt"], ["a.txt"], ["b.txt"])
    assert not compare(scan(tmp_path, limit=1), scan(tmp_path, limit=1)).complete


def test_unified_diff_of_bytes() -> None:
    assert unified("x.txt", b"a\nb\n", b"a\nc\n").splitlines()[-2:] == ["-b", "+c"]
    assert unified("new.txt", None, b"hi\n").startswith("--- /dev/null\n+++ b/new.txt")
    assert unified("n.txt", b"a", b"b").splitlines()[-3:] == ["-a", "+b", " \\ No newline at end of file"]
    assert unified("n.txt", b"a\n", b"a").splitlines()[-2:] == [" a", "+\\ No newline at end of file"]
    assert unified("img.png", b"\x89PNG\0\0", None) == "--- a/img.png\n+++ /dev/null\nBinary file img.png differs"
    assert unified("same", b"x", b"x") == ""


@needs_git
def test_snapshots_leave_the_users_index_alone_even_with_staged_changes(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    (ws / "t.txt").write_text("1\n")
    _git(ws, "add", ".")
    _git(ws, "commit", "-qm", "c")
    (ws / "t.txt").write_text("2\n")
    _git(ws, "add", "t.txt")
    (ws / "t.txt").write_text("3\n")
    index = (ws / ".git" / "index").read_bytes()
    checkpoints, _ = _checkpoints(tmp_path, ws)
    checkpoints.begin_turn("x")
    with checkpoints.command("rm t.txt"):
        os.remove(ws / "t.txt")
    assert (ws / ".git" / "index").read_bytes() == index
    checkpoints.apply_undo(checkpoints.plan_undo())
    assert (ws / "t.txt").read_text() == "3\n"  # the work tree's version, not the staged or committed one
    assert _git(ws, "diff", "--cached", "--name-only") == "t.txt\n"  # still staged as the user left it


@needs_git
def test_credentials_and_the_key_never_reach_the_session_folder(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    key = "sk-test-never-stored-123456"
    (ws / ".env").write_text(f"DEEPSEEK_API_KEY={key}\n")
    (ws / "notes.txt").write_text(f"the key is {key}\n")
    folder = tmp_path / "sessions" / "k"
    folder.mkdir(parents=True)
    records: list[dict[str, Any]] = []
    checkpoints = Checkpoints(folder, ws, records.append, discard, [key])
    checkpoints.begin_turn("tidy")
    with checkpoints.command("rm .env notes.txt"):
        _sh("rm .env notes.txt", ws)
    checkpoints.file_changed("write_file", "config.txt", f"old {key}".encode(), b"new")
    stored = b"".join(f.read_bytes() for f in folder.rglob("*") if f.is_file())
    assert key.encode() not in stored
    whys = {c["path"]: c.get("why", "") for r in records for c in r["changes"]}
    assert "credential" in whys[".env"] and "API key" in whys["notes.txt"] and "API key" in whys["config.txt"]
    plan = checkpoints.plan_undo()
    assert [p for p, _ in plan.cannot] == [".env", "config.txt", "notes.txt"]


@needs_git
def test_an_interrupted_command_is_recorded_up_to_where_it_stopped(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    (ws / "a.txt").write_text("a\n")
    checkpoints, records = _checkpoints(tmp_path, ws)
    checkpoints.begin_turn("x")
    with pytest.raises(KeyboardInterrupt), checkpoints.command("rm a.txt; sleep 60"):
        os.remove(ws / "a.txt")
        raise KeyboardInterrupt
    assert [c["path"] for c in records[0]["changes"]] == ["a.txt"]
    checkpoints.apply_undo(checkpoints.plan_undo())
    assert (ws / "a.txt").read_text() == "a\n"


def test_a_store_that_cannot_be_written_costs_the_undo_not_the_change(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    checkpoints, records = _checkpoints(tmp_path, ws)
    checkpoints.store.root.parent.mkdir(parents=True)
    checkpoints.store.root.write_text("a file where the blob folder should be")
    checkpoints.begin_turn("x")
    checkpoints.file_changed("write_file", "a.txt", b"old", b"new")
    (change,) = records[0]["changes"]
    assert change["before"] == "?" and "could not be saved" in change["why"]


def test_a_session_resumed_in_another_folder_never_undoes_there(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "a.txt").write_text("original\n")
    checkpoints, _ = _checkpoints(tmp_path, first)
    checkpoints.begin_turn("edit")
    checkpoints.file_changed("write_file", "a.txt", b"original\n", b"agent\n")
    (first / "a.txt").write_text("agent\n")
    elsewhere, _ = _checkpoints(tmp_path, second)  # the same session, resumed in another folder
    assert elsewhere.undoable_turns() == [] and elsewhere.elsewhere == {str(first.resolve())}
    assert elsewhere.begin_turn("next") == [] and elsewhere.turn == 2
    again, _ = _checkpoints(tmp_path, first)
    assert again.undoable_turns() == [1]


def test_a_folder_too_big_to_scan_is_said_once_and_what_was_seen_is_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.checkpoints import scan as scanning

    monkeypatch.setattr(scanning, "MAX_SCAN_ENTRIES", 3)
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in "abcde":
        (ws / f"{name}.txt").write_text(name)
    events = Recorder()
    folder = tmp_path / "sessions" / "big"
    folder.mkdir(parents=True)
    checkpoints = Checkpoints(folder, ws, lambda record: None, events)
    checkpoints.begin_turn("x")
    for _ in range(2):
        with checkpoints.command("true"):
            pass
    notices = [notice.message for notice in events.of(ev.Notice)]
    assert len(notices) == 1 and "only partly tracked" in notices[0] and "3 files" in notices[0]


@needs_git
def test_chinese_names_with_spaces_come_back_from_a_snapshot(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    (ws / "笔记 一.txt").write_bytes("你好\r\n".encode())
    _git(ws, "add", ".")
    _git(ws, "commit", "-qm", "c")
    (ws / "新 文件.txt").write_bytes(b"untracked \xff\n")
    checkpoints, records = _checkpoints(tmp_path, ws)
    checkpoints.begin_turn("删除")
    with checkpoints.command("rm *.txt"):
        _sh("rm *.txt", ws)
    assert [c["path"] for c in records[0]["changes"]] == ["新 文件.txt", "笔记 一.txt"]
    checkpoints.apply_undo(checkpoints.plan_undo())
    assert (ws / "笔记 一.txt").read_bytes() == "你好\r\n".encode()
    assert (ws / "新 文件.txt").read_bytes() == b"untracked \xff\n"


@needs_git
@pytest.mark.parametrize("setup", ["plain", *SETUPS])
def test_the_users_index_is_trusted_only_where_its_blob_holds_the_files_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: str) -> None:
    monkeypatch.setattr(gitsnap, "RACY_NS", 0)  # files just written count as settled
    hashed: list[str] = []
    real_hash = gitsnap.GitSnapshots._hash
    monkeypatch.setattr(gitsnap.GitSnapshots, "_hash", lambda self, paths: hashed.extend(paths) or real_hash(self, paths))
    ws = _repo(tmp_path)
    converting_repository(ws, setup if setup != "plain" else "autocrlf-turned-off")
    if setup == "plain":  # no conversion at all: the index's blobs are the files' bytes
        _git(ws, "add", "--renormalize", ".")
        _git(ws, "commit", "-qm", "as they are")
    checkpoints, _ = _checkpoints(tmp_path, ws)
    checkpoints.begin_turn("x")
    with checkpoints.command("rm *.txt"):
        _sh("rm *.txt", ws)
    checkpoints.apply_undo(checkpoints.plan_undo())
    assert {name: (ws / name).read_bytes() for name in CONVERTED} == CONVERTED
    converted = {"plain": [], "filter-driver": ["crlf.txt", "lf.txt", "mixed.txt"]}.get(setup, ["crlf.txt", "mixed.txt"])
    assert sorted(hashed) == converted  # the rest came from the user's index
