"""The agent loop in-process against the loopback server: shaping, overflow recovery,
tool errors (repeats: test_prune_repeats.py), /context and /compact."""

from __future__ import annotations

import json
from pathlib import Path

from core import protocol as ev
from core.agent.loop import Agent
from core.context import SUMMARY_MARK
from core.session.items import FunctionCall, FunctionCallOutput
from core.session.journal import Journal, load
from tests.conftest import make_settings
from tests.support.events import Recorder
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

OVERFLOW = (b'{"error":{"message":"This model\'s maximum context length is 131072 tokens. However, you requested '
            b'131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the '
            b'messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}')


def make_agent(server: ScriptedServer, tmp_path: Path, recorder: Recorder, **env: str) -> Agent:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = make_settings(server.url, tmp_path, **env)
    journal = Journal.create(tmp_path / "sessions", workspace, settings.model)
    return Agent(settings, recorder, workspace, "yes", journal=journal)


def _big_history_script(n: int) -> list[Reply]:
    """n turns that each read a large file, then an answer."""
    return [Reply(call_events([("read_file", {"path": f"f{i}.txt"})])) for i in range(n)]


def _files(tmp_path: Path, n: int, size: int = 12_000) -> None:
    (tmp_path / "ws").mkdir(exist_ok=True)
    for i in range(n):
        (tmp_path / "ws" / f"f{i}.txt").write_text(f"file {i}\n" + ("lorem ipsum dolor sit amet\n" * (size // 27)))


def test_overflow_is_reshaped_and_retried_once(tmp_path: Path, recorder: Recorder) -> None:
    _files(tmp_path, 6)
    script = [*_big_history_script(6), Reply(status=400, body=OVERFLOW, content_type="application/octet-stream"),
              Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        agent = make_agent(server, tmp_path, recorder)
        outcome = agent.run("read all the files")
    assert outcome.status == "ok" and outcome.text == "done"
    rejected, accepted = server.requests[-2], server.requests[-1]
    assert len(json.dumps(accepted)) < len(json.dumps(rejected)) / 2
    assert any("too long" in n.message for n in recorder.of(ev.Notice))
    # Pairs stay whole in the reshaped request, and the user's message is still there.
    calls = {i["call_id"] for i in accepted["input"] if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in accepted["input"] if i.get("type") == "function_call_output"}
    assert calls == outputs
    assert any(i.get("content") == "read all the files" for i in accepted["input"])


def test_overflow_twice_stops_gracefully_and_keeps_everything(tmp_path: Path, recorder: Recorder) -> None:
    _files(tmp_path, 2)
    reject = Reply(status=400, body=OVERFLOW, content_type="application/octet-stream")
    with ScriptedServer([*_big_history_script(2), reject, reject, Reply(text_events("unused"))]) as server:
        agent = make_agent(server, tmp_path, recorder)
        outcome = agent.run("go")
    assert outcome.status == "error" and "Nothing was lost" in outcome.error.message
    assert len(server.requests) == 4
    loaded = load(agent.journal.folder)
    assert [type(i).__name__ for i in loaded.items].count("FunctionCallOutput") == 2
    assert recorder.of(ev.Done)[-1].status == "error"


def test_tool_errors_become_results_not_crashes(tmp_path: Path, recorder: Recorder) -> None:
    bad = Reply(call_events([("read_file", {"path": "../../etc/passwd"}), ("no_such_tool", {}),
                             ("edit_file", {"path": "missing.py"})]))
    with ScriptedServer([bad, Reply(text_events("handled"))]) as server:
        agent = make_agent(server, tmp_path, recorder)
        outcome = agent.run("try things")
    assert outcome.status == "ok"
    outputs = [i["output"] for i in server.requests[-1]["input"] if i.get("type") == "function_call_output"]
    assert "outside the workspace" in outputs[0]
    assert "no tool named 'no_such_tool'" in outputs[1]
    assert "missing required argument" in outputs[2]


def test_invalid_json_arguments_are_reported_to_the_model(tmp_path: Path, recorder: Recorder) -> None:
    events = call_events([("read_file", {"path": "x"})])
    for event in events:
        if event["type"] == "response.function_call_arguments.done":
            event["arguments"] = '{"path": "x"'
        if event["type"] == "response.output_item.done" and event["item"]["type"] == "function_call":
            event["item"]["arguments"] = '{"path": "x"'
    with ScriptedServer([Reply(events), Reply(text_events("fixed"))]) as server:
        agent = make_agent(server, tmp_path, recorder)
        agent.run("read")
    output = server.requests[-1]["input"][-1]["output"]
    assert "not valid JSON" in output


def test_context_report_and_compact(tmp_path: Path, recorder: Recorder) -> None:
    _files(tmp_path, 4)
    summary = Reply(text_events("The user asked to read files f0..f3; all were read; next: answer."))
    with ScriptedServer([*_big_history_script(4), Reply(text_events("read them")), summary,
                         Reply(text_events("after compaction"))]) as server:
        agent = make_agent(server, tmp_path, recorder)
        agent.run("read the files")
        report = agent.context_data()
        assert report["parts"]["tool results: read_file"] > 0 and report["parts"]["instructions"] > 0
        assert report["budget"] > 0
        message = agent.compact()
        assert "summar" in message.lower() or "dropped" in message.lower()
        agent.run("and now?")
    last = server.requests[-1]["input"]
    assert any(SUMMARY_MARK in str(i.get("content", "")) for i in last)
    assert len(json.dumps(last)) < len(json.dumps(server.requests[4]["input"]))
    summary_request = server.requests[5]
    assert summary_request["tool_choice"] == "none"
    # The journal itself is untouched by compaction: every read is still there.
    loaded = load(agent.journal.folder)
    assert sum(isinstance(i, FunctionCallOutput) for i in loaded.items) == 4
    assert sum(isinstance(i, FunctionCall) for i in loaded.items) == 4


def test_usage_events_carry_context_and_cost(tmp_path: Path, recorder: Recorder) -> None:
    with ScriptedServer([Reply(text_events("hi"))]) as server:
        agent = make_agent(server, tmp_path, recorder)
        agent.run("hello")
    (usage,) = recorder.of(ev.UsageReported)
    assert usage.input_tokens == 100 and usage.cached_tokens == 50
    assert usage.budget_tokens == agent.context.budget and usage.context_tokens == 100
    assert usage.cost_usd > 0 and usage.session_cost_usd == usage.cost_usd


def test_the_model_reads_pruned_output_back_with_read_output(tmp_path: Path, recorder: Recorder) -> None:
    import sys

    from core.prune.archive import OutputArchive

    command = (f"{sys.executable} -c \"[print(f'row {{i}}: checksum {{i * 7919 % 10007}}') for i in range(5000)]; "
               "print('all rows written')\"")
    script = [Reply(call_events([("run_shell", {"command": command})])),
              Reply(call_events([("read_output", {"id": "out-1", "grep": "^row 2500:"})])),
              Reply(call_events([("read_output", {"id": "out-1", "offset": 4999, "limit": 3})])),
              Reply(text_events("found it"))]
    with ScriptedServer(script) as server:
        agent = make_agent(server, tmp_path, recorder)
        agent.archive = OutputArchive(agent.journal.folder / "outputs")
        outcome = agent.run("what is the checksum of row 2500?")
    assert outcome.status == "ok"
    outputs = [i["output"] for i in server.requests[-1]["input"] if i.get("type") == "function_call_output"]
    pruned, grepped, paged = outputs
    assert pruned.startswith("exit code 0") and "full output: out-1" in pruned
    assert f"row 2500: checksum {2500 * 7919 % 10007}" not in pruned and len(pruned) < 4000
    assert f"row 2500: checksum {2500 * 7919 % 10007}" in grepped
    assert "row 4999" in paged and "all rows written" in paged
    assert (agent.journal.folder / "outputs" / "out-1.log").stat().st_size > 100_000


def test_an_interrupted_compaction_changes_nothing(tmp_path: Path, recorder: Recorder) -> None:
    from core.cancel import Cancel

    _files(tmp_path, 4)
    with ScriptedServer([*_big_history_script(4), Reply(text_events("read them"))]) as server:
        agent = make_agent(server, tmp_path, recorder)
        agent.run("read the files")
        before = len(server.requests)
        shape_before = agent.context.breakdown(agent.history, agent.instructions)
        cancel = Cancel()
        cancel.cancel()
        message = agent.compact(cancel)
    assert "cancelled" in message and "nothing changed" in message
    assert len(server.requests) == before  # no summary request was sent
    assert agent.context.breakdown(agent.history, agent.instructions) == shape_before
