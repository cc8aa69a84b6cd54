"""The gate's time is linear in a command's length, bounded, and stops on Esc: long or pathological
command lines never hold a turn (a 1 MB quoted argument once took 45 s, 20,000 braces 37 s)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.tools.cmdline import PARSERS, SUB, parse_posix
from core.tools.safety import MAX_JUDGED_CHARS, destructive_reason
from core.tools.safety.state import INTERRUPTED, MAX_JUDGING_SECONDS, TOO_LONG_TO_JUDGE

SHAPES: dict[str, Callable[[int], str]] = {
    "long single quote": lambda n: "echo '" + "a" * n + "'",
    "long double quote": lambda n: 'echo "' + "a b" * (n // 3) + '"',
    "long bare word": lambda n: "echo " + "a" * n,
    "many backslashes": lambda n: "echo " + "\\a" * (n // 2),
    "backslashes in quotes": lambda n: 'echo "' + "\\\\" * (n // 2) + '"',
    "deep $( ) nesting": lambda n: "echo " + "$(echo " * (n // 14) + ")" * (n // 14),
    "deep backquotes": lambda n: "echo " + "`echo " * (n // 12) + "`" * (n // 12),
    "many pipes": lambda n: "echo a" + " | cat" * (n // 6),
    "many commands": lambda n: "true; " * (n // 6),
    "unclosed braces": lambda n: "echo " + "{" * n,
    "brace commas": lambda n: "echo " + "{a," * (n // 3),
    "nested braces": lambda n: "echo " + "{a,{b," * (n // 12) + "}}" * (n // 12),
    "huge heredoc": lambda n: "cat <<EOF\n" + "line of text $x\n" * (n // 16) + "EOF\n",
    "many redirects": lambda n: "echo a" + " >x" * (n // 3),
    "open( without )": lambda n: "python3 -c \"" + "open('x'," * (n // 9) + "\"",
    "many variables": lambda n: "echo " + "$A${B}" * (n // 6),
}


def _seconds(run: Callable[[], object], runs: int) -> float:
    """The best of `runs`, without the garbage collector's pauses (noise, not the parser's cost)."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(runs):
            start = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - start)
    finally:
        gc.enable()
    return best


def _within_limit(head: str, pieces: Iterator[str]) -> str:
    """`head` and as many pieces as fit in the gate's size limit."""
    out = [head]
    size = len(head)
    for piece in pieces:
        if size + len(piece) > MAX_JUDGED_CHARS:
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def _parse(dialect: str, text: str) -> None:
    try:
        PARSERS[dialect](text)
    except Exception:  # Unparsed: an unbalanced shape is refused, and that is fine too
        pass


@pytest.mark.parametrize("dialect", ["posix", "powershell", "cmd"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_parsing_grows_linearly_with_the_length(shape: str, dialect: str) -> None:
    """Eight times the text takes about eight times as long (quadratic would be 64 times; the bound
    leaves room for a loaded machine)."""
    small_text, large_text = SHAPES[shape](16 * 1024), SHAPES[shape](128 * 1024)
    for _ in range(3):  # a busy machine slows one measure down now and then; quadratic is slow every time
        small = _seconds(lambda: _parse(dialect, small_text), runs=5)
        large = _seconds(lambda: _parse(dialect, large_text), runs=2)
        if large < 0.005 + 32 * small:
            return
    raise AssertionError(f"{shape} in {dialect}: {small:.4f} s for 16 KiB, {large:.4f} s for 128 KiB")


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_gate_judges_any_shape_under_the_size_limit_in_bounded_time(shape: str, tmp_path: Path) -> None:
    text = SHAPES[shape](MAX_JUDGED_CHARS - 100)
    assert len(text) <= MAX_JUDGED_CHARS
    start = time.perf_counter()
    destructive_reason(text, tmp_path, "posix")
    assert time.perf_counter() - start < MAX_JUDGING_SECONDS + 1.5


@pytest.mark.parametrize("size", [MAX_JUDGED_CHARS + 1, 1_000_000, 5_000_000])
def test_a_command_over_the_limit_is_refused_at_once_with_a_way_forward(size: int, tmp_path: Path) -> None:
    for text in ("echo '" + "a" * size + "'", "cat " + "x " * (size // 2), "{" * size):
        start = time.perf_counter()
        why = destructive_reason(text, tmp_path, "posix")
        assert time.perf_counter() - start < 0.5
        assert why is not None and f"{len(text):,} characters" in why and "write_file" in why


def test_a_line_naming_thousands_of_paths_stops_at_the_time_limit(tmp_path: Path) -> None:
    text = _within_limit("echo a", (f" >dir{n}/f" for n in range(MAX_JUDGED_CHARS)))
    start = time.perf_counter()
    why = destructive_reason(text, tmp_path, "posix")
    assert time.perf_counter() - start < MAX_JUDGING_SECONDS + 1.5
    assert why in (None, TOO_LONG_TO_JUDGE)


def test_judging_stops_when_the_user_cancels(tmp_path: Path) -> None:
    cancel = Cancel()
    cancel.cancel()
    for text in ("rm a b c", "echo a | cat | cat", "echo x > out.txt", "ls"):
        assert destructive_reason(text, tmp_path, "posix", cancel=cancel) == INTERRUPTED
    running = Cancel()
    text = _within_limit("echo a", (f" >d{n}/f" for n in range(MAX_JUDGED_CHARS)))
    threading.Timer(0.2, running.cancel).start()
    start = time.perf_counter()
    why = destructive_reason(text, tmp_path, "posix", cancel=running)
    assert why in (INTERRUPTED, None) and time.perf_counter() - start < 1.0


def test_ordinary_braces_still_expand_and_a_flood_of_them_is_unknown() -> None:
    [simple] = parse_posix("rm {a,b}/x{1..3}")
    assert [w.literal for w in simple.words] == ["rm", *[f"{d}/x{n}" for d in "ab" for n in (1, 2, 3)]]
    [simple] = parse_posix("echo " + "{a,b}" * 3000)
    assert simple.words[1].parts[0][0] == SUB
    [simple] = parse_posix("echo '{'a\\{b\"{c\"")
    assert simple.words[1].literal == "{a{b{c"


def test_words_built_from_many_pieces_keep_their_text() -> None:
    [simple] = parse_posix("echo " + "\\x" * 5000 + "'q'\"d\"$V")
    word = simple.words[1]
    assert word.parts[0] == ("lit", "x" * 5000 + "qd") and word.parts[1] == ("var", "V")
