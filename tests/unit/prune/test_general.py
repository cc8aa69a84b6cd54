"""The general layer under the families, on real outputs of tools no family knows
(tests/corpus/prune/general: javac/java, gcc -fsanitize=address, valgrind, gdb, node, a Rust
backtrace, ruff format/concise) and on views (cat, grep, pip freeze, ls): what must survive is
selected from the raw output by the documented shape of each format, never listed by hand."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.prune import prune
from core.prune.clean import clean
from core.prune.command import parse_command
from core.prune.diagnostics import ERROR, WARNING, find, level_of
from core.prune.output import Output
from core.prune.stamp import header
from core.prune.views import is_view
from tests.support.prune_corpus import Case, case, cases

Selector = Callable[[list[str]], list[str]]


def matching(pattern: str) -> Selector:
    rx = re.compile(pattern)
    return lambda lines: [line for line in lines if rx.search(line)]


def preceding_header(item: str, header: str) -> Selector:
    """For each line matching `item`, the nearest line above it matching `header`."""
    item_rx, header_rx = re.compile(item), re.compile(header)

    def select(lines: list[str]) -> list[str]:
        found = []
        for i, line in enumerate(lines):
            if item_rx.search(line):
                found += [lines[j] for j in range(i - 1, -1, -1) if header_rx.search(lines[j])][:1]
        return found
    return select


def load(name: str) -> tuple[str, str, int]:
    found = case("general", name)
    return found.output.decode("utf-8"), found.command, found.exit_code


# name: (what must survive, the largest pruned/original ratio)
EXPECT: dict[str, tuple[list[Selector], float]] = {
    "java_exception": ([matching(r"^Exception in thread"), matching(r"^Caused by: "),
                        matching(r"^\s+at com\.example\."), matching(r"^\s+\.\.\. \d+ more$")], 0.7),
    "javac_warnings_and_errors": ([matching(r"^\S+\.java:\d+: error: "), matching(r"^\d+ errors?$"),
                                   matching(r"^\s+symbol: ")], 0.4),
    "asan_use_after_free": ([matching(r"ERROR: AddressSanitizer: "), matching(r"^SUMMARY: "),
                             matching(r"^\s+#\d+ 0x[0-9a-f]+ in \w+ /\S+\.c:\d+"), matching(r"by thread T\d+ here:$"),
                             matching(r"^READ of size")], 0.6),
    "valgrind_invalid_read": ([matching(r"Invalid read of size"), matching(r"==\s+(?:at|by) 0x\w+: \w+ \(\w+\.c:\d+\)"),
                               matching(r"ERROR SUMMARY: ")], 1.0),
    "gdb_backtrace": ([matching(r"^#\d+ "), matching(r"SIGSEGV")], 1.0),
    "node_assertion": ([matching(r"^AssertionError"), matching(r"^[+-] {3}\d+$"), matching(r"^\s+at \w+ \(/")], 1.0),
    "rust_panic_backtrace": ([matching(r"panicked at "), matching(r"^quantity must be"),
                              matching(r"^\s+\d+: rpanic::"), matching(r"^\s+at \./src/")], 0.6),
    "ruff_format_diff": ([matching(r"^--- "), matching(r"files? would be reformatted")], 1.0),
    "shellcheck_tty": ([matching(r"\(error\): "), preceding_header(r"\(error\): ", r"^In \S+ line \d+:$")], 0.1),
    "node_test_runner": ([matching(r"^not ok \d+"), matching(r"^\s+(?:expected|actual): \S"),
                          matching(r"^# (?:tests|pass|fail) \d+"), matching(r"\(/tmp/gen/nt/math\.test\.js:\d+:\d+\)")],
                         0.4),
    "ubsan": ([matching(r": runtime error: ")], 1.0),
    "black_check_diff": ([matching(r"^--- "), matching(r"^would reformat "), matching(r"files? would be reformatted")],
                         1.0),
    "ruff_concise": ([matching(r"^\S+\.py:\d+:\d+: [A-Z]+\d+ "), matching(r"^Found \d+ errors"),
                      matching(r"fixable with")], 1.0),
}
VIEWS = ["cat_source", "grep_defs", "pip_freeze", "ls_long"]


def test_every_fixture_is_checked() -> None:
    assert {found.name for found in cases("general")} == set(EXPECT) | set(VIEWS)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_an_unknown_tool_keeps_what_a_family_would(name: str) -> None:
    raw, command, code = load(name)
    selectors, ratio = EXPECT[name]
    result = prune(raw, command=command, exit_code=code)
    lines = clean(raw).lines
    for select in selectors:
        wanted = select(lines)
        assert wanted, f"{name}: a selector matches nothing"
        assert [line for line in wanted if line not in result.text] == []
    assert result.pruned_chars <= max(ratio * result.original_chars, len(header(code)) + 1 + len(raw))


def test_a_formatters_verdicts_outlast_its_hunks_under_a_small_budget() -> None:
    raw, command, code = load("black_check_diff")
    text = prune(raw, command=command, exit_code=code, budget_chars=1_200).text
    assert len(text) <= 1_200
    for line in matching(r"^would reformat |files? would be reformatted")(clean(raw).lines):
        assert line in text


def test_library_frames_are_counted_not_shown() -> None:
    raw, command, code = load("java_exception")
    text = prune(raw, command=command, exit_code=code).text
    assert "library frames hidden" in text and "ReduceOps$ReduceOp.evaluateSequential" not in text
    raw, command, code = load("rust_panic_backtrace")
    assert "core::iter::traits::iterator::Iterator::sum" not in prune(raw, command=command, exit_code=code).text


@pytest.mark.parametrize("name", VIEWS)
def test_views_pass_through_whole_within_the_budget(name: str) -> None:
    raw, command, code = load(name)
    assert is_view(parse_command(command))
    result = prune(raw, command=command, exit_code=code, budget_chars=len(raw) + 100)
    assert result.text == f"exit code {code}\n{clean(raw).text}"
    assert result.family == "view" and result.hidden == {}


@pytest.mark.parametrize("name", VIEWS)
def test_views_beyond_the_budget_keep_head_and_tail_and_point_at_the_rest(name: str) -> None:
    raw, command, code = load(name)
    lines = clean(raw).lines
    budget = len(raw) // 3
    result = prune(raw, command=command, exit_code=code, archive_id="out-5", budget_chars=budget)
    assert len(result.text) <= budget
    assert "read_output out-5 pages the rest" in result.text.split("\n")[1]
    assert lines[0] in result.text and lines[-1] in result.text
    assert "similar lines" not in result.text  # data is never folded


@pytest.mark.parametrize(("command", "view"), [
    ("cat app.log", True), ("tail -n 200 app.log", True), ("sed -n 1,80p x.py", True), ("grep -rn TODO src", True),
    ("rg -n foo | head -50", True), ("git show HEAD:setup.py", True), ("git log -p -3", True), ("pip freeze", True),
    ("npm ls --depth 0", True), ("env | sort", True), ("ls -la", True),
    ("sed -i s/a/b/ x.py", False), ("git log", False), ("git log -p", False), ("pytest -q | tail -30", False),
    ("pip install rich", False), ("find . -name '*.js'", False), ("make 2>&1 | grep error", True),
])
def test_what_counts_as_a_view(command: str, view: bool) -> None:
    assert is_view(parse_command(command)) is view


# -- the shapes of diagnostics, from small real snippets ------------------------------------

def findings(text: str) -> list[tuple[str, str]]:
    c = clean(text)
    out = Output(c.text, c.lines, parse_command("tool"), 1)
    return [(c.lines[f.head], f.level) for f in find(out)]


def test_inline_findings_of_many_tools() -> None:
    text = "\n".join([
        "src/main.c:12:5: error: ‘x’ undeclared (first use in this function)",  # gcc
        "app/models.py:40: error: Incompatible return value type  [return-value]",  # mypy
        "Broken.java:19: error: cannot find symbol",  # javac
        "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",  # tsc
        "pkg/x.py:1:1: F401 [*] `os` imported but unused",  # ruff concise, flake8
        "pkg/x.py:9:0: C0114: Missing module docstring (missing-module-docstring)",  # pylint
        "deploy.sh:3:8: warning: Double quote to prevent globbing [SC2086]",  # shellcheck -f gcc
        "Dockerfile:4 DL3008 warning: Pin versions in apt get install",  # hadolint
    ])
    assert findings(text) == [
        (line, level) for line, level in zip(text.split("\n"), [ERROR] * 5 + [WARNING] * 3, strict=True)]


def test_arrow_findings_keep_header_and_location_and_drop_frames_after_the_first() -> None:
    block = ("E501 Line too long (99 > 88)\n --> src/m{n}.py:{n}:89\n  |\n{n} | x = 1\n  |   ^^^^^\n"
             "help: Break the line\n\n")
    raw = "".join(block.format(n=n) for n in range(1, 120)) + "Found 119 errors.\n"
    text = prune(raw, command="lint", exit_code=1).text
    for n in range(1, 120):
        assert f" --> src/m{n}.py:{n}:89" in text
    assert text.count("E501 Line too long (99 > 88)") == 119 and "Found 119 errors." in text
    assert text.count("help: Break the line") <= 3


def test_stylish_rows_and_severity_words() -> None:
    assert findings("  12:5  error  'x' is not defined  no-undef\n  3:1  warning  Unexpected console  no-console\n"
                    "  4:1  error  Missing semicolon  semi") == [
        ("  12:5  error  'x' is not defined  no-undef", ERROR), ("  3:1  warning  Unexpected console  no-console",
                                                                 WARNING), ("  4:1  error  Missing semicolon  semi", ERROR)]
    assert level_of("warning: unused variable") == (WARNING, "warning")
    assert level_of("UP035 `typing.List` is deprecated") == (ERROR, "UP035")  # a code and no severity: to fix
    assert level_of("starting server on port 8000") is None  # `app.py:45: starting server` is a log line


def test_log_lines_with_a_file_and_line_are_not_findings() -> None:
    raw = "".join(f"worker.py:{40 + n % 7} Handling job {n}\nworker.py:{60 + n % 3}: stored {n}\n"
                  for n in range(500)) + "done: 500 jobs\n"
    result = prune(raw, command="python worker.py", exit_code=0)
    assert result.pruned_chars < result.original_chars / 5


def test_many_warnings_with_a_few_errors_keep_every_error() -> None:
    lines = [f"src/w{n}.c:{n}:1: warning: unused variable ‘v{n}’ [-Wunused-variable]" for n in range(1100)]
    for k, at in enumerate((7, 400, 801, 1099)):
        lines.insert(at, f"src/e{k}.c:{k + 1}:3: error: expected ‘;’ before ‘}}’ token")
    raw = "\n".join(lines) + "\n4 errors and 1100 warnings generated.\n"
    text = prune(raw, command="some-linter", exit_code=1).text
    assert all(f"src/e{k}.c:{k + 1}:3: error" in text for k in range(4))
    assert "4 errors and 1100 warnings generated." in text and len(text) < 4000


def test_error_lines_are_never_folded_as_similar() -> None:
    raw = "".join(f"2026-01-01 10:00:{n % 60:02d} ERROR worker {n}: job failed\n" for n in range(150))
    raw = "".join(f"2026-01-01 09:00:00 INFO tick {n}\n" for n in range(300)) + raw
    text = prune(raw, command="./worker", exit_code=1).text
    assert all(f"ERROR worker {n}: job failed" in text for n in range(150))


# -- never longer than the input beyond the exit-code line ----------------------------------

_line = st.one_of(st.text(min_size=0, max_size=120), st.sampled_from([
    "src/a.py:3:1: error: bad", "Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
    "ValueError: nope", "    at fn (/app/x.js:1:2)", "FAILED tests/t.py::test_a", "=== 1 failed in 0.1s ===", ""]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=300), st.sampled_from(["", "pytest", "make", "cat x", "node a.js", "git diff"]),
       st.sampled_from([0, 1, None]))
def test_never_longer_than_the_input_beyond_the_exit_code_line(lines: list[str], command: str,
                                                                exit_code: int | None) -> None:
    raw = "\n".join(lines)
    text = prune(raw, command=command, exit_code=exit_code).text
    assert len(text) <= len(header(exit_code)) + 1 + max(len(raw), len("(no output)"))


@pytest.mark.parametrize("real", [*cases("families"), *cases("general")], ids=lambda c: c.name)
def test_real_outputs_are_never_longer_either(real: Case) -> None:
    raw = real.output.decode("utf-8", errors="replace")
    text = prune(raw, command=real.command, exit_code=real.exit_code).text
    assert len(text) <= len(header(real.exit_code)) + 1 + len(raw)


def test_an_unknown_test_runner_keeps_counts_failing_ids_and_assertion_sides() -> None:
    passing = "".join(f"ok {n} - case {n} parses\n" for n in range(1, 400))
    raw = (passing + "not ok 400 - totals add up\n  ---\n  operator: equal\n  expected: 30\n  actual:   31\n"
           "  at: Test.<anonymous> (/app/test/totals.js:9:5)\n  ...\n" + passing.replace("ok ", "ok 1")
           + "Tests run: 799, Failures: 1, Errors: 0, Skipped: 0\n" + "log line\n" * 40)
    text = prune(raw, command="./run-checks", exit_code=1).text
    for line in ("not ok 400 - totals add up", "  expected: 30", "  actual:   31",
                 "Tests run: 799, Failures: 1, Errors: 0, Skipped: 0"):
        assert line in text
    assert len(text) < len(raw) / 5
