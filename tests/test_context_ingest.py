"""Ingestion-time layers: the per-result cap (a) and repeated-call interception (c)."""

from __future__ import annotations

import json

import pytest

from core.context import cap_result, repeated_call_error, text_tokens
from core.context.calls import is_read_only_command
from core.items import FunctionCall, FunctionCallOutput, Item, UserMessage


def numbered(first: int, count: int) -> str:
    return "\n".join(f"{n:>6}\tlet value_{n} = compute({n});" for n in range(first, first + count))


def test_a_result_that_fits_is_unchanged() -> None:
    assert cap_result("short", "run_shell", {}, 100) == "short"


def test_a_long_read_keeps_whole_lines_and_says_where_to_continue() -> None:
    text = numbered(41, 2000)
    meta = {"path": "src/app.py", "offset": 41, "limit": 2000}
    capped = cap_result(text, "read_file", meta, 1_000)
    assert text_tokens(capped) <= 1_000
    body, _, note = capped.rpartition("\n[")
    shown = body.count("\n") + 1
    assert body == text[: len(body)] and body.endswith(f"compute({40 + shown});")
    assert note == (
        f"… truncated to fit the context budget after {shown} lines — continue with read_file "
        f"path=src/app.py offset={41 + shown} limit={2000 - shown}]"
    )


def test_a_long_shell_output_keeps_head_and_tail_and_points_at_the_archive() -> None:
    text = "".join(f"test {n} passed\n" for n in range(5000)) + "FAILED test_parser: expected 3, got 4\n"
    capped = cap_result(text, "run_shell", {"archive": "out-7", "command": "pytest"}, 800)
    assert text_tokens(capped) <= 800
    assert capped.startswith("test 0 passed\n") and capped.endswith("FAILED test_parser: expected 3, got 4\n")
    assert "omitted to fit the context budget — full output: read_output id=out-7]" in capped


def test_a_long_result_without_an_archive_says_so() -> None:
    capped = cap_result("match\n" * 10_000, "search", {}, 500)
    assert text_tokens(capped) <= 500 and "narrow the request to see it]" in capped


def call(cid: str, name: str, **args: object) -> FunctionCall:
    return FunctionCall(cid, name, json.dumps(args))


def done(c: FunctionCall) -> list[Item]:
    return [c, FunctionCallOutput(c.call_id, "result", {"tool": c.name, "status": "ok"})]


def test_the_same_call_as_the_last_one_is_refused() -> None:
    history = done(call("1", "read_file", path="a.py"))
    error = repeated_call_error(history, FunctionCall("2", "read_file", '{ "path" : "a.py" }'))
    assert error is not None and error.startswith("Refused: read_file was just called with exactly these")


def test_the_same_call_as_the_one_before_last_is_refused() -> None:
    history = done(call("1", "search", pattern="TODO", path="src")) + done(
        call("2", "read_file", path="a.py")
    )
    assert repeated_call_error(history, call("3", "search", path="src", pattern="TODO"))


def test_three_calls_back_is_not_a_loop() -> None:
    history = (
        done(call("1", "read_file", path="a.py"))
        + done(call("2", "list_files"))
        + done(call("3", "search", pattern="x"))
    )
    assert repeated_call_error(history, call("4", "read_file", path="a.py")) is None


def test_different_arguments_are_not_a_repeat() -> None:
    history = done(call("1", "read_file", path="a.py"))
    assert repeated_call_error(history, call("2", "read_file", path="a.py", offset=200)) is None


@pytest.mark.parametrize(
    "between",
    [
        call("9", "edit_file", path="a.py", old_text="x", new_text="y"),
        call("9", "write_file", path="b.py", content=""),
        call("9", "run_shell", command="pip install -e ."),
        call("9", "run_shell", command="echo hi > notes.txt"),
    ],
)
def test_a_state_change_in_between_allows_the_same_call_again(between: FunctionCall) -> None:
    history = done(call("1", "run_shell", command="grep -rn TODO src")) + done(between)
    assert repeated_call_error(history, call("2", "run_shell", command="grep -rn TODO src")) is None


def test_a_read_only_command_in_between_is_no_state_change() -> None:
    history = done(call("1", "run_shell", command="grep -rn TODO src")) + done(
        call("2", "run_shell", command="git status")
    )
    assert repeated_call_error(history, call("3", "run_shell", command="grep -rn TODO src"))


@pytest.mark.parametrize(
    "repeated",
    [
        call("1", "run_shell", command="sleep 1 && curl localhost:8000"),  # polling a server just started
        call("1", "run_shell", command="npm test"),  # a rerun after a flaky failure
        call("1", "run_shell", command="pytest -q"),
        call("1", "write_file", path="b.py", content="x = 1\n"),
        call("1", "edit_file", path="a.py", old_text="x", new_text="y"),
    ],
)
def test_a_repeat_of_a_call_that_may_change_state_or_the_world_is_allowed(repeated: FunctionCall) -> None:
    again = FunctionCall("2", repeated.name, repeated.arguments)
    assert repeated_call_error(done(repeated), again) is None
    between = done(call("3", "read_file", path="a.py"))
    assert (
        repeated_call_error(done(repeated) + between, FunctionCall("4", repeated.name, repeated.arguments))
        is None
    )


@pytest.mark.parametrize(
    "looked",
    [
        call("1", "list_files", path="src"),
        call("1", "read_output", id="out-3", offset=0),
        call("1", "run_shell", command="cat README.md | head -20"),
    ],
)
def test_a_repeat_of_a_state_free_call_is_refused(looked: FunctionCall) -> None:
    assert repeated_call_error(done(looked), FunctionCall("2", looked.name, looked.arguments))


def test_a_user_message_in_between_allows_the_same_call_again() -> None:
    history = [*done(call("1", "run_shell", command="pytest -q")), UserMessage("try again, I fixed the db")]
    assert repeated_call_error(history, call("2", "run_shell", command="pytest -q")) is None


def test_the_call_itself_and_parallel_calls_of_its_turn() -> None:
    first, twin = call("1", "read_file", path="a.py"), call("2", "read_file", path="a.py")
    assert repeated_call_error([first], first) is None  # already in the journal: not its own repeat
    assert repeated_call_error([first, twin], twin)  # the same read twice in one turn


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md | head -20",
        "git status && git diff --stat",
        "rg -n TODO src 2>/dev/null",
        "rg foo 2>&1 | head",
        "grep -r foo . | sort | uniq -c",
        "find . -name '*.py'",
        "FOO=1 git log -n 3",
        "sed -n 1,20p a.py",
        "Get-Content app.py",
    ],
)
def test_obviously_read_only_commands(command: str) -> None:
    assert is_read_only_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "npm install",
        "git commit -am x",
        "git branch -D old",
        "echo x > a.txt",
        "cat a >> b",
        "find . -name '*.pyc' -delete",
        "sed -i s/a/b/ f.py",
        "ls $(rm -rf x)",
        "ls `touch y`",
        "ls; rm a",
        "ls & rm a",
        "",
        "python -c 'print(1)'",
        "cat 'unterminated",
    ],
)
def test_commands_that_may_change_state(command: str) -> None:
    assert not is_read_only_command(command)
