"""Ingestion-time layers: the per-result cap (a) and which commands only look (used by (c) and clearing).

Repeats (c) are tested in test_prune_repeats.py."""

from __future__ import annotations

import pytest

from core.context import cap_result, text_tokens
from core.context.calls import is_read_only_command
from core.session.items import ToolOutcome


def numbered(first: int, count: int) -> str:
    return "\n".join(f"{n:>6}\tlet value_{n} = compute({n});" for n in range(first, first + count))


def test_a_result_that_fits_is_unchanged() -> None:
    assert cap_result("short", "run_shell", ToolOutcome(), 100) == "short"


def test_a_long_read_keeps_whole_lines_and_says_where_to_continue() -> None:
    text = numbered(41, 2000)
    read = ToolOutcome(path="src/app.py", offset=41, limit=2000)
    capped = cap_result(text, "read_file", read, 1_000)
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
    capped = cap_result(text, "run_shell", ToolOutcome(archive="out-7", command="pytest"), 800)
    assert text_tokens(capped) <= 800
    assert capped.startswith("test 0 passed\n") and capped.endswith("FAILED test_parser: expected 3, got 4\n")
    assert "omitted to fit the context budget — full output: read_output id=out-7]" in capped


def test_a_long_result_without_an_archive_says_so() -> None:
    capped = cap_result("match\n" * 10_000, "search", ToolOutcome(), 500)
    assert text_tokens(capped) <= 500 and "narrow the request to see it]" in capped


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
        "sed -ni 1p f.py",
        "sort -o sorted.txt a.txt",
        "sort -uo sorted.txt a.txt",
        "git diff --output=patch.diff",
        "find . -fprint0 list.bin",
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
