"""The interface's language: English source strings, translated through a gettext catalog.

`_()` translates a message now, `N_()` only marks one that is kept in a table and translated where it
is shown, `ngettext()` picks a plural; a `Deferred` is a message with values, kept in English and
translated by `_()` where it is shown. The language is English until `use()` names another; only then
is a catalog read, so an English run (and `--version`) never opens one. The catalogs are compiled
`.mo` files beside this module (`compile_catalog.py` writes them from the `.po` sources).
"""

from __future__ import annotations

import gettext
from pathlib import Path

DOMAIN = "deepseek-agent"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
CATALOGS = {"zh": "zh_CN"}  # a language of the interface → its catalog's folder
LANGUAGES = ("en", *CATALOGS)
# What the model is told, once per session, so it answers in the user's language.
INSTRUCTION = {"zh": "The user's interface is in Simplified Chinese: answer and ask in Simplified Chinese "
                     "unless the user writes in another language."}

_ENGLISH = gettext.NullTranslations()
_state: dict[str, object] = {"language": "en", "catalog": _ENGLISH}


def use(language: str) -> None:
    """Show the interface in `language` (one of LANGUAGES) from now on; its catalog is read at the
    first message translated."""
    if language not in LANGUAGES:
        raise ValueError(f"no interface language {language!r}")
    _state.update(language=language, catalog=None if language in CATALOGS else _ENGLISH)


def _catalog() -> gettext.NullTranslations:
    catalog = _state["catalog"]
    if catalog is None:
        folder = LOCALE_DIR / CATALOGS[language()] / "LC_MESSAGES"
        with open(folder / f"{DOMAIN}.mo", "rb") as handle:
            catalog = _state["catalog"] = gettext.GNUTranslations(handle)
    return catalog  # type: ignore[return-value]


def language() -> str:
    """The interface's language now ("en" or "zh")."""
    return str(_state["language"])


class Deferred(str):
    """A message with values, kept as its English text for what reads it as data (the model, the
    journal, `--json`, an f-string), that `_()` shows in the interface's language: its source (marked
    with N_()) and its fields are kept beside the text, and a field that is itself a Deferred is
    translated with it."""

    msgid: str
    fields: dict[str, object]

    def __new__(cls, msgid: str, **fields: object) -> Deferred:
        made = super().__new__(cls, msgid.format(**fields))
        made.msgid, made.fields = msgid, fields
        return made


def _(message: str) -> str:
    """`message` in the interface's language ("" stays "": gettext would give the catalog's header)."""
    if isinstance(message, Deferred):
        return _(message.msgid).format(**{name: _(value) if isinstance(value, Deferred) else value
                                          for name, value in message.fields.items()})
    return _catalog().gettext(message) if message else message


def N_(message: str) -> str:
    """Marks `message` for the catalog without translating it: tables built at import are translated
    where they are shown, so a language switch reaches them."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message, in the interface's language."""
    return _catalog().ngettext(singular, plural, n)


def model_instruction() -> str:
    """The line that tells the model the user's language ("" for English, the source language)."""
    return INSTRUCTION.get(language(), "")
