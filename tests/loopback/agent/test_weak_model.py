"""A weak model's failures replayed through the loop: real llama.cpp streams whose tool call could not
be parsed (a Markdown fence, a tool name that is not offered) recover with a correction; an echoed
placeholder, a repeated successful call and a run of steps that show nothing new stop with a reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import protocol as ev
from core.agent.guard import IDLE_STEPS
from core.agent.loop import Agent
from core.prune.archive import OutputArchive
from core.session.journal import Journal
from tests.conftest import make_settings
from tests.support.events import Recorder
from tests.support.paths import FIXTURES
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

LLAMA = FIXTURES / "llama"
FENCED = Reply(raw=(LLAMA / "qwen-unparsable-output-stream.sse").read_bytes())  # "```json\n", then the failure
UNKNOWN_TOOL = Reply(raw=(LLAMA / "qwen-unknown-tool-stream.sse").read_bytes())  # Calculator.add, no delta


def make_agent(server: ScriptedServer, tmp_path: Path, recorder: Recorder) -> Agent:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    settings = make_settings(server.url, tmp_path, AGENT_MAX_RETRIES="3")
    journal = Journal.create(tmp_path / "sessions", workspace, settings.model)
    return Agent(settings, recorder, workspace, "yes", journal=journal,
                 archive=OutputArchive(tmp_path / "outputs"))


def last_user_text(request: dict[str, Any]) -> str:
    users = [i for i in request["input"] if i.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def test_a_fenced_call_and_an_unknown_tool_recover_with_a_correction(tmp_path: Path, recorder: Recorder) -> None:
    script = [FENCED, UNKNOWN_TOOL, Reply(call_events([("read_file", {"path": "calc.py"})])),
              Reply(text_events("add subtracts"))]
    with ScriptedServer(script) as server:
        outcome = make_agent(server, tmp_path, recorder).run("what does add do?")
    assert outcome.status == "ok" and outcome.text == "add subtracts"
    first, second, third, fourth = server.requests
    assert last_user_text(first) == "what does add do?"
    for failed, retry in ((first, second), (second, third)):
        assert retry != failed  # never the same request again
        correction = last_user_text(retry)
        assert "could not be read as a tool call" in correction and "no Markdown code fence" in correction
        assert "read_file" in correction and "peg-native" in correction
    assert "It began: '```json'" in last_user_text(second)
    # The fence itself is not replayed to the model (it only writes it again), only quoted in the correction.
    assert not any(i.get("role") == "assistant" for i in second["input"])
    assert last_user_text(fourth) == "what does add do?"  # the correction was for one request only
    notices = [n.message for n in recorder.of(ev.Notice) if n.kind == "retry"]
    assert len(notices) == 2 and "asking the model again with a correction (1 of 2)" in notices[0]


def test_unreadable_answers_in_a_row_stop_with_a_reason(tmp_path: Path, recorder: Recorder) -> None:
    with ScriptedServer([UNKNOWN_TOOL, FENCED, UNKNOWN_TOOL, Reply(text_events("never asked"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("add 2 and 3")
    assert outcome.status == "error" and outcome.error is not None and outcome.error.kind == "stuck"
    assert len(server.requests) == 3  # each once: the client does not resend an unreadable answer's request
    assert "could not be read as a tool call 3 times in a row" in outcome.error.message
    assert recorder.of(ev.Error)[-1].message == outcome.error.message


def test_an_echoed_placeholder_is_flagged_then_stops_the_task(tmp_path: Path, recorder: Recorder) -> None:
    echoes = [Reply(call_events([("run_shell", {"command": f"echo 'same output as out-{n}'"})])) for n in (1, 2, 3)]
    with ScriptedServer([*echoes, Reply(text_events("never asked"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("run the tests")
    assert outcome.status == "error" and outcome.error is not None and outcome.error.kind == "stuck"
    assert len(server.requests) == 2
    assert "replayed the agent's own placeholder texts" in outcome.error.message
    first_output = next(i["output"] for i in server.requests[1]["input"] if i.get("type") == "function_call_output")
    assert "it is not content to reproduce" in first_output


def test_the_same_successful_call_again_and_again_stops(tmp_path: Path, recorder: Recorder) -> None:
    same = Reply(call_events([("read_file", {"path": "calc.py"})]))
    with ScriptedServer([same] * 8 + [Reply(text_events("never asked"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("look at calc.py")
    assert outcome.status == "error" and outcome.error is not None and outcome.error.kind == "stuck"
    assert len(server.requests) == 6
    assert "read_file returned the same output 6 times in a row" in outcome.error.message


def test_steps_that_show_nothing_new_stop(tmp_path: Path, recorder: Recorder) -> None:
    # Alternating between two reads is never "the same call in a row", yet nothing new comes back.
    alternate = [Reply(call_events([("read_file", {"path": path})])) for path in ("calc.py", ".")] * 10
    with ScriptedServer([*alternate, Reply(text_events("never asked"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("look around")
    assert outcome.status == "error" and outcome.error is not None and outcome.error.kind == "stuck"
    assert len(server.requests) == 2 + IDLE_STEPS
    assert f"{IDLE_STEPS} steps in a row changed no file and showed nothing new" in outcome.error.message


def test_a_real_edit_between_reads_is_progress(tmp_path: Path, recorder: Recorder) -> None:
    steps = []
    for n in range(IDLE_STEPS + 2):
        steps.append(Reply(call_events([("edit_file", {"path": "calc.py", "old_text": f"return a - b{' ' * n}",
                                                       "new_text": f"return a - b{' ' * (n + 1)}"})])))
    with ScriptedServer([*steps, Reply(text_events("done"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("tweak")
    assert outcome.status == "ok" and outcome.text == "done"


FIX = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
WRITTEN_CALLS = {
    "fenced": f'```json\n{{"name": "edit_file", "arguments": {json.dumps(FIX)}}}\n```',
    "qwen tags": f'<tool_call>\n{{"name": "edit_file", "arguments": {json.dumps(FIX)}}}\n</tool_call>',
    "deepseek tokens": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>edit_file\n```json\n"
                        f"{json.dumps(FIX)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
}


@pytest.mark.parametrize("written", WRITTEN_CALLS.values(), ids=WRITTEN_CALLS.keys())
def test_a_call_written_as_text_runs_as_that_call(tmp_path: Path, recorder: Recorder, written: str) -> None:
    with ScriptedServer([Reply(text_events(written)), Reply(text_events("fixed: add adds"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("fix add in calc.py")
    assert outcome.status == "ok" and outcome.text == "fixed: add adds" and outcome.steps == 2
    assert (tmp_path / "ws" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    notices = [n.message for n in recorder.of(ev.Notice) if n.kind == "info"]
    assert any("wrote its call to edit_file as text" in n and "running it as that call" in n for n in notices)
    assert [t.name for t in recorder.of(ev.ToolFinished)] == ["edit_file"]
    # The model sees its call as a real call with its output, not as the text it wrote.
    replay = server.requests[1]["input"]
    call = next(i for i in replay if i.get("type") == "function_call")
    assert call["name"] == "edit_file" and json.loads(call["arguments"]) == FIX
    assert any(i.get("type") == "function_call_output" and i["call_id"] == call["call_id"] for i in replay)
    assert not any(i.get("role") == "assistant" for i in replay)


def test_a_call_with_prose_around_it_is_not_run_and_gets_one_correction(tmp_path: Path,
                                                                       recorder: Recorder) -> None:
    chatty = "I will fix it:\n" + WRITTEN_CALLS["fenced"]
    script = [Reply(text_events(chatty)), Reply(call_events([("edit_file", FIX)])), Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        outcome = make_agent(server, tmp_path, recorder).run("fix add in calc.py")
    assert outcome.status == "ok" and outcome.text == "done"
    correction = last_user_text(server.requests[1])
    assert "other text around it" in correction and "nothing was run" in correction
    assert [t.name for t in recorder.of(ev.ToolFinished)] == ["edit_file"]  # only the real call ran
    assert last_user_text(server.requests[2]) == "fix add in calc.py"


def test_text_calls_that_never_become_readable_stop_as_stuck_not_as_an_answer(tmp_path: Path,
                                                                             recorder: Recorder) -> None:
    two = WRITTEN_CALLS["fenced"] + "\n" + WRITTEN_CALLS["fenced"]
    with ScriptedServer([Reply(text_events(two))] * 3 + [Reply(text_events("never asked"))]) as server:
        outcome = make_agent(server, tmp_path, recorder).run("fix add in calc.py")
    assert outcome.status == "error" and outcome.error is not None and outcome.error.kind == "stuck"
    assert len(server.requests) == 3 and recorder.of(ev.ToolFinished) == []
    assert (tmp_path / "ws" / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
