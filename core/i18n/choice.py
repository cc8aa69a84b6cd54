"""Which language the interface starts in: the first that says one of `--lang`, DEEPSEEK_LANG, the
POSIX locale (LC_ALL, then LC_MESSAGES, then LANG, as the C library reads them), and on Windows the
user's display language; else English.

Every Chinese locale gets the Chinese interface, Traditional ones (zh_TW, zh_HK) included: the
catalog is Simplified Chinese, which those readers read far more easily than English, and
`--lang en` or DEEPSEEK_LANG=en keeps English for whoever prefers it."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping

LANGUAGE_SETTING = "DEEPSEEK_LANG"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
_CHINESE = re.compile(r"zh([_\-.@]|$)|chinese", re.IGNORECASE)
_ENGLISH = re.compile(r"en([_\-.@]|$)|english", re.IGNORECASE)
_CHINESE_PRIMARY_LANGUAGE = 0x04  # LANG_CHINESE: zh-CN 0x0804, zh-SG 0x1004, zh-TW 0x0404, zh-HK 0x0C04


class LanguageError(ValueError):
    """A language setting names no language the interface has."""


def named(value: str) -> str | None:
    """The interface language a `--lang` or DEEPSEEK_LANG value names ("zh", "zh_CN", "zh-Hans",
    "en_US.UTF-8"...), None for anything else."""
    value = value.strip()
    if _CHINESE.match(value) or value == "中文":
        return "zh"
    if _ENGLISH.match(value):
        return "en"
    return None


def from_locale(value: str) -> str:
    """A POSIX locale name's language: any zh_* is Chinese; C, POSIX and the rest are English."""
    return "zh" if _CHINESE.match(value.strip()) else "en"


def choose(flag: str | None, environ: Mapping[str, str],
           ui_language: Callable[[], int | None] | None = None) -> str:
    """The language to start in. A `flag` or DEEPSEEK_LANG that names none raises LanguageError;
    `ui_language` is the Windows user's UI language id (None: not Windows)."""
    for where, value in (("--lang", flag), (LANGUAGE_SETTING, environ.get(LANGUAGE_SETTING))):
        if value:
            language = named(value)
            if language is None:
                raise LanguageError(f"{where}={value} names no interface language: use zh or en.")
            return language
    for variable in LOCALE_VARIABLES:
        if environ.get(variable):
            return from_locale(environ[variable])
    langid = ui_language() if ui_language is not None else None
    if langid is not None and langid & 0x3FF == _CHINESE_PRIMARY_LANGUAGE:
        return "zh"
    return "en"


def windows_ui_language() -> int | None:
    """The Windows user's display language id (None elsewhere, or when the API is missing)."""
    if sys.platform != "win32":
        return None
    try:
        import ctypes

        return int(ctypes.windll.kernel32.GetUserDefaultUILanguage())  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return None
