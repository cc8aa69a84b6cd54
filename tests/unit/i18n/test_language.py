"""Which language the interface starts in, and what a language does: `--lang`, then DEEPSEEK_LANG,
then the POSIX locale (LC_ALL, LC_MESSAGES, LANG), then Windows' UI language, else English; `/lang`
switches the words, and the model is told the language once, in the session's instructions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core import i18n
from core.agent.prompt import build_instructions
from core.i18n.choice import LanguageError, choose, from_locale, named
from core.runtime.slash import help_lines
from ui.language import lang_command


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    i18n.use("en")


@pytest.mark.parametrize(("locale", "language"), [
    ("zh_CN.UTF-8", "zh"), ("zh_CN.GB18030", "zh"), ("zh_CN.gbk", "zh"), ("zh_CN", "zh"), ("zh", "zh"),
    ("zh_TW.UTF-8", "zh"), ("zh_HK.Big5-HKSCS", "zh"), ("zh_SG.UTF-8", "zh"), ("zh-Hans", "zh"), ("zh_CN@pinyin", "zh"),
    ("C.UTF-8", "en"), ("C", "en"), ("POSIX", "en"), ("en_US", "en"), ("en_GB.UTF-8", "en"), ("de_DE.UTF-8", "en"),
    ("ja_JP.UTF-8", "en"), ("zu_ZA.UTF-8", "en"),
])
def test_a_locale_s_language(locale: str, language: str) -> None:
    assert from_locale(locale) == language
    assert choose(None, {"LANG": locale}) == language


@pytest.mark.parametrize(("value", "language"), [
    ("zh", "zh"), ("ZH", "zh"), ("zh_CN", "zh"), ("zh-CN", "zh"), ("zh-Hans", "zh"), ("zh_CN.UTF-8", "zh"),
    ("chinese", "zh"), ("中文", "zh"), (" zh ", "zh"), ("en", "en"), ("en_US.UTF-8", "en"), ("English", "en"),
    ("fr", None), ("zhx", None), ("", None), ("enable", None),
])
def test_what_a_setting_names(value: str, language: str | None) -> None:
    assert named(value) == language


def test_the_first_that_says_wins() -> None:
    everything = {"DEEPSEEK_LANG": "en", "LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8", "LANG": "zh_CN.UTF-8"}
    windows_chinese = lambda: 0x0804  # noqa: E731
    assert choose("zh", everything, windows_chinese) == "zh"  # --lang over all
    assert choose(None, everything, windows_chinese) == "en"  # DEEPSEEK_LANG over the locale
    assert choose(None, {"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "zh_CN", "LANG": "zh_CN"}) == "en"
    assert choose(None, {"LC_ALL": "", "LC_MESSAGES": "zh_CN.GB18030", "LANG": "en_US"}) == "zh"  # empty: unset
    assert choose(None, {"LC_MESSAGES": "C.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert choose(None, {"LANG": "C.UTF-8"}, windows_chinese) == "en"  # a locale that is set says it
    assert choose(None, {}, windows_chinese) == "zh"
    assert choose(None, {}, lambda: None) == "en"
    assert choose(None, {}) == "en"


@pytest.mark.parametrize(("langid", "language"), [
    (0x0804, "zh"), (0x1004, "zh"), (0x0404, "zh"), (0x0C04, "zh"), (0x1404, "zh"),
    (0x0409, "en"), (0x0411, "en"), (0x0407, "en"), (0x0000, "en"),
])
def test_windows_ui_language(langid: int, language: str) -> None:
    assert choose(None, {}, lambda: langid) == language


@pytest.mark.parametrize(("flag", "environ", "says"), [
    ("fr", {}, "--lang=fr"), (None, {"DEEPSEEK_LANG": "klingon"}, "DEEPSEEK_LANG=klingon"),
])
def test_a_setting_naming_no_language_is_an_error(flag: str | None, environ: dict[str, str], says: str) -> None:
    with pytest.raises(LanguageError, match=says):
        choose(flag, {**environ, "LANG": "zh_CN.UTF-8"})


def test_english_reads_no_catalog_and_chinese_translates() -> None:
    i18n.use("en")
    assert i18n._("Commands:") == "Commands:" and i18n._state["catalog"] is not None
    i18n.use("zh")
    assert i18n._state["catalog"] is None  # read at the first message, not before
    assert i18n._("Commands:") == "命令："
    assert i18n.ngettext("{count} more row above (↑, PgUp)", "{count} more rows above (↑, PgUp)", 3) \
        == "上方还有 {count} 行（↑、PgUp）"
    assert i18n._("a message the catalog lacks") == "a message the catalog lacks"
    with pytest.raises(ValueError):
        i18n.use("fr")


def test_lang_switches_the_words_of_what_follows() -> None:
    english = help_lines()
    assert lang_command("") == "Interface language: English. Switch with /lang zh|en."
    assert "中文" in lang_command("zh_CN")
    assert help_lines()[0] == "命令：" and help_lines() != english
    assert "/lang zh" in lang_command("français") and i18n.language() == "zh"
    lang_command("en")
    assert help_lines() == english


def test_the_model_is_told_the_language_only_when_it_is_not_english(tmp_path: Path) -> None:
    english = build_instructions(tmp_path, "bash")
    assert "Simplified Chinese" not in english
    i18n.use("zh")
    chinese = build_instructions(tmp_path, "bash")
    assert chinese.startswith(english) and chinese.endswith(i18n.INSTRUCTION["zh"])
    assert build_instructions(tmp_path, "bash") == chinese  # the same words every time: the cache holds


@pytest.fixture
def no_language_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An environment that names no language, and the .env the program reads (not written yet)."""
    for variable in ("DEEPSEEK_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    env_file = tmp_path / ".env"
    monkeypatch.setattr("core.config.default_env_file", lambda: env_file)
    return env_file


@pytest.mark.parametrize(("argv", "dotenv", "environ", "language"), [
    ([], "", {}, "en"),  # no argument at all: a double-click
    ([], "DEEPSEEK_LANG=zh\n", {}, "zh"),
    (["--plain"], "export DEEPSEEK_LANG='zh_CN'\n", {"LANG": "en_US.UTF-8"}, "zh"),  # above the locale
    ([], "DEEPSEEK_LANG=zh\n", {"DEEPSEEK_LANG": "en"}, "en"),  # the environment wins over the .env
    ([], "DEEPSEEK_LANG=zh\n", {"DEEPSEEK_LANG": "", "LANG": "C"}, "en"),  # set empty: the .env's is off
    (["--lang", "en"], "DEEPSEEK_LANG=zh\n", {}, "en"),
    (["--lang=en"], "DEEPSEEK_LANG=zh\n", {}, "en"),
    ([], "", {"LANG": "zh_CN.UTF-8"}, "zh"),
])
def test_the_language_is_read_from_the_dotenv_too(argv: list[str], dotenv: str, environ: dict[str, str],
                                                 language: str, no_language_set: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import agent

    if dotenv:
        no_language_set.write_text(dotenv, encoding="utf-8")
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    agent._start_language(argv)
    assert i18n.language() == language


def test_version_reads_no_dotenv(no_language_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent

    def read(*args: object, **kwargs: object) -> str:
        raise AssertionError("the .env was read for --version")

    monkeypatch.setattr("core.config.dotenv_value", read)
    agent._start_language(["--version"])
    assert i18n.language() == "en"
    with pytest.raises(AssertionError):
        agent._start_language([])  # the check bites: without --version the .env is read
