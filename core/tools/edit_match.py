"""Where an `edit_file` passage belongs when the model's copy of it is not byte-exact.

Models copy passages with the wrong line endings, trailing blanks, indentation, tabs for spaces,
read_file's line numbers, extra blank lines, JSON escapes or two lines joined into one. Each strategy
below forgives one of those, tried in order from the strictest; the first that finds exactly one place
wins, and one that finds several stops the search (a wider one would find at least as many). A strategy
only ever relaxes whitespace or copy artefacts: two passages that differ in one visible character
never match, so a typo is never "fixed". Relaxed strategies match whole lines, never a passage that
starts or ends inside an unrelated line.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

# read_file's prefix is f"{number:>6}\t"; a copy may lose the padding.
_LINE_NUMBER = re.compile(r"^ *(\d+)\t")
# Other spellings of a copied line number: `grep -n`'s and search's `12:` (after `path:`), an editor's
# gutter `12 |`, and read_file's tab shown as spaces up to the tab stop at column 8. Content can start
# like these, so they count only at the lines they name.
_GUTTER = re.compile(r"^(?:[^\s:]+:)?(\d+):|^ *(\d+) *[|\u2502] ?|^(?= *(\d+) +)[ \d]{7} ")
# A file this short is shown whole when an edit misses it or a blind overwrite is refused.
SHOWN_LINES = 60
_JSON_ESCAPE = re.compile(r'\\([nrt"\\])')
_UNESCAPED = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


class EditMismatch(Exception):
    """No single place matched; the message says why and what to copy next time."""


@dataclass(frozen=True)
class Placement:
    """One replacement in the file's text: chars [start, end) become `replacement`."""

    start: int
    end: int
    replacement: str
    line: int  # 1-based line of `start`
    note: str  # what was forgiven, "" for an exact match


@dataclass(frozen=True)
class _Lines:
    """The file as lines: their text without line endings, and where each starts."""

    text: str
    bodies: list[str]
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> _Lines:
        bodies, starts = [], []
        at = 1 if text.startswith("\ufeff") else 0  # a BOM is not part of the first line
        for raw in text[at:].split("\n"):
            starts.append(at)
            bodies.append(raw[:-1] if raw.endswith("\r") else raw)
            at += len(raw) + 1
        return cls(text, bodies, starts)

    def span(self, first: int, stop: int) -> tuple[int, int]:
        """Chars of lines [first, stop), without the last line's ending (it stays)."""
        return self.starts[first], self.starts[stop - 1] + len(self.bodies[stop - 1])

    def eol(self, line: int) -> str:
        end = self.starts[line] + len(self.bodies[line])
        return "\r\n" if self.text.startswith("\r", end) else "\n"


@dataclass(frozen=True)
class _Candidate:
    first: int
    stop: int
    new_lines: list[str]
    note: str


# A line strategy: (file, old lines, new lines) -> every window it accepts.
_Strategy = Callable[[_Lines, list[str], list[str]], list[_Candidate]]


def locate(text: str, old: str, new: str) -> Placement:
    """The one place `old` names in `text`, and what goes there; EditMismatch otherwise."""
    exact = _exact(text, old, new)
    if exact is not None:
        return exact
    lines = _Lines.of(text)
    misplaced = ""
    for variant_old, variant_new, prefix, at in _variants(old, new):
        found = _line_strategies(lines, variant_old, variant_new, prefix)
        if found is not None and at in (None, found.line):
            return found
        if found is not None:
            misplaced = (f"old_text was not changed: its line numbers start at {at}, but that passage is at line "
                         f"{found.line} now; read the file again, and copy the passage without line numbers")
    raise EditMismatch(misplaced or _closest(text, old, new))


def locate_all(text: str, old: str, new: str) -> list[Placement]:
    """Every exact occurrence (line endings forgiven), for replace_all; no fuzzy matching."""
    for old_form, new_form, note in _eol_forms(text, old, new):
        places, at = [], 0
        while (found := text.find(old_form, at)) >= 0:
            places.append(Placement(found, found + len(old_form), new_form, text.count("\n", 0, found) + 1, note))
            at = found + len(old_form)
        if places:
            return places
    raise EditMismatch(_closest(text, old, new))


def _exact(text: str, old: str, new: str) -> Placement | None:
    for old_form, new_form, note in _eol_forms(text, old, new):
        count = text.count(old_form)
        if count == 1:
            start = text.find(old_form)
            return Placement(start, start + len(old_form), new_form, text.count("\n", 0, start) + 1, note)
        if count > 1:
            lines = _occurrence_lines(text, old_form)
            raise EditMismatch(f"old_text matches {count} times (lines {_list(lines)}); include more "
                               "surrounding lines to make it unique, or set replace_all=true")
    return None


def _eol_forms(text: str, old: str, new: str) -> list[tuple[str, str, str]]:
    """The passage as written, then in the file's line endings if they differ."""
    forms = [(old, new, "")]
    if "\r\n" in text and "\n" in old and "\r\n" not in old:
        forms.append((old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n"),
                      "matched with the file's CRLF line endings"))
    elif "\r\n" not in text and "\r\n" in old:
        forms.append((old.replace("\r\n", "\n"), new.replace("\r\n", "\n"), "matched with the file's LF line endings"))
    return forms


def _variants(old: str, new: str) -> list[tuple[list[str], list[str], str, int | None]]:
    """The passage as lines, then with each copy artefact removed: line numbers, blank lines
    around it, JSON escapes. Each variant runs through every line strategy; one that names its
    first line (a looser line-number spelling) must be found there."""
    old_lines, new_lines = _as_lines(old), _as_lines(new)
    out: list[tuple[list[str], list[str], str, int | None]] = [(old_lines, new_lines, "", None)]
    for prefix, note, anchored in ((_LINE_NUMBER, "removed read_file's line numbers", False),
                                   (_GUTTER, "removed the copied line numbers", True)):
        numbered = _strip_line_numbers(old_lines, prefix)
        if numbered is not None:
            first, stripped = numbered
            numbered_new = _strip_line_numbers(new_lines, prefix, counting=False)
            out.append((stripped, numbered_new[1] if numbered_new else new_lines, note, first if anchored else None))
            break
    trimmed = _trim_blank(old_lines)
    if trimmed is not None:
        lead, trail = trimmed
        out.append((old_lines[lead:len(old_lines) - trail], _trim_blank_like(new_lines, lead, trail),
                    "ignored blank lines around the passage", None))
    if "\\n" in old:
        out.append((_as_lines(_unescape(old)), _as_lines(_unescape(new)), "unescaped JSON \\n", None))
    return out


def _line_strategies(lines: _Lines, old: list[str], new: list[str], prefix: str) -> Placement | None:
    if not any(line.strip() for line in old):
        return None
    for name, strategy in _STRATEGIES:
        candidates = strategy(lines, old, new)
        if len(candidates) > 1:
            where = _list([c.first + 1 for c in candidates])
            raise EditMismatch(f"old_text matches {len(candidates)} places when {name} (lines {where}); "
                               "include more surrounding lines to make it unique")
        if candidates:
            found = candidates[0]
            start, end = lines.span(found.first, found.stop)
            note = "; ".join(part for part in (prefix, found.note) if part)
            return Placement(start, end, lines.eol(found.first).join(found.new_lines), found.first + 1, note)
    return None


def _windows(lines: _Lines, old: list[str], key: Callable[[str], str]) -> list[int]:
    want = [key(line) for line in old]
    keys = [key(line) for line in lines.bodies]
    size = len(want)
    return [i for i in range(len(keys) - size + 1) if keys[i:i + size] == want]


def _trailing(lines: _Lines, old: list[str], new: list[str]) -> list[_Candidate]:
    return [_Candidate(i, i + len(old), new, "matched ignoring trailing whitespace")
            for i in _windows(lines, old, str.rstrip)]


def _reindented(lines: _Lines, old: list[str], new: list[str]) -> list[_Candidate]:
    """Same lines under a different base indentation; new_text moves by the same amount."""
    return [_Candidate(i, i + len(old), moved, f"matched ignoring indentation; re-indented by {shift}")
            for i, moved, shift in _rebased(lines, old, new)]


def _rebased(lines: _Lines, old: list[str], new: list[str]) -> list[tuple[int, list[str], str]]:
    """(window, new_text moved to the window's base indentation, how far) for every window whose
    lines equal the passage's once stripped, with the same indentation relative to their first line."""
    out = []
    for i in _windows(lines, old, str.strip):
        shift = _uniform_shift(lines.bodies[i:i + len(old)], old)
        if shift is not None:
            file_base, old_base = shift
            out.append((i, [_rebase(line, old_base, file_base) for line in new], _describe(file_base, old_base)))
    return out


def _tabs_for_spaces(lines: _Lines, old: list[str], new: list[str]) -> list[_Candidate]:
    """The file indents with tabs and the passage with spaces, or the reverse; the file's unit wins."""
    file_unit = _indent_unit(lines.bodies)
    if file_unit is None:
        return []
    what = "tabs" if file_unit == "\t" else f"{len(file_unit)}-space indentation"
    found: dict[int, _Candidate] = {}
    for width in (4, 2, 8) if file_unit == "\t" else (len(file_unit),):
        convert = _converter(file_unit, width)
        converted = [convert(line) for line in old]
        if converted == old or any(line is None for line in converted):
            continue
        new_lines = [line if (line := convert(raw)) is not None else raw for raw in new]
        for i, moved, shift in _rebased(lines, [line or "" for line in converted], new_lines):
            note = f"matched after converting indentation to the file's {what}"
            found.setdefault(i, _Candidate(i, i + len(old), moved,
                                           note if shift == "0" else f"{note}; re-indented by {shift}"))
    return list(found.values())


def _joined_lines(lines: _Lines, old: list[str], new: list[str]) -> list[_Candidate]:
    """Lines the model joined into fewer: the same words, only line breaks and spacing differ.
    The window holds no blank line, so unrelated paragraphs are never joined."""
    want = " ".join(" ".join(old).split())
    if not want:
        return []
    out = []
    bodies = lines.bodies
    for i in range(len(bodies)):
        words: list[str] = []
        for stop in range(i + 1, len(bodies) + 1):
            if not bodies[stop - 1].strip():
                break
            words.extend(bodies[stop - 1].split())
            joined = " ".join(words)
            if not want.startswith(joined):
                break
            if joined == want and stop - i > len(old):
                base = _indent(bodies[i])
                old_base = _indent(next(line for line in old if line.strip()))
                out.append(_Candidate(i, stop, [_rebase(line, old_base, base) for line in new],
                                      f"matched ignoring line breaks: the file has this passage as "
                                      f"{stop - i} lines ({i + 1}-{stop}), not {len(old)}"))
                break
    return out


_STRATEGIES: list[tuple[str, _Strategy]] = [
    ("trailing whitespace is ignored", _trailing),
    ("indentation is ignored", _reindented),
    ("tabs and spaces are converted", _tabs_for_spaces),
    ("line breaks are ignored", _joined_lines),
]


def _as_lines(text: str) -> list[str]:
    text = text.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def _strip_line_numbers(lines: list[str], prefix: re.Pattern[str],
                        counting: bool = True) -> tuple[int, list[str]] | None:
    """The first number and the lines without their prefixes, when every line has one and (with
    `counting`: old_text's) they count up by one. new_text's may skip: lines were added."""
    numbers = [prefix.match(line) for line in lines]
    if not all(numbers):
        return None
    values = [int(next(g for g in m.groups() if g is not None)) for m in numbers if m]
    if counting and any(b != a + 1 for a, b in itertools.pairwise(values)):
        return None
    return values[0], [line[m.end():] for line, m in zip(lines, numbers, strict=True) if m]


def _trim_blank(lines: list[str]) -> tuple[int, int] | None:
    lead = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    trail = next((i for i, line in enumerate(reversed(lines)) if line.strip()), len(lines))
    if lead == len(lines) or (lead == 0 and trail == 0):
        return None
    return lead, trail


def _trim_blank_like(lines: list[str], lead: int, trail: int) -> list[str]:
    """Drop up to as many blank lines from new_text's ends as the passage had."""
    while lead and len(lines) > 1 and not lines[0].strip():
        lines, lead = lines[1:], lead - 1
    while trail and len(lines) > 1 and not lines[-1].strip():
        lines, trail = lines[:-1], trail - 1
    return lines


def _unescape(text: str) -> str:
    return _JSON_ESCAPE.sub(lambda m: _UNESCAPED[m.group(1)], text)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _uniform_shift(window: list[str], old: list[str]) -> tuple[str, str] | None:
    """(file base, passage base) when every non-blank line has the same indentation relative to its
    block's first line in both; None when the relative indentation differs."""
    pairs = [(_indent(f), _indent(o)) for f, o in zip(window, old, strict=True) if o.strip()]
    file_base, old_base = pairs[0]
    for file_ind, old_ind in pairs:
        if not (file_ind.startswith(file_base) and old_ind.startswith(old_base)):
            return None
        if file_ind[len(file_base):] != old_ind[len(old_base):]:
            return None
    return file_base, old_base


def _rebase(line: str, old_base: str, file_base: str) -> str:
    """Move a new_text line from the passage's base indentation to the file's, keeping the rest."""
    if not line.strip():
        return line
    if line.startswith(old_base):
        return file_base + line[len(old_base):]
    # Less indented than the passage's first line: keep what it has beyond the common part.
    ind = _indent(line)
    keep = len(file_base) - (len(old_base) - len(ind))
    return file_base[:max(0, keep)] + line[len(ind):]


def _describe(file_base: str, old_base: str) -> str:
    """How far a block moved: "8 spaces", "-1 tab", or both indentations when they mix."""
    for char, name in ((" ", "space"), ("\t", "tab")):
        if set(file_base + old_base) <= {char}:
            diff = len(file_base) - len(old_base)
            return f"{diff} {name}{'s' * (abs(diff) != 1)}" if diff else "0"
    return f"{file_base!r} instead of {old_base!r}"


def _indent_unit(bodies: list[str]) -> str | None:
    """The file's indentation: a tab, or its smallest run of leading spaces; None if not indented."""
    tabs = sum(1 for line in bodies if line.startswith("\t"))
    spaces = [len(_indent(line)) for line in bodies if line.startswith(" ") and line.strip()]
    if tabs > len(spaces):
        return "\t"
    if spaces and tabs == 0:
        return " " * min(spaces)
    return None


def _converter(file_unit: str, width: int) -> Callable[[str], str | None]:
    """Leading whitespace rewritten in the file's unit (`width` spaces to a tab); None when a line's
    indentation is not a whole number of units."""
    def convert(line: str) -> str | None:
        ind = _indent(line)
        spaces, tabs = ind.count(" "), ind.count("\t")
        unit = width if file_unit == "\t" else len(file_unit)
        if spaces % unit:
            return None
        levels = tabs + spaces // unit
        return file_unit * levels + line[len(ind):]
    return convert


def _occurrence_lines(text: str, needle: str) -> list[int]:
    lines, start = [], 0
    while (found := text.find(needle, start)) >= 0:
        lines.append(text.count("\n", 0, found) + 1)
        start = found + 1
    return lines


def _list(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:10])) + (" …" if len(numbers) > 10 else "")


def _closest(text: str, old: str, new: str) -> str:
    """Say why nothing matched and show the closest passage, so the next try can succeed. A weak
    model often repeats an edit that already landed: then new_text is in the file, and that is said."""
    if new.strip() and new not in old and new in text:
        line = text.count("\n", 0, text.find(new)) + 1
        return (f"old_text was not found, but new_text is already in the file at line {line}: this edit seems "
                "to be done already; read the file to check, and go on with the task")
    if " ".join(old.split()) in " ".join(text.split()):
        message = ("old_text was not found: it matches only when all whitespace is ignored, and that is not "
                   "safe here; copy the indentation and line breaks exactly")
    else:
        message = ("old_text was not found (differences in whitespace, indentation, line numbers and escapes "
                   "were forgiven: some other character differs)")
    file_lines = text.split("\n")
    want = old.strip("\n").split("\n")
    best, best_at = 0.0, -1
    first = want[0].strip()
    for i, line in enumerate(file_lines):
        score = difflib.SequenceMatcher(None, line.strip(), first).quick_ratio()
        if score > best:
            best, best_at = score, i
    close = best_at >= 0 and best > 0.5
    if len(file_lines) <= SHOWN_LINES:  # a small file whole: the next try needs no read_file step
        where = f"the closest passage is at line {best_at + 1}; " if close else ""
        return f"{message}; {where}the whole file ({len(file_lines)} lines) is:\n{numbered(file_lines)}"
    if close:
        block = file_lines[best_at: best_at + max(len(want), 1) + 1]
        return f"{message}; the closest passage is at line {best_at + 1}:\n{numbered(block[:30], best_at + 1)}"
    return f"{message}; read the file again to see its current content"


def numbered(lines: list[str], first: int = 1) -> str:
    """Lines as read_file shows them (number, tab, text), the form a model copies `old_text` from."""
    return "\n".join(f"{first + i:>6}\t{line.rstrip(chr(13))}" for i, line in enumerate(lines))
