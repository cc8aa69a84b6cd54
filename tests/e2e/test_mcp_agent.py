"""MCP servers through the whole agent: the scripted model server sees the tools and the results."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from core import protocol as ev
from core.agent.approvals import UNCONFINED_GRANTS
from core.mcp.open import consent_store
from core.modes import ASK, YES
from core.runtime.open import open_session
from core.sandbox import probe
from tests.conftest import make_settings
from tests.support.agent_process import run_agent
from tests.support.events import Recorder
from tests.support.mcp_servers import DEMO, HANG, demo_entry, write_config
from tests.support.slash import slash
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def _outputs(request: dict) -> list[str]:
    return [item["output"] for item in request["input"] if item.get("type") == "function_call_output"]


def test_one_shot_offers_the_schemas_and_runs_a_read_only_tool_unasked(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {"dict": demo_entry()})
    script = [Reply(call_events([("dict__lookup", {"word": "猫"})])), Reply(text_events("好的"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "look it up", "--json"], server.url, tmp_path,
                         env={"DEEPSEEK_MCP_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr.decode()
    events = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    (tool,) = [e for e in events if e["type"] == "tool"]
    assert (tool["name"], tool["server"], tool["status"]) == ("dict__lookup", "dict", "ok")  # --json carries it
    assert not [e for e in events if e["type"] == "approval"]  # read-only: nobody was asked
    first, second = server.requests
    tools = {t["name"]: t for t in first["tools"]}
    assert tools["dict__lookup"]["parameters"]["properties"]["word"]["type"] == "string"
    assert tools["dict__lookup"]["description"].startswith("[MCP server dict] Look a word up")
    assert list(tools)[-2:] == ["dict__lookup", "dict__delete_note"]  # after the built-in tools, in order
    assert _outputs(second) == ["词典：猫 的意思是「你好，世界」"]  # the Chinese result reached the model


def test_an_unannotated_tool_is_refused_in_one_shot_and_the_model_is_told_why(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {"notes": demo_entry()})
    script = [Reply(call_events([("notes__delete_note", {"name": "todo"})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "delete it"], server.url, tmp_path, env={"DEEPSEEK_MCP_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr.decode()
    (output,) = _outputs(server.requests[1])
    assert output.startswith("refused: the MCP tool delete_note of server notes does not say it is read-only")
    assert "--yes" in output and "deleted" not in output


def test_a_missing_binary_and_a_hanging_server_do_not_hold_the_run(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {
        "missing": {"command": "no-such-mcp-server-binary"},
        "hangs": {"command": HANG[0], "args": HANG[1:], "startupTimeout": 2},
        "dict": demo_entry()})
    start = time.monotonic()
    with ScriptedServer([Reply(text_events("done"))]) as server:
        done = run_agent(["--one", "hello"], server.url, tmp_path, env={"DEEPSEEK_MCP_CONFIG": str(config)})
    assert time.monotonic() - start < 25
    assert done.returncode == 0, done.stderr.decode()
    err = done.stderr.decode()
    assert "MCP server missing failed: cannot run 'no-such-mcp-server-binary': no such program" in err
    assert "MCP server hangs failed: did not start within 2 s" in err
    assert "MCP: waiting for " in err and "hangs" in err.split("MCP: waiting for ")[1].splitlines()[0]
    names = [t["name"] for t in server.requests[0]["tools"]]
    assert "dict__lookup" in names and not [n for n in names if n.startswith(("missing__", "hangs__"))]


def test_a_workspace_mcp_json_starts_nothing_without_a_yes(tmp_path: Path) -> None:
    pid_file = tmp_path / "ws" / "pids"  # in the workspace: the servers run confined
    write_config(tmp_path / "ws" / ".mcp.json", {"repo": demo_entry(pid_file), "other": demo_entry(pid_file)})
    with ScriptedServer([Reply(text_events("done"))]) as server:
        done = run_agent(["--one", "hello"], server.url, tmp_path)
        assert done.returncode == 0, done.stderr.decode()
        lines = [line for line in done.stderr.decode().splitlines() if "MCP" in line]
        assert len(lines) == 1 and "not starting repo, other from the workspace's .mcp.json without a yes" in lines[0]
        assert not pid_file.exists()
        assert not [t for t in server.requests[0]["tools"] if t["name"].startswith("repo__")]
        done = run_agent(["--yes", "--one", "hello"], server.url, tmp_path)  # --yes is the yes
    assert done.returncode == 0, done.stderr.decode()
    assert "repo__lookup" in [t["name"] for t in server.requests[1]["tools"]]
    assert len(pid_file.read_text().split()) == 2


class _Person(Recorder):
    """The events of a session whose approval questions a person answers with `decision`."""

    def __init__(self, decision: str) -> None:
        super().__init__()
        self.decision, self.asked, self.session = decision, [], None

    def __call__(self, event: ev.Event) -> None:
        super().__call__(event)
        if isinstance(event, ev.ApprovalRequested):
            self.asked.append(event.action)
            self.session.agent.approvals.answer(event.id, self.decision, "not now" if self.decision == "deny" else "")


def _open(settings, workspace: Path, person: _Person, mode: str = ASK):
    session = open_session(settings, person, workspace, mode, interactive=True)
    person.session = session
    return session


def _turn(settings, workspace: Path, decision: str, task: str) -> _Person:
    """One session with one turn, its questions answered with `decision`; the events it saw."""
    person = _Person(decision)
    session = _open(settings, workspace, person)
    try:
        session.agent.run(task)
    finally:
        session.close()
    return person


def test_an_unannotated_tool_asks_and_always_in_this_workspace_lasts(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {"notes": demo_entry()})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    call = ("notes__delete_note", {"name": "旧笔记"})
    with ScriptedServer([Reply(call_events([call])), Reply(text_events("ok"))] * 3) as server:
        settings = make_settings(server.url, tmp_path, DEEPSEEK_MCP_CONFIG=str(config))
        person = _turn(settings, workspace, "workspace", "delete the old note")
        assert person.asked == ['MCP server notes, tool delete_note, arguments {"name": "旧笔记"}']
        (request,) = person.of(ev.ApprovalRequested)
        assert request.kind == "tool" and request.rule == "notes__delete_note"
        assert "workspace" in [d["id"] for d in request.decisions]
        assert _outputs(server.requests[1]) == ["deleted 旧笔记"]
        assert consent_store(settings, workspace).tool_always("notes", "delete_note")
        later = _turn(settings, workspace, "deny", "again")  # a new session in the same workspace: not asked
        assert later.asked == [] and _outputs(server.requests[3])[-1] == "deleted 旧笔记"
        elsewhere = tmp_path / "other"  # another workspace asks; a "no" reaches the model
        elsewhere.mkdir()
        other = _turn(settings, elsewhere, "deny", "and here")
    assert len(other.asked) == 1
    assert _outputs(server.requests[5])[-1].startswith("refused: the MCP tool delete_note of server notes")


def test_mcp_command_lists_servers_with_state_and_tools_and_context_counts_them(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {
        "dict": demo_entry(), "missing": {"command": "no-such-mcp-server-binary"}})
    write_config(tmp_path / "ws" / ".mcp.json", {"repo": demo_entry()})
    with ScriptedServer([Reply(text_events("ok"))]) as server:
        settings = make_settings(server.url, tmp_path, DEEPSEEK_MCP_CONFIG=str(config))
        person = _Person("deny")  # says no to the workspace's server
        session = _open(settings, tmp_path / "ws", person)
        try:
            session.agent.run("hi")
            reply = slash("/mcp", session)
            context = slash("/context", session)
            allowed = slash("/mcp allow repo", session)
            session.agent.mcp.manager.wait_started()
            after = slash("/mcp", session)
        finally:
            session.close()
    assert person.asked == [f"MCP server repo: {sys.executable} {DEMO}"]
    lines = reply.text.splitlines()
    assert "  dict (stdio): ready with 2 tools" in lines
    assert any(line.split() == ["dict__lookup", "read-only"] for line in lines)
    assert any(line.split() == ["dict__delete_note", "asks"] for line in lines)
    assert any(line.startswith("  missing (stdio): failed: cannot run") for line in lines)
    assert "  repo (stdio): not started: it comes from the workspace's .mcp.json and needs a yes (/mcp allow repo)" in lines
    assert [s.state for s in reply.answer.servers] == ["ready", "failed", "waiting"]
    assert "2 from MCP servers" in context.text and context.answer.mcp_tools == 2
    assert allowed.text.startswith("Starting repo")
    assert "  repo (stdio): ready with 2 tools" in after.text.splitlines()
    assert json.dumps(ev.to_wire(reply.answer), ensure_ascii=False)  # the answer serialises
    assert sys.executable  # the demo servers ran with this Python


def test_workspace_consent_is_asked_once_without_showing_secrets_and_again_when_the_entry_changes(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEMO_SECRET", "tok-0042-secret")
    workspace = tmp_path / "ws"
    entry = demo_entry()
    entry["args"] = [*entry["args"], "--token=${DEMO_SECRET}"]
    write_config(workspace / ".mcp.json", {"repo": entry})

    def first_turn(decision: str) -> tuple[list[str], list[str], list[str]]:
        with ScriptedServer([Reply(text_events("ok"))]) as server:
            person = _Person(decision)
            session = _open(make_settings(server.url, tmp_path), workspace, person)
            try:
                session.agent.run("hi")
                states = [v.state for v in session.agent.mcp.manager.views()]
            finally:
                session.close()
        return person.asked, [n.message for n in person.of(ev.Notice)], states

    asked, notices, states = first_turn("deny")
    assert len(asked) == 1 and "--token=${DEMO_SECRET}" in asked[0] and "tok-0042" not in asked[0]
    assert [n for n in notices if "MCP" in n] == [
        "MCP: not starting repo from the workspace's .mcp.json without a yes (not now); /mcp allow NAME starts one"]
    assert states == ["waiting"]
    asked, _, states = first_turn("once")  # run once: started for this session only
    assert len(asked) == 1 and states == ["ready"]
    asked, _, states = first_turn("workspace")  # asked again; "always, in this workspace" is remembered
    assert len(asked) == 1 and states == ["ready"]
    asked, _, states = first_turn("deny")
    assert asked == [] and states == ["ready"]
    entry["args"].append("--more")  # a changed entry is another server: asked again
    write_config(workspace / ".mcp.json", {"repo": entry})
    asked, _, states = first_turn("deny")
    assert len(asked) == 1 and states == ["waiting"]


def _session_with(tmp_path: Path, workspace: Path, decision: str, mode: str = ASK) -> _Person:
    """One session's first turn in `workspace`, its questions answered with `decision`."""
    with ScriptedServer([Reply(text_events("ok"))]) as server:
        person = _Person(decision)
        session = _open(make_settings(server.url, tmp_path), workspace, person, mode)
        try:
            session.agent.run("hi")
            person.states = {v.name: v.state for v in session.agent.mcp.manager.views()}
        finally:
            session.close()
    return person


@pytest.mark.parametrize("change", [{"trusted": True}, {"autoApprove": ["delete_note"]},
                                   {"autoApprove": ["delete_note"], "trusted": True}])
def test_a_workspace_entry_that_gains_trust_or_auto_approval_asks_again(tmp_path: Path, change: dict) -> None:
    """The consent covers the whole entry: a command may rewrite .mcp.json, and `trusted` or
    `autoApprove` added after the user's "always" asks again, saying what the entry now lets the
    server do; a trusted one asks to run outside the sandbox, which the yes mode never answers."""
    workspace = tmp_path / "ws"
    write_config(workspace / ".mcp.json", {"repo": demo_entry()})
    first = _session_with(tmp_path, workspace, "workspace")
    assert len(first.asked) == 1 and first.states == {"repo": "ready"}
    assert _session_with(tmp_path, workspace, "deny").asked == []  # remembered, for this entry
    write_config(workspace / ".mcp.json", {"repo": demo_entry(**change)})
    # A trusted entry is asked even in the yes mode (where a sandbox works): it would leave the sandbox.
    unconfined = bool(change.get("trusted")) and probe("auto").active
    again = _session_with(tmp_path, workspace, "deny", mode=YES if unconfined else ASK)
    (request,) = again.of(ev.ApprovalRequested)
    assert again.states == {"repo": "waiting"}
    if "autoApprove" in change:
        assert "autoApprove (these tools run unasked): delete_note" in request.action
    if unconfined:
        assert request.kind == "unconfined" and "outside the sandbox" in request.reason
        assert UNCONFINED_GRANTS in request.reason and '"trusted": true' in request.action
    else:
        assert request.kind == "command"
