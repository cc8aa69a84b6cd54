"""`--help` and `prune --help` in Chinese: argparse's own words translated, every section heading
ending in a full-width colon (选项：), a wrapped usage line continued under the program's name as
the terminal shows it (in cells), and English word for word as before."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import agent
from core import i18n
from tests.support.chinese_ui import english_words
from ui import prune_cli
from ui.cells import cell_width

PRUNE_NAMES = {"prune", "pytest", "q", "make", "argv", "h"}  # the program, its examples, its positional


@pytest.fixture
def chinese(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COLUMNS", "80")
    i18n.use("zh")
    yield
    i18n.use("en")


def _help(parse: object, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        parse(["--help"])  # type: ignore[operator]
    return capsys.readouterr().out


def _usage_indents(text: str, first_option: str) -> set[int]:
    """The cell column where the usage's options start, on its first line and on each continued one."""
    lines = text.split("\n\n")[0].split("\n")
    return {cell_width(lines[0][:lines[0].index(first_option)])} | {
        cell_width(line) - cell_width(line.lstrip()) for line in lines[1:]}


@pytest.mark.parametrize(("parse", "headings"), [
    (agent.parse_args, ["选项："]), (prune_cli.main, ["位置参数：", "选项：", "示例："])])
def test_help_headings_end_in_a_full_width_colon_and_usage_lines_align(
        parse: object, headings: list[str], chinese: None, capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(parse, capsys)
    assert text.startswith("用法：") and all(h in text.split("\n") for h in headings), text
    assert ":\n" not in text, text
    assert len(text.split("\n\n")[0].split("\n")) > 1 and len(_usage_indents(text, "[-h]")) == 1, text


def test_prune_speaks_chinese_but_for_names(chinese: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert english_words(_help(prune_cli.main, capsys), PRUNE_NAMES) == []
    assert prune_cli.main([]) == 2
    error = capsys.readouterr().err
    assert "请给出 --stdin 或 -- CMD ARGS..." in error and english_words(error, PRUNE_NAMES) == [], error


@pytest.mark.parametrize(("parse", "headings"), [
    (agent.parse_args, ["options:"]), (prune_cli.main, ["positional arguments:", "options:", "examples:"])])
def test_english_help_is_as_argparse_writes_it(parse: object, headings: list[str],
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = _help(parse, capsys)
    assert text.startswith("usage: ") and all(h in text.split("\n") for h in headings), text
    assert len(_usage_indents(text, "[-h]")) == 1, text
