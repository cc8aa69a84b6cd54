"""One tool-result pipeline: `run_tool` runs a call (inside a checkpoint when the tool says so) and
`finish` shapes what the model sees in its documented order, with the facts typed on the way."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core import protocol as ev
from core.agent import results
from core.agent.guard import Guard
from core.agent.results import finish
from core.checkpoints import Checkpoints
from core.context.cap import prune_budget_chars
from core.secrets import Redactor
from core.session.items import (
    FunctionCall,
    FunctionCallOutput,
    Item,
    ToolOutcome,
    item_from_record,
    to_record,
)
from core.tools import Tool, ToolContext, ToolResult, ToolRun, run_tool
from core.tools.base import Printed, params
from tests.conftest import TEST_KEY
from tests.support.agent_process import native
from tests.support.tools import tool_context

CAP = 400  # tokens


def _run(call: FunctionCall, output: str, **facts: Any) -> ToolRun:
    outcome = ToolOutcome(tool=call.name, **facts)
    return ToolRun(call.call_id, call.name, json.loads(call.arguments), output, outcome, 0.25)


def _finish(call: FunctionCall, run: ToolRun, history: list[Item] | None = None, guard: Guard | None = None):
    history = [*(history or []), call]
    return finish(call, run, history, guard or Guard(), CAP, Redactor(TEST_KEY))


def test_finish_caps_then_redacts_and_the_event_carries_both_texts_and_the_pruning_figures() -> None:
    call = FunctionCall("c1", "run_shell", '{"command": "env"}')
    raw = f"exit code 0\nKEY={TEST_KEY}\n" + "".join(f"line {n}\n" for n in range(3000))
    done = _finish(call, _run(call, raw, command="env", exit_code=0, archive="out-3", pruned_from=90_000,
                                pruned_to=len(raw)))
    assert TEST_KEY not in done.output.output and "KEY=" in done.output.output
    assert "read_output id=out-3" in done.output.output and len(done.output.output) < len(raw)
    event = done.event
    assert isinstance(event, ev.ToolFinished) and event.model_result == done.output.output
    assert event.result == raw and (event.pruned_from, event.pruned_to) == (90_000, len(raw))
    assert (event.status, event.duration, event.arguments) == ("ok", 0.25, {"command": "env"})
    assert done.output.outcome.fingerprint and done.stuck == ""


def test_a_repeat_is_judged_on_the_tool_output_before_the_note_cap_and_redaction() -> None:
    first, again = (FunctionCall(cid, "run_shell", '{"command": "pytest -q"}') for cid in ("c1", "c2"))
    text = "exit code 1\nFAILED test_a.py::test_x - 断言失败\n" + "x" * 5000
    earlier = _finish(first, _run(first, text, status="error", exit_code=1, archive="out-1"))
    history: list[Item] = [first, earlier.output]
    done = _finish(again, _run(again, text, status="error", exit_code=1, archive="out-2"), history)
    assert done.output.output == "same output as out-1 (exit 1)"
    assert done.event.result == text  # the user still sees what the command printed


def test_the_replay_note_survives_the_cap_and_bytes_the_os_smuggled_in_are_cleaned() -> None:
    call = FunctionCall("c1", "read_file", '{"path": "same output as the previous identical call"}')
    text = "名字\udcff\n" * 10
    done = _finish(call, _run(call, text, path="a.txt"))
    assert "\udcff" not in done.output.output and "\ufffd" in done.output.output
    assert done.output.output.endswith("Read the file or run the command instead.]")


def test_a_refused_call_keeps_its_status_and_a_read_its_range() -> None:
    call = FunctionCall("c1", "read_file", '{"path": "big.txt"}')
    text = "".join(f"{n:>6}\tword {n}\n" for n in range(1, 2001))
    done = _finish(call, _run(call, text, path="big.txt", offset=1, limit=2000, total_lines=2000, sha="ab"))
    assert "continue with read_file path=big.txt offset=" in done.output.output
    assert done.event.pruned_from is None and done.event.pruned_to is None
    shell = FunctionCall("c2", "run_shell", '{"command": "rm -rf /"}')
    refused = _finish(shell, _run(shell, "refused: …", status="refused", command="rm -rf /"))
    assert refused.event.status == "refused" and refused.output.outcome.status == "refused"


@pytest.mark.parametrize("outcome", [
    ToolOutcome(tool="run_shell", status="error", command="make", exit_code=2, archive="out-1", sandbox="landlock",
                pruned_from=10, pruned_to=5, fingerprint="f"),
    ToolOutcome(tool="read_file", path="文件.py", offset=3, limit=9, total_lines=12, sha="0" * 64),
    ToolOutcome(tool="srv__t", server="srv"),
    ToolOutcome(),
])
def test_the_outcome_round_trips_through_the_journal_form(outcome: ToolOutcome) -> None:
    record = json.loads(json.dumps(to_record(FunctionCallOutput("c1", "text", outcome)), ensure_ascii=False))
    assert item_from_record(record) == FunctionCallOutput("c1", "text", outcome)
    assert None not in record["outcome"].values()  # the journal keeps only what says something


def test_an_older_journals_meta_is_read_into_the_outcome() -> None:
    record = {"kind": "function_call_output", "call_id": "c1", "output": "x",
              "meta": {"tool": "run_shell", "status": "ok", "command": "ls", "exit_code": 0, "archive": None,
                       "duration": 0.1, "sandbox": "none", "later_key": 1}}
    loaded = item_from_record(record)
    assert isinstance(loaded, FunctionCallOutput)
    assert loaded.outcome == ToolOutcome(tool="run_shell", command="ls", exit_code=0, sandbox="none")


def _writer(name: str, checkpointed: bool) -> Tool:
    def write(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        (ctx.workspace.root / args["path"]).write_text("new\n", encoding="utf-8")
        return ToolResult(f"wrote {args['path']}", outcome=ToolOutcome(path=args["path"]))
    return Tool(name, "writes a file", params({"path": {"type": "string"}}, ["path"]), write,
                checkpointed=checkpointed)


@pytest.mark.parametrize("checkpointed", [True, False])
def test_a_tool_that_declares_itself_checkpointed_runs_inside_a_checkpoint(tmp_path: Path,
                                                                           checkpointed: bool) -> None:
    workspace, folder = tmp_path / "ws", tmp_path / "session"
    workspace.mkdir()
    folder.mkdir()
    (workspace / "a.txt").write_text("old\n", encoding="utf-8")
    records: list[dict[str, Any]] = []
    checkpoints = Checkpoints(folder, workspace, records.append, ev.discard)
    tool = _writer("scribe", checkpointed)
    run = run_tool(FunctionCall("c1", "scribe", '{"path": "a.txt"}'), tool_context(workspace, checkpoints=checkpoints),
                   {"scribe": tool})
    assert run.outcome == ToolOutcome(tool="scribe", path="a.txt") and run.output == "wrote a.txt"
    recorded = [change.path for checkpoint in checkpoints.checkpoints for change in checkpoint.changes]
    assert recorded == (["a.txt"] if checkpointed else [])


def test_run_shell_declares_what_it_printed_and_finish_reports_what_pruning_made_of_it(tmp_path: Path) -> None:
    command = native("seq 1 40000", "for /L %i in (1,1,40000) do @echo %i", "1..40000")
    call = FunctionCall("c1", "run_shell", json.dumps({"command": command}))
    ctx = tool_context(tmp_path, approve=True)
    run = run_tool(call, ctx)
    assert run.outcome.exit_code == 0 and run.outcome.command == command and run.outcome.pruned_from is None
    assert run.printed is not None and run.printed.command == command and run.printed.exit_code == 0
    assert len(run.output[run.printed.start:run.printed.end]) > 200_000  # the run keeps every character
    done = finish(call, run, [call], Guard(), 600, Redactor(TEST_KEY))
    event = done.event
    assert event.pruned_from is not None and event.pruned_from > 200_000
    assert event.pruned_to == len(event.result) <= prune_budget_chars(600)
    assert f"{event.pruned_from:,} → {event.pruned_to:,} chars" in event.result
    assert (done.output.outcome.pruned_from, done.output.outcome.pruned_to) == (event.pruned_from, event.pruned_to)
    assert run.outcome.pruned_from is None  # finish shapes a copy of the facts


@pytest.mark.parametrize("notes", [("", ""), ("[network: refused example.com]\n", "\n[a background job is still running]"),
                                   ("timed out after 3 s\n", "")])
def test_the_notes_around_what_a_command_printed_are_kept_whole(notes: tuple[str, str]) -> None:
    head, tail = notes
    printed = "".join(f"Compiling crate{n} v0.1.0\n" for n in range(4000)) + "error[E0308]: mismatched types\n"
    call = FunctionCall("c1", "run_shell", '{"command": "cargo build"}')
    run = dataclasses.replace(_run(call, head + printed + tail, command="cargo build", exit_code=101),
                              printed=Printed(len(head), len(head) + len(printed), "cargo build", 101, "out-7"))
    done = _finish(call, run)
    assert done.event.result.startswith(head + "exit code 101\n[pruned ") and done.event.result.endswith(tail)
    assert "error[E0308]: mismatched types" in done.event.result and "out-7" in done.event.result
    assert done.event.pruned_to is not None and done.event.pruned_to < len(printed) == done.event.pruned_from


# What each step of `finish` calls, by the name its docstring gives the step.
STEP_CALLS = {"prune": "prune", "repeat check": "judge_repeat", "replay note": "replayed", "clean": "clean_text",
              "cap": "cap_result", "redact": "redact"}


def test_finish_runs_its_steps_in_the_order_its_docstring_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    numbered = re.findall(r"^  (\d)\. ([a-z ]+):", results.__doc__ or "", re.MULTILINE)
    assert [int(number) for number, _ in numbered] == list(range(1, len(STEP_CALLS) + 1)), numbered
    documented = [step for _, step in numbered]
    assert sorted(documented) == sorted(STEP_CALLS), documented
    called: list[str] = []

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            called.append(name)
            return real(*args, **kwargs)
        return step

    for name in ("prune", "judge_repeat", "clean_text", "cap_result"):
        monkeypatch.setattr(results, name, spy(name, getattr(results, name)))
    guard = Guard()
    monkeypatch.setattr(guard, "replayed", spy("replayed", guard.replayed))
    call = FunctionCall("c1", "run_shell", '{"command": "make"}')
    text = "make: *** [all] Error 2\n"
    run = dataclasses.replace(_run(call, text, command="make", exit_code=2),
                              printed=Printed(0, len(text), "make", 2))
    finish(call, run, [call], guard, CAP, spy("redact", Redactor(TEST_KEY)))
    assert called == [STEP_CALLS[step] for step in documented]
