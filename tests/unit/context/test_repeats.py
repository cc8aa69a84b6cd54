"""Repeats judged by their result: run again, collapse an identical output to one line, stop a
model that gets the same failing output three times in a row (`judge_repeat` on a history)."""

from __future__ import annotations

import json

from core.context.repeats import fingerprint, judge_repeat
from core.session.items import FunctionCall, FunctionCallOutput, Item, ToolOutcome, UserMessage


def shell(cid: str, command: str) -> FunctionCall:
    return FunctionCall(cid, "run_shell", json.dumps({"command": command}))


def result(call: FunctionCall, text: str, exit_code: int, archive: str) -> FunctionCallOutput:
    return FunctionCallOutput(call.call_id, text, ToolOutcome(tool=call.name, status="ok" if exit_code == 0 else "error",
                                                              exit_code=exit_code, archive=archive))


def run(history: list[Item], call: FunctionCall, text: str, exit_code: int = 1) -> tuple[str, bool]:
    """Judge `call` giving `text`, then record both as the loop does; returns (what the model sees, stuck)."""
    history.append(call)
    out = result(call, text, exit_code, f"out-{call.call_id}")
    verdict = judge_repeat(history, call, out)
    history.append(out)
    return verdict.text or text, verdict.stuck


FAILING = "exit code 1\n[pruned 9,120 → 310 chars; full output: {id}]\nFAILED tests/test_a.py::test_x\n1 failed in {t}s"


def test_volatile_details_do_not_make_outputs_differ() -> None:
    a = "2026-12-02 13:17:11,461 done in 0.37s, tmp /tmp/pytest-of-root/p7/x.db, at 0x7ffd12ab34cd, ==4242=="
    b = "2026-12-03 09:01:02,001 done in 1.02s, tmp /tmp/pytest-of-root/p9/x.db, at 0x7ffd99ee0011, ==77=="
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(FAILING.format(id="out-3", t="0.2")) == fingerprint(FAILING.format(id="out-9", t="0.4"))
    assert fingerprint("1 failed") != fingerprint("2 failed")


def test_an_identical_output_becomes_one_line_naming_the_first() -> None:
    history: list[Item] = [UserMessage("fix it")]
    first, _ = run(history, shell("12", "pytest -q"), FAILING.format(id="out-12", t="0.21"))
    assert first.startswith("exit code 1")
    again, stuck = run(history, shell("13", "pytest -q"), FAILING.format(id="out-13", t="0.25"))
    assert again == "same output as out-12 (exit 1)" and not stuck


def test_a_changed_output_is_shown_whole() -> None:
    history: list[Item] = [UserMessage("watch the log")]
    run(history, shell("1", "cat app.log"), "line 1", exit_code=0)
    seen, stuck = run(history, shell("2", "cat app.log"), "line 1\nline 2", exit_code=0)
    assert seen == "line 1\nline 2" and not stuck


def test_the_third_identical_failure_in_a_row_is_stuck() -> None:
    history: list[Item] = [UserMessage("make the tests pass")]
    outcomes = [run(history, shell(str(n), "pytest -q"), FAILING.format(id=f"out-{n}", t=n / 10)) for n in range(3)]
    assert [stuck for _, stuck in outcomes] == [False, False, True]


def test_anything_in_between_or_success_is_not_stuck() -> None:
    history: list[Item] = [UserMessage("go")]
    run(history, shell("1", "pytest -q"), "1 failed")
    run(history, shell("2", "pytest -q"), "1 failed")
    run(history, FunctionCall("3", "edit_file", json.dumps({"path": "a.py"})), "edited", exit_code=0)
    seen, stuck = run(history, shell("4", "pytest -q"), "1 failed")
    assert seen == "same output as out-2 (exit 1)" and not stuck  # the edit in between changed nothing
    history.append(UserMessage("try once more"))
    assert not run(history, shell("5", "pytest -q"), "1 failed")[1]
    quiet: list[Item] = [UserMessage("poll")]
    assert not any(run(quiet, shell(str(n), "curl -s localhost:8000/health"), "ok", 0)[1] for n in range(5))
    # Polling has room, not forever: the sixth identical success in a row stops the task.
    assert run(quiet, shell("6", "curl -s localhost:8000/health"), "ok", 0)[1]
