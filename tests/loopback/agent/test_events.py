"""The emit contract of core/protocol.py: lifecycle events, item ids, approvals as events answered
through the session, the model-facing tool result, the session event and /context as data."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from core import protocol as ev
from core.agent.approvals import NOBODY_TO_ASK
from core.agent.loop import Agent
from core.cancel import Cancel
from core.modes import ASK, YES
from core.runtime.open import Session, open_session
from core.session.journal import Journal
from tests.conftest import make_settings
from tests.support.events import Recorder
from tests.support.slash import slash
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events
from ui.approval_text import parse_decision


def _agent(server: ScriptedServer, tmp_path: Path, recorder: Recorder, mode: str = ASK, interactive: bool = True,
           **env: str) -> Agent:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = make_settings(server.url, tmp_path, **env)
    journal = Journal.create(tmp_path / "sessions", workspace, settings.model)
    return Agent(settings, recorder, workspace, mode, interactive=interactive, journal=journal)


def test_lifecycle_events_come_in_order_with_their_fields(tmp_path: Path, recorder: Recorder) -> None:
    script = [Reply(call_events([("list_files", {"path": "."})])), Reply(text_events("done", reasoning="hm"))]
    with ScriptedServer(script) as server:
        _agent(server, tmp_path, recorder).run("look")
    kinds = recorder.kinds()
    starts = recorder.of(ev.TurnStarted)
    assert [s.step for s in starts] == [1, 2] and starts[0].max_steps >= 2
    assert starts[0].estimated_tokens > 0 and starts[0].budget_tokens > 0 and starts[0].model
    assert kinds.index("turn_started") < kinds.index("request_sent") < kinds.index("first_byte")
    request = recorder.of(ev.RequestSent)[0]
    assert request == ev.RequestSent(attempt=1, max_attempts=request.max_attempts)
    assert recorder.of(ev.FirstByte)[0].latency >= 0
    # Deltas and their _done share one item id; reasoning and text have different ones.
    text_ids = {d.item_id for d in recorder.of(ev.TextDelta) + recorder.of(ev.TextDone)}
    reasoning_ids = {d.item_id for d in recorder.of(ev.ReasoningDelta)}
    assert reasoning_ids == {d.item_id for d in recorder.of(ev.ReasoningDone)}
    assert len(text_ids) == 1 and len(reasoning_ids) == 2 and not text_ids & reasoning_ids


def test_tool_event_carries_what_the_model_received(tmp_path: Path, recorder: Recorder) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("line of text\n" * 20_000)
    script = [Reply(call_events([("read_file", {"path": "big.txt"})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        _agent(server, tmp_path, recorder, DEEPSEEK_CONTEXT_WINDOW="16000", DEEPSEEK_MAX_OUTPUT_TOKENS="2000").run("read it")
    tool = recorder.of(ev.ToolFinished)[0]
    sent = server.requests[1]["input"][-1]["output"]
    assert tool.model_result == sent and len(tool.model_result) < len(tool.result)


def test_approval_is_an_event_answered_from_another_thread(tmp_path: Path, recorder: Recorder) -> None:
    (tmp_path / "ws").mkdir()
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        agent = _agent(server, tmp_path, recorder)

        def answer() -> None:
            deadline = time.monotonic() + 10
            while not recorder.of(ev.ApprovalRequested) and time.monotonic() < deadline:
                time.sleep(0.01)
            request = recorder.of(ev.ApprovalRequested)[0]
            assert agent.approvals.pending() == [request]
            agent.approvals.answer(request.id, "deny_reason", "use git clean instead")

        helper = threading.Thread(target=answer)
        helper.start()
        agent.run("clean")
        helper.join()
    request = recorder.of(ev.ApprovalRequested)[0]
    tool_call = recorder.of(ev.ToolStarted)[0]
    assert request.call_id == tool_call.call_id and request.command == "git reset --hard"
    assert request.cwd == str((tmp_path / "ws").resolve()) and request.reason
    assert [d["key"] for d in request.decisions] == ["1", "2", "3", "4"]
    assert recorder.of(ev.ApprovalResolved)[0].decision == "deny_reason"
    assert "use git clean instead" in server.requests[1]["input"][-1]["output"]


def test_always_for_this_session_is_not_asked_again(tmp_path: Path, recorder: Recorder) -> None:
    (tmp_path / "ws").mkdir()
    again = [Reply(call_events([("run_shell", {"command": "git clean -fd"})])), Reply(text_events("ok"))]
    with ScriptedServer(again + again) as server:
        agent = _agent(server, tmp_path, recorder)
        threading.Thread(target=lambda: _answer_first(recorder, agent, "session")).start()
        agent.run("one")
        agent.run("the same again")  # allowed without an approval event
    assert len(recorder.of(ev.ApprovalRequested)) == 1
    assert [d.by for d in recorder.of(ev.ApprovalResolved)] == ["user", "session"]
    assert "refused" not in [d.status for d in recorder.of(ev.ToolFinished)]  # ran (git fails: no repo)


def _answer_first(recorder: Recorder, agent: Agent, decision: str) -> None:
    deadline = time.monotonic() + 10
    while not recorder.of(ev.ApprovalRequested) and time.monotonic() < deadline:
        time.sleep(0.01)
    agent.approvals.answer(recorder.of(ev.ApprovalRequested)[0].id, decision)


def test_cancel_unblocks_a_waiting_approval(tmp_path: Path, recorder: Recorder) -> None:
    (tmp_path / "ws").mkdir()
    with ScriptedServer([Reply(call_events([("run_shell", {"command": "git reset --hard"})]))]) as server:
        agent = _agent(server, tmp_path, recorder)
        cancel = Cancel()

        def cancel_once_asked() -> None:  # the question, not a clock: a busy machine judges slower
            deadline = time.monotonic() + 20
            while not recorder.of(ev.ApprovalRequested) and time.monotonic() < deadline:
                time.sleep(0.02)
            cancel.cancel()

        threading.Thread(target=cancel_once_asked, daemon=True).start()
        outcome = agent.run("go", cancel)
    assert outcome.status == "aborted"
    assert recorder.of(ev.ApprovalResolved)[0].by == "interrupt"


@pytest.mark.parametrize("mode, interactive, decision", [(ASK, False, "deny"), (YES, True, "once"), (YES, False, "once")])
def test_the_mode_or_nobody_to_ask_answers_without_asking(tmp_path: Path, recorder: Recorder, mode: str,
                                                         interactive: bool, decision: str) -> None:
    (tmp_path / "ws").mkdir()
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        agent = _agent(server, tmp_path, recorder, mode, interactive)
        agent.run("go")
    assert not recorder.of(ev.ApprovalRequested)
    done = recorder.of(ev.ApprovalResolved)[0]
    assert (done.decision, done.by) == (decision, "policy")
    assert (NOBODY_TO_ASK in server.requests[1]["input"][-1]["output"]) == (decision == "deny")


def test_decisions_parse_the_same_everywhere() -> None:
    assert [parse_decision(x) for x in ("1", "y", "2", "A", "3", "n", "4", "x")] == [
        "once", "once", "session", "session", "deny", "deny", "deny_reason", None]


def test_retry_notice_has_fields(tmp_path: Path, recorder: Recorder) -> None:
    with ScriptedServer([Reply(status=503, body=b"busy"), Reply(text_events("ok"))]) as server:
        _agent(server, tmp_path, recorder).run("hi")
    retry = next(n for n in recorder.of(ev.Notice) if n.kind == "retry")
    assert retry.attempt == 2 and retry.max_attempts >= 2 and retry.delay > 0 and retry.error_kind


def test_session_event_replays_history_and_context_is_data(tmp_path: Path, recorder: Recorder) -> None:
    (tmp_path / "ws").mkdir()
    script = [Reply(call_events([("list_files", {"path": "."})])), Reply(text_events("here you go"))]
    with ScriptedServer(script) as server:
        settings = make_settings(server.url, tmp_path)
        session = open_session(settings, recorder, tmp_path / "ws", None)
        session.agent.run("list")
        first = session.journal.id
        def reopen(resume: str | None, latest: bool, exclude: str) -> Session:
            return open_session(settings, recorder, tmp_path / "ws", None, resume=resume, resume_latest=latest,
                                exclude=exclude)

        reply = slash("/clear", session, reopen)
        assert reply.session is not None and reply.session.journal.id != first
        reply = slash(f"/resume {first}", reply.session, reopen)
    history = recorder.of(ev.SessionOpened)[-1].history
    assert recorder.of(ev.SessionOpened)[-1].resumed is True
    assert [h["kind"] for h in history] == ["user", "reasoning", "tool", "assistant"]
    assert history[2]["name"] == "list_files" and history[2]["status"] == "ok"
    context = slash("/context", reply.session).answer
    assert isinstance(context, ev.ContextReport) and context.total > 0 and context.budget > 0 and context.parts
    reply.session.close()


def test_event_names_are_documented() -> None:
    names = [value for name, value in vars(ev).items() if name.isupper() and isinstance(value, str)
             and name not in ("OK", "ERROR_STATUS", "REFUSED", "INCOMPLETE", "ABORTED_STATUS", "STEP_LIMIT")]
    for name in names:
        assert f"    {name} " in ev.__doc__, name
