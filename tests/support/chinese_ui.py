"""What the Chinese interface's tests look for: the environment that asks for it through the locale
alone, the English words that may appear in it (names of commands, flags, keys, modes), and text
measured in terminal cells."""

from __future__ import annotations

import re

from ui.cells import cell_width

# The locale says Chinese; nothing else names a language (an inherited LC_ALL would win over LANG).
CHINESE_LOCALE = {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "DEEPSEEK_LANG": ""}

# Runs agent.py (argv[1]) in a console whose output code page is 936.
CP936 = ("import ctypes, runpy, sys; ctypes.WinDLL('kernel32').SetConsoleOutputCP(936); "
         "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
# Names a Chinese screen shows as they are: keys, modes, placeholders of usage lines, product names, units.
NAMES = {"Enter", "Esc", "Ctrl", "Alt", "Shift", "Tab", "PgUp", "PgDn", "Up", "Down", "Home", "End", "J", "C", "D",
         "L", "R", "O", "auto", "ask", "yes", "zh", "en", "NAME", "PATH", "ID", "N", "MCP", "Markdown", "OSC",
         "last", "restart", "allow", "deepseek", "agent", "API", "REPL", "TUI", "s", "B", "KB", "MB", "GB"}  # units
# A slash command, a flag, a tool name (run_shell), an environment variable, a path or file name, a model name: names, whole.
_NAME = re.compile(r"(?:/|--)[\w-]+|\w+_\w+|\$?[A-Z][A-Z0-9_]{2,}\w*|[\w.-]*[./\\][\w./\\-]+|deepseek-[\w.-]+")
_WORD = re.compile(r"(?<![0-9])[A-Za-z]+(?:'[A-Za-z]+)*")  # not a unit after a number (12k)


def english_words(text: str, allowed: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The English words of `text` that are not names."""
    return [w for w in _WORD.findall(_NAME.sub(" ", text)) if w not in NAMES and w not in allowed]


def too_wide(lines: list[str], width: int) -> list[str]:
    """The lines wider than the terminal, measured in cells."""
    return [line for line in lines if cell_width(line.rstrip()) > width]


def border_columns(lines: list[str], corners: str = "┌└│┐┘") -> set[tuple[int, int]]:
    """(first, last) cell columns of the frame characters on each framed line: one pair when the
    frame is aligned."""
    found = set()
    for line in lines:
        cols = [cell_width(line[:i]) for i, char in enumerate(line) if char in corners]
        if len(cols) >= 2:
            found.add((cols[0], cols[-1]))
    return found
