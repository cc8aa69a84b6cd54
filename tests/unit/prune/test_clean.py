"""Cleaning: escapes, redraws, control characters, giant lines, blank runs, decoding."""

from __future__ import annotations

import re

from core.prune.clean import LINE_CAP, PROGRESS_REDRAWS, clean, clean_line, resolve_redraws, strip_ansi
from tests.support.codepages import needs_code_page_guess

# The benchmark's expression: whatever it strips, cleaning must strip too.
SCORE_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_=>]")


def test_strips_every_kind_of_escape() -> None:
    raw = ("\x1b[1m\x1b[91merror\x1b[0m: \x1b[38;5;197mbad\x1b[0m \x1b]0;title\x07\x1b]8;;http://x\x1b\\link"
           "\x1b]8;;\x1b\\ \x1b(B\x1b)0plain\x1b=\x1b>\x1bM\x1b[?25l\x1b[2K\x1b[1A done")
    text = clean(raw).text
    assert "\x1b" not in text
    assert text == "error: bad link plain done"
    assert text == SCORE_ANSI_RE.sub("", raw)


def test_redraws_keep_what_the_terminal_shows_last() -> None:
    cleaned = clean("Downloading 10%\rDownloading 55%\rDownloading 100%\r\nnext line\r\n")
    assert cleaned.lines == ["Downloading 100%", "next line"]
    assert cleaned.hidden[PROGRESS_REDRAWS] == 2


def test_crlf_is_a_line_end_not_a_redraw() -> None:
    cleaned = clean("one\r\ntwo\r\n")
    assert cleaned.lines == ["one", "two"]
    assert not cleaned.hidden


def test_trailing_carriage_returns_redraw_nothing() -> None:
    assert resolve_redraws("bar 100%\r\r") == ("bar 100%", 0)
    assert resolve_redraws("a\rb\r") == ("b", 1)


def test_erase_line_after_carriage_return() -> None:
    assert clean("\x1b[2K 40%\r\x1b[2K 100% done\n").lines == [" 100% done"]


def test_control_characters_and_nul_go_tabs_stay() -> None:
    assert clean("a\x00b\x07c\td\x0fe\x7f").lines == ["abc\tde"]


def test_backspace_overstrike() -> None:
    assert clean("N\x08NAME and _\x08u").lines == ["NAME and u"]


@needs_code_page_guess
def test_invalid_utf8_is_replaced_not_fatal() -> None:
    cleaned = clean(b"ok \xff\xfe bytes \xc3\x28 end\n")
    assert cleaned.lines == ["ok \ufffd\ufffd bytes \ufffd( end"]


def test_giant_lines_are_cut_with_their_length() -> None:
    line = "x" * 1_234_567
    cleaned = clean(f"before\n{line}\nafter\n")
    assert cleaned.lines[0] == "before" and cleaned.lines[2] == "after"
    assert cleaned.lines[1].endswith("… [line cut: 1,234,567 chars]")
    assert len(cleaned.lines[1]) < LINE_CAP
    assert cleaned.hidden["long lines cut"] == 1


def test_real_error_lines_are_not_cut() -> None:
    line = "src/app.ts:8:65 - error TS2322: " + "Type 'x' is not assignable. " * 40
    assert len(line) < LINE_CAP
    assert clean(line).lines == [line]


def test_blank_runs_shrink_and_outer_blank_lines_go() -> None:
    assert clean("\n\n\na\n\n\n\n\nb\n\n").lines == ["a", "", "b"]


def test_clean_line_for_archive_paging() -> None:
    assert clean_line("\x1b[32mok\x1b[0m 50%\rok 100%\r") == "ok 100%"
    assert clean_line("abc", length=5_000_000).endswith("[line cut: 5,000,000 chars]")


def test_strip_ansi_leaves_plain_text_alone() -> None:
    assert strip_ansi("plain [1m text") == "plain [1m text"
