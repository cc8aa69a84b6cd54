"""`Runtime.send` only enqueues: a front end calls it from its event loop or from inside an event
callback, and it returns at once even when acting on the op takes long."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import core.runtime.runtime
from core import protocol as ev
from core.cancel import Cancel
from tests.support.runtime_harness import Inbox, runtime_for
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

AT_ONCE = 0.2  # seconds; stopping the slow job below takes 1 s


class _SlowCancel(Cancel):
    """A job's token whose cancellation takes as long as ending a stubborn process tree can."""

    def cancel(self, reason: str = "interrupted by the user") -> None:
        time.sleep(1.0)
        super().cancel(reason)


def _timed(runtime, op: ev.Op) -> float:
    start = time.monotonic()
    runtime.send(op)
    return time.monotonic() - start


def test_an_interrupt_returns_at_once_though_stopping_the_job_takes_long(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(core.runtime.runtime, "Cancel", _SlowCancel)
    stalled = Reply(text_events("never finishes " * 20, chunks=20), delay=1.0)
    inbox = Inbox()
    with ScriptedServer([stalled]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        try:
            runtime.send(ev.Submit("go"))
            inbox.next(ev.TextDelta)
            took = _timed(runtime, ev.Interrupt("stop now"))
            assert took < AT_ONCE, f"send waited {took:.2f} s"
            assert inbox.next(ev.Aborted).reason == "stop now"
            inbox.next(ev.JobEnded)
        finally:
            runtime.close()


@pytest.mark.parametrize("decision", ["once", "deny"])
def test_ops_sent_from_inside_an_event_callback_return_at_once_and_act_after(tmp_path: Path,
                                                                             decision: str) -> None:
    """The callback runs on the worker thread, in the middle of the turn that asks."""
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("好了"))]
    timings: list[float] = []
    inbox = Inbox()
    holder: list = []

    def on_event(event: ev.Event) -> None:
        inbox(event)
        if isinstance(event, ev.ApprovalRequested):
            assert threading.current_thread().name == "agent-runtime"
            timings.append(_timed(holder[0], ev.Answer(event.id, decision, "")))
            timings.append(_timed(holder[0], ev.Interrupt("and stop")))

    with ScriptedServer(script) as server:
        holder.append(runtime := runtime_for(server.url, tmp_path, on_event))
        try:
            runtime.send(ev.Submit("throw my changes away"))
            inbox.next(ev.JobEnded)
        finally:
            runtime.close()
    assert len(timings) == 2 and max(timings) < AT_ONCE, timings
    resolved = inbox.of(ev.ApprovalResolved)
    assert [(r.decision, r.by) for r in resolved] == [(decision, "user")]
    assert inbox.of(ev.Done)[-1].status == "aborted"


def test_an_interrupt_with_nothing_running_changes_nothing_and_close_ends_both_threads(tmp_path: Path) -> None:
    inbox = Inbox()
    before = set(threading.enumerate())
    with ScriptedServer([Reply(text_events(f"答 {n}")) for n in range(3)]) as server:
        runtime = runtime_for(server.url, tmp_path, inbox)
        for n in range(3):  # the next job is queued right behind the interrupt: it must not be stopped
            assert _timed(runtime, ev.Interrupt("nothing runs")) < AT_ONCE
            runtime.send(ev.Submit("hello"))
            assert inbox.next(ev.Done).text == f"答 {n}"
        started = {t.name for t in set(threading.enumerate()) - before}
        runtime.close()
    assert {"agent-runtime", "agent-control"} <= started
    assert not [t for t in set(threading.enumerate()) - before if t.name in ("agent-runtime", "agent-control")]
