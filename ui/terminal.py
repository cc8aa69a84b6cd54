"""The user's side of a terminal: reading a line or piped stdin, and whether to use colour.

Input is decoded as UTF-8 with replacement (a BOM is dropped), as `core.console` does for output.
"""

from __future__ import annotations

import os
import sys

from core.console import clean_text, is_terminal


def read_piped_stdin() -> str:
    """All of stdin as text: bytes decoded as UTF-8 with replacement (a BOM is dropped)."""
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def stdin_is_interactive() -> bool:
    return is_terminal(sys.stdin)


def read_line(prompt: str = "") -> str | None:
    """One line from the user; None at end of input. Piped lines are decoded as UTF-8.

    In a terminal, line editing and history come from the readline module where it exists; the
    prompt then goes through `input()` so that editing redraws it correctly."""
    if stdin_is_interactive():
        with_readline = sys.stdout.isatty() and _readline()
        if prompt and not with_readline:
            sys.stderr.write(prompt)
            sys.stderr.flush()
        try:
            return clean_text(input(prompt if with_readline else ""))
        except EOFError:
            return None
    if prompt:
        sys.stderr.write(prompt)
        sys.stderr.flush()
    raw = sys.stdin.buffer.readline()
    if not raw:
        return None
    return raw.decode("utf-8", errors="replace").rstrip("\r\n").lstrip("\ufeff")


def _readline() -> bool:
    try:
        import readline  # noqa: F401 - importing it is what turns line editing on for input()
    except ImportError:
        return False
    return True


def use_color() -> bool:
    """Colour on stderr only in a terminal, and never when NO_COLOR is set (no-color.org)."""
    return not os.environ.get("NO_COLOR") and is_terminal(sys.stderr)
