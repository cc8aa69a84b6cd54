"""Leaving the sandbox is never the mode's to answer: `yes` answers the gate's questions, and an
"unconfined" question is asked of a person (once, never "always"), or refused with nobody to ask."""

from __future__ import annotations

import sys
import threading

import pytest

from core import protocol as ev
from core.agent.approvals import NOBODY_TO_UNCONFINE, UNCONFINED_GRANTS, Approvals, Keeper
from core.cancel import Cancel
from core.modes import ASK, AUTO, YES
from core.sandbox import Policy, sandbox_denial
from core.sandbox.blocked import how_to_allow
from core.session.items import FunctionCall
from tests.support.events import Recorder

CALL = FunctionCall(call_id="c1", name="run_shell", arguments='{"command": "cat ~/.ssh/id_ed25519"}')


def _gate(mode: str, interactive: bool, answer: str | None = None):
    events = Recorder()
    approvals: Approvals

    def emit(event) -> None:
        events(event)
        if isinstance(event, ev.ApprovalRequested) and answer is not None:
            threading.Thread(target=approvals.answer, args=(event.id, answer)).start()

    approvals = Approvals(emit, mode, interactive=interactive)
    return approvals, events


@pytest.mark.parametrize("mode", [YES, AUTO, ASK])
def test_nobody_to_ask_refuses_to_leave_the_sandbox_in_every_mode(mode: str) -> None:
    approvals, events = _gate(mode, interactive=False)
    refusal = approvals.gate(CALL, "/ws", Cancel(), kind="unconfined")(
        "run outside the sandbox: x", "blocked"
    )
    assert refusal == NOBODY_TO_UNCONFINE and "--yes" not in refusal
    assert not events.of(ev.ApprovalRequested)


def test_yes_still_answers_the_gates_own_questions() -> None:
    approvals, _ = _gate(YES, interactive=False)
    assert approvals.gate(CALL, "/ws", Cancel())("run: x", "discards uncommitted work") is None


@pytest.mark.parametrize("answer, allowed", [("once", True), ("deny", False)])
def test_in_the_yes_mode_a_person_is_asked_to_leave_the_sandbox(answer: str, allowed: bool) -> None:
    approvals, events = _gate(YES, interactive=True, answer=answer)
    refusal = approvals.gate(CALL, "/ws", Cancel(), kind="unconfined")(
        "run outside the sandbox: x", "blocked"
    )
    assert (refusal is None) == allowed
    (asked,) = events.of(ev.ApprovalRequested)
    assert asked.kind == "unconfined" and UNCONFINED_GRANTS in asked.reason
    assert [d["id"] for d in asked.decisions] == ["once", "deny", "deny_reason"]  # never an "always"


def test_a_yes_to_leave_the_sandbox_holds_for_one_run_only() -> None:
    approvals, events = _gate(AUTO, interactive=True, answer="once")
    gate = approvals.gate(CALL, "/ws", Cancel(), kind="unconfined")
    assert gate("run outside the sandbox: x", "blocked") is None
    assert gate("run outside the sandbox: x", "blocked") is None
    assert len(events.of(ev.ApprovalRequested)) == 2


@pytest.mark.skipif(sys.platform == "win32", reason="the sandbox's denials are read as the Linux sandbox reports them")
def test_the_model_is_told_how_to_allow_exactly_what_was_refused(tmp_path) -> None:
    ws, secret, outside = tmp_path / "ws", tmp_path / "home" / ".ssh", tmp_path / "x"
    for folder in (ws, secret, outside):
        folder.mkdir(parents=True)
    (outside / "f.txt").write_text("keep")
    policy = Policy(workspace=ws, writable=(ws,), denied=(secret,), network=False)
    output = (
        f"cat: {secret}/id_ed25519: Permission denied\nsh: 1: cannot create {outside}/f.txt: Permission denied\n"
        "curl: (7) Failed to connect: Permission denied\n"
    )
    blocked = sandbox_denial(output, 1, policy)
    assert blocked is not None and set(blocked.kept_out) == {secret / "id_ed25519", outside / "f.txt"}
    said = how_to_allow(blocked.kept_out, blocked.actions, policy)
    assert (
        f"AGENT_SANDBOX_WRITABLE={outside}" in said and f"{secret / 'id_ed25519'} is a secret place" in said
    )
    assert "--no-sandbox" in said and "--yes" not in said
    network = sandbox_denial("curl: (7) Failed to connect to x port 80: Permission denied", 7, policy)
    assert network is not None and "AGENT_NETWORK=off" in how_to_allow(
        network.kept_out, network.actions, policy
    )


@pytest.mark.parametrize(
    "answer, kept, kind",
    [
        ("once", False, "command"),
        ("session", False, "command"),
        ("workspace", True, "command"),
        ("once", False, "unconfined"),
        ("workspace", True, "unconfined"),
    ],
)
def test_a_keeper_keeps_only_on_always_in_this_workspace(answer: str, kept: bool, kind: str) -> None:
    """ "Run once" means once: what a question of the agent's own keeps (an MCP server's consent) is
    kept only on "always, in this workspace", which the question names."""
    calls: list[str] = []
    approvals, events = _gate(AUTO, interactive=True, answer=answer)
    keeper = Keeper("start repo as configured here", lambda: calls.append("kept") or None)
    assert (
        approvals.ask(
            "MCP server repo: x", "starts", asker="mcp", cwd="/ws", cancel=Cancel(), kind=kind, keep=keeper
        )
        is None
    )
    assert (calls == ["kept"]) == kept
    (asked,) = events.of(ev.ApprovalRequested)
    assert asked.rule == "start repo as configured here" and "workspace" in [d["id"] for d in asked.decisions]


def test_with_nobody_to_ask_a_keeper_names_no_allow_rule() -> None:
    approvals, _ = _gate(ASK, interactive=False)
    keeper = Keeper("start repo as configured here", lambda: None)
    refusal = approvals.ask(
        "MCP server repo: x", "starts", asker="mcp", cwd="/ws", cancel=Cancel(), keep=keeper
    )
    assert refusal is not None and "--allow" not in refusal
