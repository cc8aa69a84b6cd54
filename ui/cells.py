"""Text measured in terminal cells: a CJK character takes two, a combining mark none. Whatever
aligns or cuts text for a terminal measures it so, and never cuts inside a character."""

from __future__ import annotations

import unicodedata


def cell_width(text: str) -> int:
    """The columns `text` takes in a terminal."""
    return sum(_char_width(char) for char in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or char in "\u200b\u200d\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def cut_cells(text: str, cells: int) -> str:
    """`text` in at most `cells` columns; where it is cut, a "…" says so."""
    if cell_width(text) <= cells:
        return text
    kept, used = [], 1
    for char in text:
        used += _char_width(char)
        if used > cells:
            break
        kept.append(char)
    return "".join(kept) + "…"


def pad(text: str, cells: int) -> str:
    """`text` followed by spaces to `cells` columns (as `f"{text:<cells}"` does for ASCII)."""
    return text + " " * max(0, cells - cell_width(text))
