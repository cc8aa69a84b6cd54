"""The runtime driven with no front end at all: ops in, typed events out. Approvals, interrupts and
session swaps go through its input messages only, as every front end's do."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from core import protocol as ev
from tests.conftest import TEST_KEY
from tests.support.runtime_harness import Inbox, runtime_for
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def test_an_approval_is_asked_as_an_event_and_answered_by_an_op(tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("done"))]
    inbox = Inbox()
    with ScriptedServer(script) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            runtime.send(ev.Submit("throw my changes away"))
            question = inbox.next(ev.ApprovalRequested)
            assert question.command == "git reset --hard" and question.reason and question.kind == "command"
            runtime.send(ev.Answer(question.id, "deny_reason", "keep my changes"))
            inbox.next(ev.JobEnded)
        finally:
            runtime.close()
    resolved = inbox.of(ev.ApprovalResolved)[0]
    assert (resolved.id, resolved.decision, resolved.by) == (question.id, "deny_reason", "user")
    assert inbox.of(ev.ToolFinished)[0].status == "refused"
    assert "keep my changes" in server.requests[1]["input"][-1]["output"]
    assert [e.type for e in inbox.all if isinstance(e, ev.JobStarted | ev.JobEnded)] == ["job_started", "job_ended"]


def test_an_interrupt_op_stops_a_stalled_stream_at_once(tmp_path: Path) -> None:
    stalled = Reply(text_events("never finishes " * 20, chunks=20), delay=1.0)
    inbox = Inbox()
    with ScriptedServer([stalled, Reply(text_events("next answer"))]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            runtime.send(ev.Submit("go"))
            inbox.next(ev.TextDelta)
            start = time.monotonic()
            runtime.send(ev.Interrupt("stop now"))
            aborted = inbox.next(ev.Aborted)
            inbox.next(ev.JobEnded)
            assert time.monotonic() - start < 3 and aborted.reason == "stop now"
            runtime.send(ev.Submit("again"))
            assert inbox.next(ev.Done).text == "next answer"
        finally:
            runtime.close()
    assert inbox.of(ev.Done)[0].status == "aborted"


def test_clear_and_resume_swap_the_session_inside_theruntime_for(tmp_path: Path) -> None:
    inbox = Inbox()
    with ScriptedServer([Reply(text_events("first")), Reply(text_events("second")),
                         Reply(text_events("third"))]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            first = inbox.of(ev.SessionOpened)[0]
            runtime.send(ev.Submit("in the first session"))
            inbox.next(ev.JobEnded)
            op_id = runtime.send(ev.NewSession())
            fresh = inbox.next(ev.SessionOpened)
            assert fresh.id != first.id and not fresh.history
            switched = inbox.next(ev.SessionSwitched)
            assert (switched.op_id, switched.id, switched.previous, switched.resumed) == (op_id, fresh.id, first.id,
                                                                                          False)
            runtime.send(ev.Submit("in the second session"))
            inbox.next(ev.JobEnded)
            runtime.send(ev.Resume(session=first.id))
            resumed = inbox.next(ev.SessionOpened)
            assert resumed.id == first.id and resumed.resumed
            assert [h["text"] for h in resumed.history if h["kind"] == "user"] == ["in the first session"]
            assert inbox.next(ev.JobEnded).kind == "command"  # the /resume's: the next one is the task's
            runtime.send(ev.Submit("back in the first"))
            inbox.next(ev.JobEnded)
        finally:
            runtime.close()
    sent = [m.get("content") for m in server.requests[-1]["input"] if m.get("role") == "user"]
    assert sent == ["in the first session", "back in the first"]


def test_undo_asks_through_the_same_protocol(tmp_path: Path) -> None:
    script = [Reply(call_events([("read_file", {"path": "a.txt"}), ("write_file", {"path": "a.txt", "content": "new\n"})])),
              Reply(text_events("ok"))]
    inbox = Inbox()
    with ScriptedServer(script) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            (tmp_path / "ws" / "a.txt").write_text("old\n")
            runtime.send(ev.Submit("rewrite a.txt"))
            inbox.next(ev.JobEnded)
            runtime.send(ev.Undo(id="undo-1"))
            question = inbox.next(ev.ApprovalRequested)
            assert question.tool == "/undo" and "a.txt" in question.action
            runtime.send(ev.Answer(question.id, "deny"))
            refused = inbox.next(ev.UndoFinished)
            assert (refused.op_id, refused.outcome, refused.turns) == ("undo-1", "cancelled", ["rewrite a.txt"])
            assert (tmp_path / "ws" / "a.txt").read_text() == "new\n"
            runtime.send(ev.Undo(turns=1))
            runtime.send(ev.Answer(inbox.next(ev.ApprovalRequested).id, "once"))
            assert inbox.next(ev.Undone).restored == ["a.txt"]
            done = inbox.next(ev.UndoFinished)
            assert (done.outcome, done.restored, done.not_restored) == ("restored", ["a.txt"], [])
        finally:
            runtime.close()
    assert (tmp_path / "ws" / "a.txt").read_text() == "old\n"


def test_every_event_passes_the_runtime_s_redaction(tmp_path: Path) -> None:
    script = [Reply(text_events(f"the key is {TEST_KEY}, 密钥"))]
    inbox = Inbox()
    with ScriptedServer(script) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            runtime.send(ev.SetModel())
            inbox.next(ev.JobEnded)
            runtime.send(ev.Submit("say it"))
            done = inbox.next(ev.Done)
        finally:
            runtime.close()
    assert TEST_KEY not in repr(inbox.all) and "[REDACTED]" in done.text and "密钥" in done.text


def test_always_in_this_workspace_keeps_a_rule_for_the_next_session(tmp_path: Path) -> None:
    command = f'"{Path(sys.executable).as_posix()}" make.py'  # no python3 on Windows
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("ok"))]
    inbox = Inbox()
    with ScriptedServer(script + script) as server:
        runtime = runtime_for(server.url, tmp_path, inbox, allow=())  # ask mode: no sandbox is asked for
        (tmp_path / "ws" / "make.py").write_text("open('made.txt', 'a').write('x')\n")
        try:
            runtime.send(ev.Submit("make it"))
            question = inbox.next(ev.ApprovalRequested)
            assert question.rule == Path(sys.executable).as_posix() and question.decisions[-1]["key"] == "5"
            runtime.send(ev.Answer(question.id, "workspace"))
            inbox.next(ev.JobEnded)
        finally:
            runtime.close()
        later = Inbox()
        runtime = runtime_for(server.url, tmp_path, later)  # a new session in the same workspace
        try:
            runtime.send(ev.Submit("make it again"))
            later.next(ev.JobEnded)
        finally:
            runtime.close()
    assert not later.of(ev.ApprovalRequested) and (tmp_path / "ws" / "made.txt").read_text() == "xx"
    assert not list((tmp_path / "ws").glob("*.json"))  # the rule lives in the data folder, not the repository
