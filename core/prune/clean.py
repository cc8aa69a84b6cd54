"""Cleaning: turn raw terminal bytes into the lines a person would have seen.

Everything here works on the whole text with C-level `str` methods and a few regexes, because it
runs over every byte of every command's output (10 MB must prune in well under a second).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from core.console import OutputDecoder, console_encoding

# The escapes that terminals interpret instead of printing: CSI (colours, cursor moves, erase),
# OSC (titles, hyperlinks) ended by BEL or ST, charset selection and the other two-byte escapes.
# It is the expression the benchmark labels were made with, so nothing it keeps is removed here.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_=>]")
# Control characters that print nothing (NUL, BEL, SI...). Tab and newline stay; \r, backspace and
# ESC are dealt with first. Deleting bytes below 0x20 never splits a UTF-8 sequence.
_CONTROL_BYTES = bytes([*range(0x00, 0x08), 0x0B, 0x0C, *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
# A character followed by a backspace is overstruck (man pages, some progress spinners).
_OVERSTRIKE_RE = re.compile(r"[^\n\x08]\x08")
_BLANK_RUN_RE = re.compile(r"\n\n\n+")  # a literal prefix: found at C speed

# Lines longer than this are minified bundles, base64 blobs or single-line JSON: no real error
# message is that long, and one of them could eat the whole budget.
LINE_CAP = 2_000
LINE_KEEP = 1_000

# Names under which cleaning reports what it hid (keys of Pruned.hidden).
PROGRESS_REDRAWS = "progress redraws"
LONG_LINES = "long lines cut"


@dataclass
class Cleaned:
    """Cleaned output: `lines` are what a terminal would finally show, `text` is them joined."""

    text: str
    lines: list[str]
    hidden: Counter = field(default_factory=Counter)


def decode(output: str | bytes) -> str:
    """Bytes to text: UTF-8, or per line the console's code page (a Chinese Windows console writes
    GBK to a pipe); where that is unknown, a legacy code page the bytes read cleanly in. Whatever is
    left undecodable is shown as U+FFFD, never fatal."""
    if isinstance(output, str):
        return output
    try:
        return output.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return OutputDecoder(console_encoding() or guess_code_page(output)).decode(output, final=True)


# Legacy code pages worth guessing, with the characters their text is mostly made of: bytes that
# happen to decode in one of them but come out as something else are not that code page.
# Only the Chinese ones: Shift-JIS bytes read as valid GBK Han, so a Japanese console's output is
# read right only where the console's own code page is known (on Windows itself).
_HAN = r"\u2010-\u203b\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"  # and the punctuation used with it
_CODE_PAGES = (("gbk", re.compile(f"[{_HAN}]")), ("big5", re.compile(f"[{_HAN}]")))
_NOT_ASCII_RE = re.compile(r"[^\x00-\x7f]")
_GUESS_BYTES = 1 << 20  # enough of a large output to judge by


def guess_code_page(data: bytes) -> str | None:
    """The code page whose reading of the non-UTF-8 lines is valid and mostly its own script."""
    lines = []
    for line in data[:_GUESS_BYTES].split(b"\n"):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            lines.append(line)
    sample = b"\n".join(lines)
    for name, script in _CODE_PAGES:
        try:
            text = sample.decode(name)
        except UnicodeDecodeError:
            continue
        wide = _NOT_ASCII_RE.findall(text)
        if wide and len(script.findall(text)) >= 0.8 * len(wide):
            return name
    return None


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text) if "\x1b" in text else text


def resolve_redraws(line: str) -> tuple[str, int]:
    """What a terminal shows for a line redrawn with `\\r`: the text after the last `\\r`.

    Trailing `\\r`s (a `\\r\\r\\n` ending, a bar left as is) redraw nothing, so they are ignored.
    Returns the line and how many redraws were dropped.
    """
    body = line.rstrip("\r")
    cut = body.rfind("\r")
    if cut < 0:
        return body, 0
    return body[cut + 1:], body.count("\r")


def cut_long_line(line: str, length: int | None = None) -> str:
    """The start of a giant line and how long it was (`length` when `line` is only its start)."""
    return f"{line[:LINE_KEEP]} … [line cut: {length or len(line):,} chars]"


def clean_text(text: str) -> tuple[str, Counter]:
    """Escapes, redraws and control characters out; `\\n` line ends; long lines cut.

    Returns the text (its lines are what `clean` returns) and the counts of what was hidden.
    """
    hidden: Counter = Counter()
    text = strip_ansi(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if "\r" in text:
        lines = text.split("\n")
        redraws = 0
        for i, line in enumerate(lines):
            if "\r" in line:
                lines[i], n = resolve_redraws(line)
                redraws += n
        if redraws:
            hidden[PROGRESS_REDRAWS] = redraws
        text = "\n".join(lines)
    if "\x08" in text:
        for _ in range(8):  # nested overstrikes ("ab\b\b") need one pass per level
            text, n = _OVERSTRIKE_RE.subn("", text)
            if not n:
                break
        text = text.replace("\x08", "")
    if "\x1b" in text:  # an escape the regex does not know, cut short by the end of the output
        text = text.replace("\x1b", "")
    return _drop_controls(text), hidden


def _drop_controls(text: str) -> str:
    """Through bytes.translate: a regex over 10 MB of text costs six times as much."""
    data = text.encode("utf-8", errors="surrogatepass")
    kept = data.translate(None, _CONTROL_BYTES)
    return text if len(kept) == len(data) else kept.decode("utf-8", errors="replace")


def clean(output: str | bytes) -> Cleaned:
    """Decode and clean a whole output; blank-line runs shrink to one, outer blank lines go."""
    text, hidden = clean_text(decode(output))
    text = _BLANK_RUN_RE.sub("\n\n", text).strip("\n")
    lines = text.split("\n") if text else []
    if lines and max(map(len, lines)) > LINE_CAP:
        cut = 0
        for i, line in enumerate(lines):
            if len(line) > LINE_CAP:
                lines[i] = cut_long_line(line)
                cut += 1
        hidden[LONG_LINES] = cut
        text = "\n".join(lines)
    return Cleaned(text, lines, hidden)


def clean_line(line: str, length: int | None = None) -> str:
    """One archived line as the pruner showed it (used when paging the raw archive).

    `length` is the line's real length when `line` is only its start (a giant line read in part).
    """
    text, _ = clean_text(line)
    text = text.replace("\n", " ")
    return cut_long_line(text, length) if length or len(text) > LINE_CAP else text
