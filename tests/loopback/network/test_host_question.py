"""In an interactive session a host not allowed is put to the user through the approval gate
while the command waits: the answer decides the command's connection, and "always, in this
workspace" keeps the host with the workspace's allow rules for the next session."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from core import protocol as ev
from core.agent.loop import Agent
from core.agent.rules import AllowRules
from core.modes import AUTO
from core.sandbox import probe
from core.session.journal import Journal
from tests.conftest import make_settings
from tests.support.events import Recorder
from tests.support.network_listeners import stand_in
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not probe("auto").active,
                                reason="needs the Linux kernel sandbox")


class _Answering(Recorder):
    """Answers every network question with `decision`, from another thread as a front end would."""

    def __init__(self, decision: str) -> None:
        super().__init__()
        self.decision = decision
        self.agent: Agent | None = None

    def __call__(self, event: ev.Event) -> None:
        super().__call__(event)
        if isinstance(event, ev.ApprovalRequested) and event.kind == "network":
            agent = self.agent
            assert agent is not None
            threading.Thread(target=agent.approvals.answer, args=(event.id, self.decision), daemon=True).start()


def _session(tmp_path: Path, decision: str, port: int) -> tuple[str, _Answering]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    # --noproxy '': loopback through the proxy too, so that 127.0.0.1 stands in for a named host
    fetch = f"curl -sS --max-time 20 --noproxy '' http://127.0.0.1:{port}/asked"
    recorder = _Answering(decision)
    with ScriptedServer([Reply(call_events([("run_shell", {"command": fetch})])), Reply(text_events("ok"))]) as server:
        settings = make_settings(server.url, tmp_path)
        agent = Agent(settings, recorder, workspace, AUTO, interactive=True,
                      journal=Journal.create(tmp_path / "sessions", workspace, settings.model))
        recorder.agent = agent
        try:
            agent.run("fetch it")
        finally:
            assert agent.network is not None
            agent.network.close()
        outputs = [i["output"] for i in server.requests[-1]["input"] if i.get("type") == "function_call_output"]
    return outputs[0], recorder


@pytest.mark.parametrize(("decision", "passes", "kept"), [("workspace", True, ["127.0.0.1"]), ("once", True, []),
                                                          ("deny", False, [])])
def test_the_users_answer_decides_and_always_is_kept(tmp_path: Path, decision: str, passes: bool,
                                                     kept: list[str]) -> None:
    with stand_in() as port:
        output, recorder = _session(tmp_path, decision, port)
    asked = recorder.of(ev.ApprovalRequested)
    assert len(asked) == 1 and asked[0].kind == "network" and f"127.0.0.1:{port}" in asked[0].action
    assert ("stand-in answered /asked" in output) is passes, output
    if not passes:
        assert "the user refused it" in output and "AGENT_NETWORK_ALLOW=127.0.0.1" in output
    assert AllowRules(tmp_path, tmp_path / "ws").hosts == kept


def test_a_kept_host_is_not_asked_again(tmp_path: Path) -> None:
    AllowRules(tmp_path, tmp_path / "ws").add("127.0.0.1", "hosts")
    with stand_in() as port:
        output, recorder = _session(tmp_path, "deny", port)
    assert "stand-in answered /asked" in output
    assert not recorder.of(ev.ApprovalRequested)
