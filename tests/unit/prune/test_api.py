"""prune(): the result's shape, the header and stamp, small outputs, the budget."""

from __future__ import annotations

import re

from core.prune import Pruned, prune
from core.prune.command import parse_command

STAMP_RE = re.compile(r"^\[pruned ([\d,]+) → ([\d,]+) chars; .*\]$")


def _noisy_log(n: int = 400) -> str:
    lines = [f"2024-05-01 10:00:{i % 60:02d} INFO worker: processed batch {i} of {n}" for i in range(n)]
    lines[n // 2] = "2024-05-01 10:04:10 ERROR worker: batch 250 failed: connection refused by db:5432"
    return "\n".join(lines) + "\n"


def test_result_fields_are_consistent() -> None:
    r = prune(_noisy_log(), command="./worker --once", exit_code=1)
    assert isinstance(r, Pruned)
    assert r.original_chars == len(_noisy_log())
    assert r.pruned_chars == len(r.text)
    assert r.pruned_chars < r.original_chars / 5
    assert r.family == "generic"
    assert sum(r.hidden.values()) > 300


def test_first_line_states_the_exit_code_and_the_stamp_says_what_went() -> None:
    r = prune(_noisy_log(), command="./worker", exit_code=3, archive_id="out-7")
    lines = r.text.split("\n")
    assert lines[0] == "exit code 3"
    m = STAMP_RE.match(lines[1])
    assert m, lines[1]
    assert int(m.group(1).replace(",", "")) == r.original_chars
    assert int(m.group(2).replace(",", "")) == r.pruned_chars
    assert lines[1].endswith("full output: out-7]")
    assert "ERROR worker: batch 250 failed: connection refused by db:5432" in r.text


def test_unknown_exit_code() -> None:
    assert prune("hello\n").text == "exit code unknown\nhello"


def test_small_outputs_pass_through_apart_from_cleaning() -> None:
    raw = "\x1b[32mPASSED\x1b[0m tests/test_a.py::test_one\nall good\n"
    r = prune(raw, command="pytest", exit_code=0)
    assert r.text == "exit code 0\nPASSED tests/test_a.py::test_one\nall good"
    assert r.hidden == {}


def test_empty_output() -> None:
    assert prune(b"", command="true", exit_code=0).text == "exit code 0\n(no output)"


def test_never_longer_than_input_by_more_than_header_and_stamp() -> None:
    for raw in ("x" * 900, "line\n" * 300, _noisy_log(50)):
        r = prune(raw, command="tool", exit_code=0)
        header = sum(len(line) + 1 for line in r.text.split("\n")[:2])
        assert r.pruned_chars <= r.original_chars + header


def test_budget_is_a_hard_cap_and_mentions_read_output() -> None:
    errors = "\n".join(f"src/mod{i}.c:{i}:5: error: unknown type name ‘foo{i}’" for i in range(2000))
    r = prune(errors, command="make", exit_code=2, archive_id="out-3", budget_chars=4000)
    assert r.pruned_chars <= 4000
    assert "read_output out-3 pages the rest" in r.text.split("\n")[1]
    assert "src/mod0.c:0:5: error: unknown type name ‘foo0’" in r.text  # the head survives
    assert "src/mod1999.c:1999:5: error: unknown type name ‘foo1999’" in r.text  # and the tail


def test_tiny_budgets_are_respected() -> None:
    for budget in (1, 20, 100, 500):
        assert len(prune(_noisy_log(), command="x", exit_code=1, budget_chars=budget).text) <= budget


def test_pruning_a_pruned_result_keeps_its_exit_code() -> None:
    first = prune(_noisy_log(), command="./worker", exit_code=4)
    second = prune(first.text, command="./worker")
    assert second.text.startswith("exit code 4\n")
    assert second.text.count("exit code") == 1


def test_command_parsing_sees_through_wrappers() -> None:
    assert parse_command("cd app && FORCE_COLOR=1 poetry run pytest -q 2>&1 | tee log").programs == ("pytest",)
    assert parse_command("find . -name '*.py' | xargs -I {} grep -n TODO {}").programs == ("grep",)
    assert parse_command("git log --oneline | head -50").programs == ("git",)
    assert parse_command("npx --yes jest --ci").programs == ("jest",)
    assert parse_command("timeout 60 python3.11 -m pip install x").programs == ("pip",)
    assert parse_command("git diff --stat").subcommand("git") == "diff"
    assert parse_command('echo "unbalanced').programs == ("echo",)


def test_a_program_that_prints_exit_code_keeps_its_line() -> None:
    assert prune("exit code 0\nreal output\n", exit_code=1).text == "exit code 1\nexit code 0\nreal output"


def test_minified_files_in_a_diff_are_collapsed() -> None:
    bundle = "x" * 50_000
    diff = ("diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
            f"diff --git a/static/app.js b/static/app.js\n--- a/static/app.js\n+++ b/static/app.js\n@@ -1 +1 @@\n"
            f"-{bundle}\n+{bundle}y\n")
    result = prune(diff, command="git diff", exit_code=0)
    assert "+a = 2" in result.text and "diff --git a/static/app.js b/static/app.js" in result.text
    assert "[static/app.js: +1 −1 lines, not shown: minified]" in result.text
    assert "line cut" not in result.text
