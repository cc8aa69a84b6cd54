"""The message catalog: every string the code sends through `_()`, `N_()` or `ngettext()` has a
Chinese translation in the `.po`, none is fuzzy or left over, each keeps its source's format fields,
and the committed `.mo` is exactly what the `.po` compiles to."""

from __future__ import annotations

import ast
import functools
import gettext
import string
from pathlib import Path

import pytest

from core import i18n
from core.i18n.compile_catalog import Entry, compile_mo, parse_po, sources
from tests.support.paths import ROOT

PO = i18n.LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
MARKERS = {"_": 1, "N_": 1, "ngettext": 2}  # the name, and how many leading arguments are messages


def code_files() -> list[Path]:
    return [ROOT / "agent.py", ROOT / "tui.py", *sorted((ROOT / "core").rglob("*.py")),
            *sorted((ROOT / "ui").rglob("*.py"))]


def marked(tree: ast.AST) -> list[tuple[str, ...]]:
    """The messages `tree` marks: (msgid,) or (msgid, msgid_plural). An f-string given to a marker, or
    anything but a literal to N_(), is named as an error: no catalog could hold it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS:
            args = node.args[:MARKERS[node.func.id]]
            if all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
                found.append(tuple(a.value for a in args))  # type: ignore[attr-defined]
            elif any(isinstance(a, ast.JoinedStr) for a in args) or node.func.id == "N_":
                found.append((f"<not a literal at line {node.lineno}>",))
            # else: `_(name)` translates a message marked where it was written, with N_()
    return found


def extract() -> dict[tuple[str, ...], str]:
    """Every marked message of the code → the first file marking it."""
    messages: dict[tuple[str, ...], str] = {}
    for path in code_files():
        for message in marked(ast.parse(path.read_text(encoding="utf-8"))):
            messages.setdefault(message, str(path.relative_to(ROOT)))
    return messages


@functools.cache
def catalog() -> dict[tuple[str, ...], Entry]:
    entries = parse_po(PO.read_text(encoding="utf-8"))
    return {((e.msgid,) if e.plural is None else (e.msgid, e.plural)): e for e in entries if e.msgid}


def fields(text: str) -> set[str]:
    """The named fields of a str.format message, and the %-placeholders of argparse's."""
    names = {name for _text, name, _spec, _conv in string.Formatter().parse(text) if name is not None}
    return names | {part.split(")")[0] for part in text.split("%(")[1:]}


def test_every_marked_message_is_translated() -> None:
    entries = catalog()
    missing = {message: where for message, where in extract().items() if message not in entries}
    assert missing == {}


def test_the_catalog_has_no_untranslated_fuzzy_or_unused_entry() -> None:
    used = extract()
    entries = catalog()
    assert [e.msgid for e in entries.values() if not all(e.msgstr) or e.fuzzy] == []
    assert [key for key in entries if key not in used] == []


@pytest.mark.parametrize("key", sorted(catalog()), ids=lambda key: key[0][:40])
def test_a_translation_keeps_its_fields(key: tuple[str, ...]) -> None:
    entry = catalog()[key]
    for translated in entry.msgstr:
        assert fields(translated) == fields(entry.msgid), translated


def test_the_committed_mo_is_the_compiled_po() -> None:
    assert sources(), "no .po catalog found"
    for po in sources():
        assert po.with_suffix(".mo").read_bytes() == compile_mo(parse_po(po.read_text(encoding="utf-8"))), (
            f"{po.with_suffix('.mo')} is stale: run python3 -m core.i18n.compile_catalog")


def test_the_compiled_mo_reads_back_through_gettext(tmp_path: Path) -> None:
    """The compiler's output is a catalog GNU gettext reads: a plain message, a plural, the header."""
    entries = parse_po('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n'
                       '"Plural-Forms: nplurals=1; plural=0;\\n"\n\n'
                       '#, fuzzy\nmsgid "skipped"\nmsgstr "跳过"\n\n'
                       'msgid "a \\"quoted\\"\\nline"\nmsgstr "引号\\n行"\n\n'
                       'msgid "{n} row"\nmsgid_plural "{n} rows"\nmsgstr[0] "{n} 行"\n')
    (tmp_path / "x.mo").write_bytes(compile_mo(entries))
    with open(tmp_path / "x.mo", "rb") as handle:
        read = gettext.GNUTranslations(handle)
    assert read.gettext('a "quoted"\nline') == "引号\n行"
    assert read.ngettext("{n} row", "{n} rows", 5) == "{n} 行"
    assert read.gettext("skipped") == "skipped"  # fuzzy: not compiled
    assert read.gettext("absent") == "absent"
