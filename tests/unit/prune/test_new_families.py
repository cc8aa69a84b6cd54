"""The memory-checker, formatter-check and multi-environment families on real outputs of our corpus:
which spellings of a command or an output pick them, and what they keep and drop."""

from __future__ import annotations

import pytest

from core.prune import prune
from tests.support.prune_corpus import case as corpus_case


def _output(case: str) -> bytes:
    return corpus_case("cases", case).output


@pytest.mark.parametrize(("case", "command"), [
    ("valgrind_glued_invalid_write", "valgrind --leak-check=full ./stats"),
    ("valgrind_glued_invalid_write", "valgrind ./stats --rounds 800"),
    ("valgrind_leak_report", "./run-checks.sh"),  # found by content
    ("asan_heap_overflow_glued", "./stats"),
    ("asan_use_after_free", "ASAN_OPTIONS=detect_leaks=1 ./sess"),
])
def test_memory_reports_pick_the_memory_checker(case: str, command: str) -> None:
    assert prune(_output(case), command=command, exit_code=1).family == "memory checker"


def test_a_memory_report_keeps_where_the_address_lies_and_drops_the_shadow_map() -> None:
    text = prune(_output("asan_use_after_free"), command="./sess", exit_code=1).text
    assert "is located 32 bytes inside of 36-byte region" in text
    assert "in drop_session /home/user/proj/sess.c:7" in text
    assert "Shadow byte legend" not in text and "__interceptor_free" not in text
    text = prune(_output("valgrind_glued_invalid_write"), command="valgrind ./stats", exit_code=0).text
    assert "is 0 bytes after a block of size 64 alloc'd" in text
    assert "Copyright (C)" not in text and "still reachable" not in text


@pytest.mark.parametrize(("case", "command"), [
    ("black_check_diff", "black --check --diff pkg"),
    ("black_check_diff", "python -m black --diff ."),
    ("black_check_diff", "uv run black --check --diff src tests"),
    ("gofmt_diff", "gofmt -d ."),
    ("rustfmt_check", "cargo fmt --check"),
    ("rustfmt_check", "rustfmt --check src/main.rs"),
    ("clang_format_dry_run", "clang-format --dry-run -Werror src/*.c"),
    ("clang_format_dry_run", "./scripts/lint.sh"),  # found by content
])
def test_formatter_checks_pick_the_formatter_family(case: str, command: str) -> None:
    assert prune(_output(case), command=command, exit_code=1).family == "formatter"


def test_a_formatter_finding_keeps_its_line_and_drops_the_quoted_source() -> None:
    text = prune(_output("clang_format_dry_run"), command="clang-format --dry-run src/ring.c", exit_code=1).text
    assert "src/ring.c:4:137: error: code should be clang-formatted [-Wclang-format-violations]" in text
    assert "struct ring {int *buf;" not in text


@pytest.mark.parametrize("command", ["tox", "tox -e unit,edge,style", "nox -s tests", "./ci.sh"])
def test_tox_output_picks_the_multi_env_family(command: str) -> None:
    assert prune(_output("tox_envs_one_failing"), command=command, exit_code=1).family == "multi-env runner"


def test_a_passing_environment_shrinks_to_its_verdict_and_a_failing_one_keeps_its_failure() -> None:
    text = prune(_output("tox_envs_one_failing"), command="tox", exit_code=1).text
    assert "test_round_17 (test_fee.Fee.test_round_17) ... ok" not in text
    assert "unit: commands succeeded" in text
    assert "FAIL: test_rounds_up (test_edge.Edge.test_rounds_up)" in text
    assert "AssertionError: 1 != 2" in text
