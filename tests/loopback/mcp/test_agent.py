"""MCP servers through the whole agent: the scripted model server sees the tools and the results."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from core.mcp.open import consent_store
from core.runtime.commands import run_command
from core.runtime.open import open_session
from tests.conftest import Recorder, make_settings
from tests.loopback.mcp.support import HANG, demo_entry, write_config
from tests.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.test_one_shot import run_agent


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
    (tool,) = [e for e in events if e["event"] == "tool"]
    assert (tool["name"], tool["server"], tool["status"]) == ("dict__lookup", "dict", "ok")  # --json carries it
    assert not [e for e in events if e["event"].startswith("approval")]  # read-only: nobody was asked
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
    names = [t["name"] for t in server.requests[0]["tools"]]
    assert "dict__lookup" in names and not [n for n in names if n.startswith(("missing__", "hangs__"))]


def test_a_workspace_mcp_json_starts_nothing_without_a_yes(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
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


class _Asker:
    """A front end that asks synchronously, answering like a person would (see make_approver)."""

    def __init__(self, decision: str) -> None:
        self.decision, self.asked = decision, []

    def __call__(self, what: str, why: str) -> str | None:
        return None if self.decide({"action": what, "reason": why})[0] != "deny" else "no"

    def decide(self, request: dict) -> tuple[str, str]:
        self.asked.append(request["action"])
        return self.decision, ""


def test_the_repl_asks_for_an_unannotated_tool_and_always_persists_per_workspace(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {"notes": demo_entry()})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    call = ("notes__delete_note", {"name": "旧笔记"})
    with ScriptedServer([Reply(call_events([call])), Reply(text_events("ok"))] * 2) as server:
        settings = make_settings(server.url, tmp_path, DEEPSEEK_MCP_CONFIG=str(config))
        asker = _Asker("session")
        session = open_session(settings, Recorder(), workspace, asker)
        try:
            session.agent.run("delete the old note")
        finally:
            session.close()
        assert asker.asked == ['MCP server notes, tool delete_note, arguments {"name": "旧笔记"}']
        assert _outputs(server.requests[1]) == ["deleted 旧笔记"]
        assert consent_store(settings, workspace).tool_always("notes", "delete_note")
        later = _Asker("deny")  # a new session in the same workspace: not asked again
        session = open_session(settings, Recorder(), workspace, later)
        try:
            session.agent.run("again")
        finally:
            session.close()
    assert later.asked == [] and _outputs(server.requests[3])[-1] == "deleted 旧笔记"


def test_mcp_command_lists_servers_with_state_and_tools_and_context_counts_them(tmp_path: Path) -> None:
    config = write_config(tmp_path / "user" / "mcp.json", {
        "dict": demo_entry(), "missing": {"command": "no-such-mcp-server-binary"}})
    write_config(tmp_path / "ws" / ".mcp.json", {"repo": demo_entry()})
    with ScriptedServer([Reply(text_events("ok"))]) as server:
        settings = make_settings(server.url, tmp_path, DEEPSEEK_MCP_CONFIG=str(config))
        session = open_session(settings, Recorder(), tmp_path / "ws", None)  # a TUI: answers later
        try:
            session.agent.run("hi")
            reply = run_command("/mcp", session)
            context = run_command("/context", session)
            allowed = run_command("/mcp allow repo", session)
            session.agent.mcp.manager.wait_started()
            after = run_command("/mcp", session)
        finally:
            session.close()
    assert "MCP: repo from the workspace's .mcp.json wait for a yes: /mcp allow repo" in session.notices
    lines = reply.text.splitlines()
    assert "  dict (stdio): ready with 2 tools" in lines
    assert any(line.split() == ["dict__lookup", "read-only"] for line in lines)
    assert any(line.split() == ["dict__delete_note", "asks"] for line in lines)
    assert any(line.startswith("  missing (stdio): failed: cannot run") for line in lines)
    assert "  repo (stdio): not started: it comes from the workspace's .mcp.json and needs a yes (/mcp allow repo)" in lines
    assert [s["state"] for s in reply.data["servers"]] == ["ready", "failed", "waiting"]
    assert "2 from MCP servers" in context.text and context.data["mcp_tools"] == 2
    assert allowed.text.startswith("Starting repo")
    assert "  repo (stdio): ready with 2 tools" in after.text.splitlines()
    assert json.dumps(reply.data, ensure_ascii=False)  # the front ends' fields serialise
    assert sys.executable  # the demo servers ran with this Python


def test_workspace_consent_is_asked_once_without_showing_secrets_and_again_when_the_entry_changes(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEMO_SECRET", "tok-0042-secret")
    workspace = tmp_path / "ws"
    entry = demo_entry()
    entry["args"] = [*entry["args"], "--token=${DEMO_SECRET}"]
    write_config(workspace / ".mcp.json", {"repo": entry})
    settings = make_settings("http://127.0.0.1:9", tmp_path)

    def open_with(answer: str | None) -> tuple[list[str], list[str], list[str]]:
        asked: list[str] = []

        def approve(what: str, why: str) -> str | None:
            asked.append(what)
            return answer

        session = open_session(settings, Recorder(), workspace, approve)
        try:
            states = [v.state for v in session.agent.mcp.manager.views()]
        finally:
            session.close()
        return asked, session.notices, states

    asked, notices, states = open_with("the user said no")
    assert len(asked) == 1 and "--token=${DEMO_SECRET}" in asked[0] and "tok-0042" not in asked[0]
    assert [n for n in notices if "MCP" in n] == [
        "MCP: not starting repo from the workspace's .mcp.json without a yes (the user said no)"]
    assert states == ["waiting"]
    asked, notices, states = open_with(None)  # yes: started, and remembered
    assert len(asked) == 1 and states == ["starting"]
    asked, _, states = open_with("must not be asked")
    assert asked == [] and states == ["starting"]
    entry["args"].append("--more")  # a changed entry is another server: asked again
    write_config(workspace / ".mcp.json", {"repo": entry})
    asked, _, states = open_with("no")
    assert len(asked) == 1 and states == ["waiting"]
