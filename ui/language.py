"""`/lang`: the interface's language, shown or switched, the same in every interactive front end.

A switch changes what the agent says from now on; the model keeps the language its session began
with (it is told once, at the start, so the cached prompt prefix stays the same)."""

from __future__ import annotations

from core.i18n import N_, _, language, use
from core.i18n.choice import named

COMMAND = {"/lang": N_("show the interface's language, or switch: /lang zh|en")}
NAMES = {"en": "English", "zh": "中文"}


def lang_command(arg: str) -> str:
    """What `/lang ARG` answers, after switching when ARG names a language."""
    if not arg:
        return _("Interface language: {name}. Switch with /lang zh|en.").format(name=NAMES[language()])
    chosen = named(arg)
    if chosen is None:
        return _("Unknown language {value!r}: /lang zh or /lang en.").format(value=arg)
    use(chosen)
    return _("Interface language: {name}. The model keeps this session's language; /clear starts one in the new "
             "language.").format(name=NAMES[chosen])
