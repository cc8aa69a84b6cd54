"""Every slash command through the runtime alone: a typed op in, a typed answer carrying data (and the
op's id) out, with no front end and no text to parse."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from core import protocol as ev
from tests.support.runtime_harness import Inbox, runtime_for
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def _answer(runtime, inbox: Inbox, op: ev.CommandOp) -> ev.CommandAnswer:
    """Send `op`; its answer, after checking the job's start and end carry the same id."""
    op_id = runtime.send(op)
    started = inbox.next(ev.JobStarted)
    assert (started.kind, started.text, started.op_id) == ("command", op.command, op_id)
    answers = []
    while not isinstance(event := inbox.next(object), ev.JobEnded):
        if isinstance(event, typing.get_args(ev.CommandAnswer)):
            answers.append(event)
    assert event.op_id == op_id and len(answers) == 1 and answers[0].op_id == op_id
    return answers[0]


@pytest.fixture
def quiet(tmp_path: Path):
    """A runtime whose model is never asked."""
    inbox = Inbox()
    with ScriptedServer([]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            yield runtime, inbox
        finally:
            runtime.close()
    assert server.requests == []


def test_set_mode_reports_switches_and_steps(quiet) -> None:
    runtime, inbox = quiet
    shown = _answer(runtime, inbox, ev.SetMode())
    assert (shown.mode, shown.changed) == ("ask", False) and "ask" in shown.usable and shown.sandbox
    switched = _answer(runtime, inbox, ev.SetMode(mode="yes", id="mine"))
    assert (switched.op_id, switched.mode, switched.changed) == ("mine", "yes", True)
    after = _answer(runtime, inbox, ev.SetMode(mode="next"))
    assert after.mode == shown.usable[0] and after.changed  # yes is the last: next wraps round
    if "auto" not in shown.usable:  # no sandbox on this machine: auto cannot be chosen
        failed = _answer(runtime, inbox, ev.SetMode(mode="auto"))
        assert (failed.kind, failed.command) == ("unavailable", "/mode") and "sandbox" in failed.detail


def test_mode_and_model_outlive_a_new_session(quiet) -> None:
    runtime, inbox = quiet
    _answer(runtime, inbox, ev.SetMode(mode="yes"))
    _answer(runtime, inbox, ev.SetModel(model="deepseek-模型-2"))
    _answer(runtime, inbox, ev.NewSession())
    assert inbox.of(ev.SessionOpened)[-1].mode == "yes"
    assert _answer(runtime, inbox, ev.SetMode()).mode == "yes"
    model = _answer(runtime, inbox, ev.SetModel())
    assert (model.model, model.changed) == ("deepseek-模型-2", False)


def test_set_model_switches_the_next_request(tmp_path: Path) -> None:
    inbox = Inbox()
    with ScriptedServer([Reply(text_events("hi"))]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            switched = _answer(runtime, inbox, ev.SetModel(model="other-model"))
            assert (switched.model, switched.changed) == ("other-model", True)
            runtime.send(ev.Submit("hello"))
            inbox.next(ev.Done)
        finally:
            runtime.close()
    assert server.requests[-1]["model"] == "other-model"


def test_show_context_gives_numbers(quiet) -> None:
    runtime, inbox = quiet
    report = _answer(runtime, inbox, ev.ShowContext())
    assert isinstance(report, ev.ContextReport)
    assert 0 < report.total == sum(report.parts.values()) and report.budget > 0 and report.window >= report.budget
    assert list(report.parts.values()) == sorted(report.parts.values(), reverse=True)
    assert report.input_tokens == 0 and report.mcp_tools == 0


def test_compact_with_nothing_to_compact(quiet) -> None:
    runtime, inbox = quiet
    assert "Nothing to compact" in _answer(runtime, inbox, ev.Compact()).message


def test_sessions_are_listed_as_rows(tmp_path: Path) -> None:
    inbox = Inbox()
    with ScriptedServer([Reply(text_events("答"))]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            first = inbox.of(ev.SessionOpened)[0].id
            runtime.send(ev.Submit("第一个问题 " + "x" * 100))
            inbox.next(ev.Done)
            new = _answer(runtime, inbox, ev.NewSession()).id
            listed = _answer(runtime, inbox, ev.ListSessions())
        finally:
            runtime.close()
    assert isinstance(listed, ev.SessionsListed) and listed.more == 0 and listed.current == new != first
    (row,) = [row for row in listed.sessions if row.id == first]
    assert row.first_prompt.startswith("第一个问题 x") and row.size > 0 and row.created and row.checkpoints_size >= 0
    assert Path(listed.folder).is_dir()


def test_resume_of_no_such_session_fails_typed_and_keeps_the_session(quiet) -> None:
    runtime, inbox = quiet
    current = inbox.of(ev.SessionOpened)[0].id
    failed = _answer(runtime, inbox, ev.Resume(session="no-such-会话"))
    assert (failed.kind, failed.command) == ("not_found", "/resume") and "no session matches" in failed.detail
    assert _answer(runtime, inbox, ev.ListSessions()).current == current
    nothing = _answer(runtime, inbox, ev.Resume())  # the only other session would be this one
    assert nothing.kind == "not_found"


def test_mcp_ops_without_servers(quiet) -> None:
    runtime, inbox = quiet
    assert _answer(runtime, inbox, ev.ShowMcp()).servers == []
    for op in (ev.McpRestart(server="files"), ev.McpAllow(server="files")):
        failed = _answer(runtime, inbox, op)
        assert (failed.kind, failed.command) == ("unavailable", op.command)


def test_diff_of_the_session_and_of_the_last_turn(tmp_path: Path) -> None:
    script = [Reply(call_events([("write_file", {"path": "a.txt", "content": "一\n"})])), Reply(text_events("one")),
              Reply(call_events([("write_file", {"path": "b.txt", "content": "two\n"})])), Reply(text_events("two"))]
    inbox = Inbox()
    with ScriptedServer(script) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            empty = _answer(runtime, inbox, ev.ShowDiff())
            assert (empty.diff, empty.checkpoints) == ("", True)
            for prompt in ("write a", "write b"):
                runtime.send(ev.Submit(prompt))
                inbox.next(ev.Done)
            whole = _answer(runtime, inbox, ev.ShowDiff())
            last = _answer(runtime, inbox, ev.ShowDiff(last=True))
        finally:
            runtime.close()
    assert "a.txt" in whole.diff and "+一" in whole.diff and "b.txt" in whole.diff and not whole.last
    assert "b.txt" in last.diff and "a.txt" not in last.diff and last.last


def test_undo_with_nothing_to_undo_asks_nothing(quiet) -> None:
    runtime, inbox = quiet
    nothing = _answer(runtime, inbox, ev.Undo(turns=3))
    assert (nothing.outcome, nothing.turns, nothing.elsewhere) == ("nothing", [], [])
    assert inbox.of(ev.ApprovalRequested) == []


def test_a_mode_switch_reaches_the_open_session_s_gate(tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("done"))]
    inbox = Inbox()
    with ScriptedServer(script) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            _answer(runtime, inbox, ev.SetMode(mode="yes"))
            runtime.send(ev.Submit("reset"))
            assert inbox.next(ev.Done).status == "ok"
        finally:
            runtime.close()
    assert inbox.of(ev.ApprovalRequested) == []  # in ask mode this command asks (test_runtime.py)
    assert [(r.decision, r.by) for r in inbox.of(ev.ApprovalResolved)] == [("once", "policy")]
