"""Properties of prune() over generated outputs: errors survive, results are deterministic,
re-pruning keeps what the first pass kept, the budget holds, and hostile input does not crash it."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.prune import prune
from core.prune.selection import is_marker
from tests.support.prune_corpus import cases

# Commands whose family keeps error lines whatever else it does (listings are excluded on purpose:
# there a path that contains "error" is just a path).
COMMANDS = ["", "some-tool --flag", "python app.py", "pytest -q", "python -m unittest", "npx jest", "npx tsc",
            "npx eslint .", "npx webpack", "npm install", "pip install x", "cargo build", "go test ./...", "make",
            "git diff", "git status", "git log"]

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)
_noise_line = st.one_of(
    st.builds(lambda w, n: f"processing {w} item {n}", _word, st.integers(0, 10**6)),
    st.builds(lambda w, n: f"  {w}/{w}_{n}.txt", _word, st.integers(0, 999)),
    st.builds(lambda n: f"Downloading chunk {n} of 9000", st.integers(0, 9000)),
    st.builds(lambda ws: " ".join(ws), st.lists(_word, min_size=1, max_size=8)),
    st.just(""),
)
_error_line = st.one_of(
    st.builds(lambda w, n: f"src/{w}.c:{n}:5: error: unknown type name ‘{w}’", _word, st.integers(1, 999)),
    st.builds(lambda w: f"FATAL: could not open {w}.db: Permission denied", _word),
    st.builds(lambda w, n: f"{w.capitalize()}Error: bad value {n} for {w}", _word, st.integers(0, 99)),
    st.builds(lambda w: f"panic: runtime error: index out of range in {w}", _word),
)


@st.composite
def outputs_with_errors(draw: st.DrawFn) -> tuple[str, list[str]]:
    noise = draw(st.lists(_noise_line, min_size=0, max_size=400))
    errors = draw(st.lists(_error_line, min_size=1, max_size=5, unique=True))
    lines = list(noise)
    for err in errors:
        lines.insert(draw(st.integers(0, len(lines))), err)
    return "\n".join(lines) + "\n", errors


def content_lines(text: str) -> list[str]:
    """The lines of a result that came from the output: not the header, stamp, markers or notes."""
    body = text.split("\n")[1:]
    if body and body[0].startswith("[pruned "):
        body = body[1:]
    return [line for line in body if not is_marker(line) and not (line.strip().startswith("[") and
                                                                  line.strip().endswith("]"))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outputs_with_errors(), st.sampled_from(COMMANDS), st.sampled_from([0, 1, 2, None]))
def test_error_lines_always_survive(case: tuple[str, list[str]], command: str, exit_code: int | None) -> None:
    text, errors = case
    result = prune(text, command=command, exit_code=exit_code)
    for err in errors:
        assert err in result.text, (command, err)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outputs_with_errors(), st.sampled_from(COMMANDS))
def test_pruning_is_deterministic(case: tuple[str, list[str]], command: str) -> None:
    text, _ = case
    assert prune(text, command=command, exit_code=1) == prune(text, command=command, exit_code=1)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outputs_with_errors(), st.sampled_from(COMMANDS), st.sampled_from([0, 1]))
def test_pruning_again_keeps_every_line_the_first_pass_kept(case: tuple[str, list[str]], command: str,
                                                             exit_code: int) -> None:
    """Idempotence, in the sense that matters: a second pass loses nothing the first pass showed."""
    text, _ = case
    first = prune(text, command=command, exit_code=exit_code)
    second = prune(first.text, command=command, exit_code=exit_code)
    second_lines = set(second.text.split("\n"))
    for line in content_lines(first.text):
        assert line in second_lines, (command, line)
    assert second.text.split("\n")[0] == first.text.split("\n")[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=5000), st.sampled_from(COMMANDS), st.integers(1, 20_000))
def test_any_bytes_within_any_budget(data: bytes, command: str, budget: int) -> None:
    result = prune(data, command=command, exit_code=1, budget_chars=budget)
    assert len(result.text) <= budget
    assert result.text.startswith("exit code 1"[:budget])
    assert "\x00" not in result.text and "\x1b" not in result.text


def test_nul_bytes_and_invalid_utf8() -> None:
    data = b"start\x00\x00 \xff\xfe\xfd mid \xc3\x28\n" * 200 + b"error: the \x00end\n"
    result = prune(data, command="tool", exit_code=1)
    assert "error: the end" in result.text
    assert "\x00" not in result.text


def test_a_20_mb_single_line() -> None:
    data = b"{" + b'"k": "v", ' * 2_000_000 + b"}"
    start = time.perf_counter()
    result = prune(data, command="cat bundle.min.js", exit_code=0)
    assert time.perf_counter() - start < 10
    assert len(result.text) <= 12_000
    assert "[line cut: 20,000,002 chars]" in result.text


def test_a_million_short_lines() -> None:
    data = "".join(f"ok {i}\n" for i in range(1_000_000)) + "FAILED: case 77 timed out\n"
    start = time.perf_counter()
    result = prune(data, command="./run-all", exit_code=1)
    assert time.perf_counter() - start < 20
    assert len(result.text) <= 12_000
    assert "FAILED: case 77 timed out" in result.text
    assert result.hidden


def test_a_million_lines_of_errors_still_fit() -> None:
    data = "".join(f"src/f{i}.c:1:1: error: e{i}\n" for i in range(1_000_000))
    result = prune(data, command="make", exit_code=2, budget_chars=12_000)
    assert len(result.text) <= 12_000
    assert "src/f0.c:1:1: error: e0" in result.text
    assert "src/f999999.c:1:1: error: e999999" in result.text


def test_ten_megabytes_of_real_output_in_linear_time() -> None:
    """The fixtures' outputs repeated to 1 MB and to 10 MB: ten times the text takes about ten times
    the CPU time, never a hundred (quadratic). CPU time of this process, and a ratio, so that a busy
    machine slows both sizes alike instead of failing a wall-clock bound."""
    block = "\n".join(real.output.decode("utf-8", errors="replace") for real in cases("families"))
    big = (block * (10_000_000 // len(block) + 1))[:10_000_000]
    small = big[:1_000_000]
    for command in ("", "pytest", "make", "npx webpack", "npm install"):
        spent = {}
        for name, text in (("small", small), ("big", big)):
            start = time.process_time()
            result = prune(text, command=command, exit_code=1)
            spent[name] = time.process_time() - start
            assert len(result.text) <= 12_000
        assert spent["big"] < 30 * max(spent["small"], 0.05), (command, spent)
