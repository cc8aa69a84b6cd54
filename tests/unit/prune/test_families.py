"""Each family on real outputs (tests/corpus/prune/families, made by generate_families.py with the real tools).

What must survive is computed from the raw output with patterns that follow the tool's documented
format (every `E ` line of pytest, every `error TS` line of tsc...), not listed by hand; each
pattern must select something, so a changed fixture cannot make a test pass vacuously.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from core.prune import prune
from core.prune.clean import clean
from core.prune.pipeline import SMALL_CHARS
from tests.support.prune_corpus import case, cases

Selector = Callable[[list[str]], list[str]]


def matching(pattern: str) -> Selector:
    rx = re.compile(pattern)
    return lambda lines: [line for line in lines if rx.search(line)]


def first(pattern: str, n: int) -> Selector:
    return lambda lines: matching(pattern)(lines)[:n]


def following(head: str, item: str, within: int = 12) -> Selector:
    """For each line matching `head`, the first line after it (within a few) matching `item`."""
    head_rx, item_rx = re.compile(head), re.compile(item)

    def select(lines: list[str]) -> list[str]:
        found = []
        for i, line in enumerate(lines):
            if head_rx.search(line):
                found += [nxt for nxt in lines[i + 1:i + 1 + within] if item_rx.search(nxt)][:1]
        return found
    return select


def preceding(head: str, item: str) -> Selector:
    """For each line matching `head`, the line just above it when that one matches `item`."""
    head_rx, item_rx = re.compile(head), re.compile(item)
    return lambda lines: [lines[i - 1] for i, line in enumerate(lines)
                          if i and head_rx.search(line) and item_rx.search(lines[i - 1])]


def last_line(lines: list[str]) -> list[str]:
    return lines[-1:]


def diff_changes(skip_file: str) -> Selector:
    """Every changed line of a diff outside `skip_file`."""
    def select(lines: list[str]) -> list[str]:
        out, skipping = [], False
        for line in lines:
            if line.startswith("diff --git "):
                skipping = skip_file in line
            elif not skipping and line[:1] in "+-" and not line.startswith(("+++", "---")):
                out.append(line)
        return out
    return select


def commit_subjects(n: int) -> Selector:
    def select(lines: list[str]) -> list[str]:
        commits = [i for i, line in enumerate(lines) if line.startswith("commit ")][:n]
        return [next(line for line in lines[c + 1:] if line.startswith("    ")) for c in commits]
    return select


@dataclass
class Expect:
    family: str
    keep: list[Selector]
    ratio: float | None  # pruned/original must be at most this; None: only "never much longer"


EXPECT: dict[str, Expect] = {
    # every `E` line with a fact in it (pytest's own advice, "Omitting 2 identical items", may go)
    "pytest_verbose_failures": Expect("pytest", [matching(r"^E\s+(?!Omitting \d+ identical|Use -v|\.\.\.Full output)\S"),
                                                 matching(r"^FAILED "),
                                                 matching(r"^=+ .* in [\d.]+s"),
                                                 matching(r"^\S+\.py:\d+: [\w.]*(Error|Exception)$")], 0.3),
    "pytest_quiet_pass": Expect("pytest", [matching(r"^\d+ passed in ")], 0.1),
    "unittest_failures": Expect("unittest", [matching(r"^(FAIL|ERROR): "), matching(r"^Ran \d+ tests"),
                                             matching(r"^FAILED \("), matching(r"^[\w.]+(Error|Exception): "),
                                             matching(r'File "/home/user/proj/')], 0.5),
    "python_crash": Expect("python", [matching(r"^[\w.]+(Error|Exception): "), matching(r'File "/home/user/proj/'),
                                      matching(r"^The above exception")], 0.7),
    "jest_failures": Expect("js-test", [matching(r"● "), matching(r"^Tests:"), matching(r"^Test Suites:"),
                                        matching(r"✕"), matching(r"^(?!\s+\d+ \|).*expect\("),  # not a code frame's neighbours
                                        matching(r"at .*__tests__")], 0.3),
    "jest_pass": Expect("js-test", [matching(r"^Tests:"), matching(r"^Test Suites:")], 0.15),
    "tsc_errors": Expect("tsc", [matching(r"\): error TS\d+: ")], None),
    "tsc_pretty": Expect("tsc", [matching(r" - error TS\d+: "), matching(r"^Found \d+ errors")], 0.7),
    "eslint_problems": Expect("eslint", [matching(r"^\s+\d+:\d+\s+error\s"), matching(r"problems? \(")], 0.1),
    "webpack_success": Expect("bundler", [matching(r"compiled successfully"), matching(r"^asset "),
                                          matching(r"^Entrypoint ")], 0.3),
    "webpack_error": Expect("bundler", [matching(r"^ERROR in "), matching(r"Module not found"),
                                        matching(r"compiled with \d+ error")], None),
    "vite_build": Expect("bundler", [matching(r"built in "), matching(r"modules transformed")], 0.6),
    "pip_install": Expect("packages", [matching(r"^Successfully installed "),
                                       matching(r"^Installing collected packages")], 0.7),
    "cargo_test_failure": Expect("cargo", [matching(r"panicked at"), matching(r"^test result: "),
                                           matching(r"\.\.\. FAILED$"), matching(r"^\s+left: "),
                                           matching(r"^\s*right: "), matching(r"^error: test failed")], 0.5),
    "cargo_build_errors": Expect("cargo", [matching(r"^error(\[E\d+\])?: "), following(r"^error\[", r"^\s*--> "),
                                           following(r"^error\[", r"^\d+ \|")], 0.7),
    "make_gcc_errors": Expect("c-build", [matching(r": error: "), matching(r"^make: \*\*\*"),
                                          preceding(r": error: ", r": In function"),
                                          following(r": error: ", r": note: ")], 0.3),
    "cmake_build": Expect("c-build", [matching(r"Built target"), matching(r"Build files have been written"),
                                      matching(r"^-- Configuring done")], 0.6),
    "git_diff": Expect("git-diff", [matching(r"^diff --git "), diff_changes("package-lock.json")], 0.2),
    "git_status": Expect("git-status", [matching(r"^On branch"), matching(r"^(Changes|Untracked)"),
                                        matching(r"^\t(modified|deleted|new file):"),
                                        matching(r"^\tapp/export\.py$")], 0.3),
    "git_log": Expect("git-log", [first(r"^commit ", 3), commit_subjects(3)], 0.5),
    "find_listing": Expect("listing", [last_line], 0.4),
    "tar_listing": Expect("listing", [last_line], 0.2),
}
SMALL = ["npm_install", "npm_missing_package", "pip_install_missing", "gcc_link_error"]


def load(name: str) -> tuple[bytes, str, int]:
    found = case("families", name)
    return found.output, found.command, found.exit_code


def test_every_fixture_has_an_expectation() -> None:
    names = {found.name for found in cases("families")}
    assert names == set(EXPECT) | set(SMALL)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_family_keeps_what_matters_and_shrinks(name: str) -> None:
    raw, command, exit_code = load(name)
    expect = EXPECT[name]
    lines = clean(raw).lines
    result = prune(raw, command=command, exit_code=exit_code)
    assert result.family == expect.family
    assert result.text.startswith(f"exit code {exit_code}\n")
    for selector in expect.keep:
        wanted = [line for line in selector(lines) if line.strip()]
        assert wanted, f"{name}: a selector found nothing in the fixture"
        missing = [line for line in wanted if line not in result.text]
        assert not missing, f"{name}: lost {missing[:3]}"
    if expect.ratio is not None:
        assert result.pruned_chars <= expect.ratio * result.original_chars, (name, result.pruned_chars)
    header = sum(len(line) + 1 for line in result.text.split("\n")[:2])
    assert result.pruned_chars <= result.original_chars + header


@pytest.mark.parametrize("name", SMALL)
def test_small_outputs_are_only_cleaned(name: str) -> None:
    raw, command, exit_code = load(name)
    cleaned = clean(raw)
    assert len(cleaned.text) < SMALL_CHARS
    assert prune(raw, command=command, exit_code=exit_code).text == f"exit code {exit_code}\n{cleaned.text}"


def test_detection_by_content_when_the_command_says_nothing() -> None:
    """`npm test`, `make check`, `./ci.sh`: the output itself names the tool."""
    for name, family in [("pytest_verbose_failures", "pytest"), ("jest_failures", "js-test"),
                         ("cargo_build_errors", "cargo"), ("tsc_errors", "tsc"), ("git_diff", "git-diff"),
                         ("make_gcc_errors", "c-build"), ("unittest_failures", "unittest")]:
        raw, _, exit_code = load(name)
        assert prune(raw, command="./ci.sh", exit_code=exit_code).family == family, name


def test_a_successful_build_counts_its_warnings_by_kind() -> None:
    raw, command, exit_code = load("cmake_build")
    text = prune(raw, command=command, exit_code=exit_code).text
    assert re.search(r"\[\d+ compiler warnings not shown: -W[\w-]+ ×\d+", text)


def test_a_failed_build_hides_its_warnings() -> None:
    raw, command, exit_code = load("make_gcc_errors")
    text = prune(raw, command=command, exit_code=exit_code).text
    assert ": warning: " not in text


# go is not installed on the machines this suite runs on, so its output cannot be generated with
# generate.py; this one follows the format `go test -v` prints (testing package, Go 1.20+).
GO_TEST_V = "".join(
    [f"=== RUN   TestAdd{i}\n--- PASS: TestAdd{i} (0.00s)\n" for i in range(60)]
    + ["=== RUN   TestTable\n=== RUN   TestTable/zero\n=== RUN   TestTable/negative\n",
       "    calc_test.go:31: Div(-4, 2) = 2, want -2\n",
       "--- FAIL: TestTable (0.00s)\n    --- PASS: TestTable/zero (0.00s)\n",
       "    --- FAIL: TestTable/negative (0.00s)\n",
       "=== RUN   TestLog\n    calc_test.go:40: computing 42\n--- PASS: TestLog (0.00s)\n",
       "FAIL\nFAIL\texample.com/calc\t0.004s\n", "ok  \texample.com/calc/internal\t0.002s\n", "FAIL\n"])


def test_go_test_keeps_failures_and_their_logs() -> None:
    result = prune(GO_TEST_V, command="go test -v ./...", exit_code=1)
    assert result.family == "go"
    for line in ["    calc_test.go:31: Div(-4, 2) = 2, want -2", "--- FAIL: TestTable (0.00s)",
                 "    --- FAIL: TestTable/negative (0.00s)", "FAIL\texample.com/calc\t0.004s",
                 "ok  \texample.com/calc/internal\t0.002s"]:
        assert line in result.text
    assert "computing 42" not in result.text  # the log of a test that passed
    assert result.hidden["passing tests"] >= 60
