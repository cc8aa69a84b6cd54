"""`.po` → `.mo`, as GNU msgfmt does it, with the standard library only.

    python3 -m core.i18n.compile_catalog      rewrite every locale/*/LC_MESSAGES/*.mo from its .po

The `.mo` files are committed beside their sources (a test holds them equal to this compiler's
output), so a source checkout, `pip install .` and the exe all read the same catalog unbuilt."""

from __future__ import annotations

import ast
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

from core.i18n import LOCALE_DIR


@dataclass
class Entry:
    """One message: its source (and plural source), its translations, and whether it is fuzzy."""

    msgid: str = ""
    plural: str | None = None
    msgstr: list[str] = field(default_factory=list)
    fuzzy: bool = False
    line: int = 0


def parse_po(text: str) -> list[Entry]:
    """The entries of a `.po` file (obsolete `#~` entries left out)."""
    entries: list[Entry] = []
    entry, target, flags = Entry(), None, False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#,") and "fuzzy" in line:
            flags = True
        if not line or line.startswith("#"):
            continue
        keyword, _sep, rest = line.partition(" ")
        if line.startswith('"'):
            value, keyword = ast.literal_eval(line), ""
        else:
            value = ast.literal_eval(rest.strip())
        if keyword == "msgid":
            if target is not None:
                entries.append(entry)
            entry, target = Entry(fuzzy=flags, line=number), "msgid"
            flags = False
            entry.msgid = value
        elif keyword == "msgid_plural":
            entry.plural, target = value, "plural"
        elif keyword.startswith("msgstr"):
            entry.msgstr.append(value)
            target = "msgstr"
        elif keyword == "" and target == "msgid":
            entry.msgid += value
        elif keyword == "" and target == "plural":
            entry.plural = (entry.plural or "") + value
        elif keyword == "" and target == "msgstr":
            entry.msgstr[-1] += value
        else:
            raise ValueError(f"line {number}: cannot read {raw!r}")
    if target is not None:
        entries.append(entry)
    return entries


def compile_mo(entries: list[Entry]) -> bytes:
    """The `.mo` bytes of `entries`: translated, non-fuzzy ones (and the header), sorted by source."""
    pairs: dict[bytes, bytes] = {}
    for e in entries:
        if (e.fuzzy and e.msgid) or not any(e.msgstr):
            continue
        key = e.msgid if e.plural is None else f"{e.msgid}\0{e.plural}"
        pairs[key.encode("utf-8")] = "\0".join(e.msgstr).encode("utf-8")
    keys = sorted(pairs)
    ids = strs = b""
    offsets = []
    for key in keys:
        offsets.append((len(ids), len(key), len(strs), len(pairs[key])))
        ids += key + b"\0"
        strs += pairs[key] + b"\0"
    start = 7 * 4 + 16 * len(keys)  # the header, then the two tables of (length, offset)
    id_table = [v for o, n, _, _ in offsets for v in (n, start + o)]
    str_table = [v for _, _, o, n in offsets for v in (n, start + len(ids) + o)]
    header = struct.pack("Iiiiiii", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + 8 * len(keys), 0, 0)
    return header + struct.pack(f"{len(id_table)}i", *id_table) + struct.pack(
        f"{len(str_table)}i", *str_table) + ids + strs


def sources() -> list[Path]:
    return sorted(LOCALE_DIR.glob("*/LC_MESSAGES/*.po"))


def main() -> int:
    for po in sources():
        mo = po.with_suffix(".mo")
        mo.write_bytes(compile_mo(parse_po(po.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
