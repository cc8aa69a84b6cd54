"""Checkpoints, /diff and /undo through the real agent against a scripted model on 127.0.0.1.

One turn writes a new file, edits another (CRLF endings and a non-UTF-8 byte) and runs a shell
command that deletes a third; then, in a resumed session, /undo puts them back: all three in a git
work tree (whose index, status and stash list stay as the user left them), the first two outside
one, where the third is named as not restorable.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.modes import ASK
from core.protocol import ApprovalRequested, Event
from core.runtime.open import Session, open_session
from tests.conftest import make_settings
from tests.support.agent_process import run_agent
from tests.support.events import Recorder
from tests.support.git_repos import needs_git
from tests.support.slash import slash
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

EDITED = b"first line\r\nsecond caf\xe9 line\r\nthird\r\n"
THIRD = b"\x00\x01binary\xff\r\n"
DELETE = "del third.bin" if sys.platform == "win32" else "rm third.bin"  # cmd.exe and PowerShell know `del`


def _turn() -> list[Reply]:
    return [Reply(call_events([("write_file", {"path": "new.txt", "content": "brand new 你好\n"}),
                               ("edit_file", {"path": "edit.txt", "old_text": "second", "new_text": "2nd"}),
                               ("run_shell", {"command": DELETE})])),
            Reply(text_events("done"))]


def _git(ws: Path, *args: str) -> bytes:
    # No optional locks: our own `git status` must not refresh the index we compare byte for byte.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, check=True, env=env).stdout


def _user_git_state(ws: Path) -> tuple[bytes, bytes, str, bytes]:
    return (_git(ws, "status", "--porcelain"), _git(ws, "stash", "list"),
            hashlib.sha256((ws / ".git" / "index").read_bytes()).hexdigest(), _git(ws, "for-each-ref", "refs/heads"))


def _workspace(tmp_path: Path, git: bool) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "edit.txt").write_bytes(EDITED)
    (ws / "third.bin").write_bytes(THIRD)
    if git:
        ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
        _git(ws, "init", "-q")
        (ws / "stashed.txt").write_text("v1\n")
        _git(ws, "add", ".")
        _git(ws, *ident, "commit", "-qm", "init")
        (ws / "stashed.txt").write_text("v2\n")
        _git(ws, *ident, "stash", "-q")
        (ws / "staged.txt").write_text("staged\n")
        _git(ws, "add", "staged.txt")
        (ws / "untracked.txt").write_text("mine\n")
    return ws


@pytest.mark.parametrize("git", [pytest.param(True, marks=needs_git), False], ids=["git", "no-git"])
def test_undo_after_resume_puts_the_turns_files_back(tmp_path: Path, git: bool) -> None:
    ws = _workspace(tmp_path, git)
    state = _user_git_state(ws) if git else None
    with ScriptedServer(_turn()) as server:
        done = run_agent(["--one", "change things", "--yes"], server.url, tmp_path)  # ask mode (Windows) would ask
    assert done.returncode == 0, done.stderr.decode()
    assert (ws / "new.txt").exists() and not (ws / "third.bin").exists()
    assert (ws / "edit.txt").read_bytes() == EDITED.replace(b"second", b"2nd")
    if git:
        assert _user_git_state(ws)[1:] == state[1:]  # index, stash and branches untouched by the snapshots
    with ScriptedServer([Reply(text_events("unused"))]) as server:
        done = run_agent(["--resume", "--plain", "--yes"], server.url, tmp_path, stdin=b"/diff\n/undo\n/undo\n")
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "+brand new 你好" in err and "-second caf\ufffd line\\r" in err and "+2nd caf\ufffd line\\r" in err
    assert not (ws / "new.txt").exists()
    assert (ws / "edit.txt").read_bytes() == EDITED
    if git:
        assert (ws / "third.bin").read_bytes() == THIRD
        assert "Restored 3 file(s)" in err
        assert _user_git_state(ws) == state
    else:
        assert not (ws / "third.bin").exists()
        assert "Restored 2 file(s)" in err and "Not restored: third.bin (deleted by a command outside git" in err
    assert "Nothing to undo" in err  # the second /undo: that turn is undone already
    assert server.requests == []  # /diff and /undo never talk to the model


@needs_git
def test_json_reports_checkpoints_as_events(tmp_path: Path) -> None:
    _workspace(tmp_path, git=True)
    with ScriptedServer(_turn()) as server:
        done = run_agent(["--one", "change things", "--json"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    events = [json.loads(line) for line in done.stdout.decode().splitlines()]
    checkpoints = [e for e in events if e["type"] == "checkpoint"]
    assert [(e["source"], e["paths"]) for e in checkpoints] == [
        ("write_file", ["new.txt"]), ("edit_file", ["edit.txt"]), ("run_shell", ["third.bin"])]
    assert all(e["turn"] == 1 and e["not_restorable"] == [] for e in checkpoints)
    listing = run_agent(["--sessions"], server.url, tmp_path).stdout.decode()
    assert "(checkpoints " in listing  # the session listing shows what the checkpoints take


def _session(server_url: str, tmp_path: Path, ws: Path, recorder: Recorder, answers: list[bool]):
    """A session whose questions are answered, in order, by `answers` (as a front end would)."""
    asked: list[str] = []
    opened: list[Session] = []

    def emit(event: Event) -> None:
        recorder(event)
        if isinstance(event, ApprovalRequested):
            asked.append(event.action)
            yes = answers.pop(0)
            opened[0].agent.approvals.answer(event.id, "once" if yes else "deny", "" if yes else "the user said no")

    opened.append(open_session(make_settings(server_url, tmp_path), emit, ws, ASK))
    return opened[0], asked


def test_a_file_changed_behind_the_agents_back_is_not_overwritten_without_a_yes(tmp_path: Path,
                                                                                recorder: Recorder) -> None:
    ws = _workspace(tmp_path, git=False)
    script = [Reply(call_events([("edit_file", {"path": "edit.txt", "old_text": "second", "new_text": "2nd"}),
                                 ("write_file", {"path": "new.txt", "content": "x"})])),
              Reply(text_events("done")), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        session, asked = _session(server.url, tmp_path, ws, recorder, answers=[True, False, True, True])
        session.agent.run("edit it")
        (ws / "edit.txt").write_bytes(b"the user's own edit\n")
        reply = slash("/undo", session)
        assert "Nothing was changed: edit.txt changed outside the agent" in reply.text
        assert (ws / "edit.txt").read_bytes() == b"the user's own edit\n" and (ws / "new.txt").exists()
        assert "changed outside the agent since" in asked[0]
        reply = slash("/undo", session)  # this time the user confirms the overwrite
        assert "Restored 2 file(s)" in reply.text and (ws / "edit.txt").read_bytes() == EDITED
        assert not (ws / "new.txt").exists()
        session.agent.run("what now?")
        session.close()
    note = server.requests[-1]["input"][-2]
    assert note["role"] == "user" and "/undo" in note["content"] and "edit.txt, new.txt" in note["content"]
    assert server.requests[-1]["input"][-1] == {"role": "user", "content": "what now?"}


def test_undo_n_goes_back_several_turns_and_a_refusal_changes_nothing(tmp_path: Path, recorder: Recorder) -> None:
    ws = _workspace(tmp_path, git=False)
    script = [Reply(call_events([("write_file", {"path": "a.txt", "content": "1"})])), Reply(text_events("one")),
              Reply(call_events([("write_file", {"path": "a.txt", "content": "2"})])), Reply(text_events("two"))]
    with ScriptedServer(script) as server:
        session, asked = _session(server.url, tmp_path, ws, recorder, answers=[False, True])
        session.agent.run("first")
        session.agent.run("second")
        assert "Undo cancelled" in slash("/undo 2", session).text and (ws / "a.txt").read_text() == "2"
        assert slash("/undo 2", session).text == "Restored 1 file(s) to their state before the undone turn(s): a.txt."
        assert not (ws / "a.txt").exists()
        assert asked[1].startswith("undo “first”; “second”, changing these files:\n  delete a.txt")
        session.close()
