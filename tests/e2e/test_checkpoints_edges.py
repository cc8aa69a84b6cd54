"""Checkpoints at their edges, through the real agent against a scripted model on 127.0.0.1: a command
that swaps a file for a symlink, repositories whose git filters change line endings, ignored files,
secrets in /diff, odd file names, and the privacy of what the session folder keeps."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY
from tests.support.agent_process import run_agent
from tests.support.git_repos import CONVERTED, CRLF, SETUPS, converting_repository, needs_git, run_git
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

POSIX = sys.platform != "win32"


def _commands(*commands: str, writes: tuple[tuple[str, str], ...] = ()) -> list[Reply]:
    calls = [("read_file", {"path": path}) for path, _ in writes]  # a model writes what it has read
    calls += [("write_file", {"path": path, "content": content}) for path, content in writes]
    calls += [("run_shell", {"command": command}) for command in commands]
    return [Reply(call_events(calls)), Reply(text_events("done"))]


def _turn_then(tmp_path: Path, script: list[Reply], stdin: bytes, gone: tuple[str, ...] = ()) -> str:
    """One --one turn (after which the files `gone` must be gone), then the session resumed in the plain
    REPL with `stdin` typed (and --yes)."""
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "change things"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert not [name for name in gone if os.path.lexists(tmp_path / "ws" / name)], done.stdout.decode()
    with ScriptedServer([Reply(text_events("unused"))]) as server:
        done = run_agent(["--resume", "--plain", "--yes"], server.url, tmp_path, stdin=stdin)
    assert done.returncode == 0, done.stderr.decode()
    return done.stderr.decode("utf-8", "replace")


def _ws(tmp_path: Path, git: bool) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    if git:
        run_git(ws, "init", "-q")
    return ws


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
@pytest.mark.parametrize("git", [pytest.param(True, marks=needs_git), False], ids=["git", "no-git"])
def test_undo_replaces_a_symlink_the_command_made_and_never_writes_through_it(tmp_path: Path, git: bool) -> None:
    ws = _ws(tmp_path, git)
    (ws / "a.txt").write_bytes(b"original\n")
    if git:
        run_git(ws, "add", ".")
        run_git(ws, "commit", "-qm", "c")
    outside = tmp_path / "outside.txt"  # stands for ~/.bashrc
    outside.write_bytes(b"the user's own file\n")
    err = _turn_then(tmp_path, _commands(f"ln -sf '{outside}' a.txt", writes=(("a.txt", "agent\n"),)), b"/undo\n")
    assert outside.read_bytes() == b"the user's own file\n", err
    assert not (ws / "a.txt").is_symlink() and (ws / "a.txt").read_bytes() == b"original\n", err
    assert "Restored 1 file(s)" in err


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
@needs_git
def test_a_symlink_the_command_deleted_comes_back_as_a_symlink(tmp_path: Path) -> None:
    ws = _ws(tmp_path, git=True)
    (ws / "target.txt").write_bytes(b"t\n")
    os.symlink("target.txt", ws / "link")
    os.symlink("no/such/file", ws / "dangling")
    _turn_then(tmp_path, _commands("rm link dangling"), b"/undo\n", gone=("link", "dangling"))
    assert os.readlink(ws / "link") == "target.txt" and os.readlink(ws / "dangling") == "no/such/file"


@needs_git
@pytest.mark.parametrize("setup", SETUPS)
def test_repositories_with_line_ending_filters_come_back_byte_for_byte(tmp_path: Path, setup: str) -> None:
    ws = _ws(tmp_path, git=True)
    converting_repository(ws, setup)
    (ws / "untracked.txt").write_bytes(CRLF)
    index = (ws / ".git" / "index").read_bytes()
    err = _turn_then(tmp_path, _commands("rm *.txt"), b"/undo\n", gone=("untracked.txt", *CONVERTED))
    assert "Restored 4 file(s)" in err, err
    assert {name: (ws / name).read_bytes() for name in CONVERTED} == CONVERTED
    assert (ws / "untracked.txt").read_bytes() == CRLF
    assert (ws / ".git" / "index").read_bytes() == index


@needs_git
def test_a_deleted_ignored_file_is_named_as_not_restorable(tmp_path: Path) -> None:
    ws = _ws(tmp_path, git=True)
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    (ws / "app.log").write_text("log\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\0obj")
    with ScriptedServer(_commands("rm app.log", "rm -r build")) as server:
        done = run_agent(["--one", "clean", "--json"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    events = [json.loads(line) for line in done.stdout.decode().splitlines()]
    (first, second) = [e for e in events if e["type"] == "checkpoint"]
    assert first["not_restorable"] == ["app.log"] and second["not_restorable"] == ["build/"]
    with ScriptedServer([Reply(text_events("unused"))]) as server:
        err = run_agent(["--resume", "--plain", "--yes"], server.url, tmp_path, stdin=b"/undo\n").stderr.decode()
    assert "cannot restore app.log: ignored by git" in err and "cannot restore build/: ignored by git" in err


@pytest.mark.parametrize("git", [pytest.param(True, marks=needs_git), False], ids=["git", "no-git"])
def test_diff_redacts_secrets_and_defuses_control_characters(tmp_path: Path, git: bool) -> None:
    ws = _ws(tmp_path, git)
    token = "ghp_" + "a1B2" * 9
    (ws / "config.txt").write_text("token = old\n")
    script = _commands(writes=(("config.txt", f"key = {TEST_KEY}\ntoken = {token}\nbell \x1b]0;title\x07\n"),))
    err = _turn_then(tmp_path, script, b"/diff\n")
    assert TEST_KEY not in err and token not in err and "\x1b" not in err
    assert "+key = [REDACTED]" in err and "+token = [REDACTED]" in err and "\\x1b]0;title\\x07" in err


ODD = [b"n-new\nline.txt", b"n-tab\there.txt", b'n-"double".txt', b"n-'single'.txt", b"n-bad\xff\xfe.txt",
       "n-中文 名字.txt".encode(), b"n-back\\slash.txt", b"n-cr\r.txt"]


@pytest.mark.skipif(not POSIX, reason="these names are not allowed on Windows")
@pytest.mark.parametrize("git", [pytest.param(True, marks=needs_git), False], ids=["git", "no-git"])
def test_odd_file_names_are_snapshotted_and_restored(tmp_path: Path, git: bool) -> None:
    ws = _ws(tmp_path, git)
    for name in ODD:
        (ws / os.fsdecode(name)).write_bytes(b"content of " + name + b"\r\n")
    if git:
        run_git(ws, "add", os.fsdecode(ODD[0]), os.fsdecode(ODD[5]))  # tracked ones and untracked ones
        run_git(ws, "commit", "-qm", "c")
    err = _turn_then(tmp_path, _commands("rm -- n-*"), b"/undo\n", gone=tuple(map(os.fsdecode, ODD)))
    if git:
        assert f"Restored {len(ODD)} file(s)" in err, err
        for name in ODD:
            assert (ws / os.fsdecode(name)).read_bytes() == b"content of " + name + b"\r\n"
    else:
        assert "Nothing can be restored" in err and "cannot restore n-中文 名字.txt: deleted by a command outside git" in err
        assert "cannot restore n-new\nline.txt" in err and "n-cr\\r.txt" in err and "n-bad\ufffd\ufffd.txt" in err


@pytest.mark.skipif(not POSIX, reason="POSIX permissions")
@needs_git
def test_what_the_checkpoints_keep_is_private(tmp_path: Path) -> None:
    ws = _ws(tmp_path, git=True)
    (ws / "a.txt").write_text("a\n")
    with ScriptedServer(_commands("rm a.txt", writes=(("b.txt", "b\n"),))) as server:
        done = run_agent(["--one", "x"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    (folder,) = (tmp_path / "sessions").iterdir()
    kept = list((folder / "checkpoints").rglob("*"))
    assert any(p.is_file() for p in kept)
    for path in [folder / "checkpoints", *kept]:
        assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path
