"""UTF-8 everywhere: console streams, piped stdin, and command-line arguments.

Windows pipes default to the ANSI code page (cp1252), which turns Chinese into mojibake both ways;
POSIX turns undecodable argv/stdin bytes into lone surrogates, which `json.dumps` then refuses to
encode for the request. Everything that enters is therefore decoded as UTF-8 with replacement,
and everything that leaves is written as UTF-8.
"""

from __future__ import annotations

import io
import os
import sys


def setup_streams() -> None:
    """Make stdout/stderr UTF-8 with replacement; enable ANSI colours on Windows consoles."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            try:
                stream.reconfigure(encoding="utf-8", errors="replace")
            except (ValueError, OSError):
                pass
    if sys.platform == "win32":
        _enable_windows_vt()


def _enable_windows_vt() -> None:
    """Turn on VT processing so ANSI sequences render instead of printing as garbage."""
    try:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        for handle_id in (-11, -12):  # STD_OUTPUT_HANDLE, STD_ERROR_HANDLE
            handle = kernel32.GetStdHandle(handle_id)
            mode = ctypes.c_uint32()
            if kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
                kernel32.SetConsoleMode(handle, mode.value | 0x0004)  # ENABLE_VIRTUAL_TERMINAL_PROCESSING
    except (AttributeError, OSError):
        pass


def clean_text(text: str) -> str:
    """Replace lone surrogates (undecodable bytes smuggled in by the OS) with U+FFFD."""
    try:  # bytes the OS smuggled in as U+DC80..U+DCFF come back as themselves, then get replaced
        return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")


def read_piped_stdin() -> str:
    """All of stdin as text: bytes decoded as UTF-8 with replacement (a BOM is dropped)."""
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def stdin_is_interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


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
    return not os.environ.get("NO_COLOR") and sys.stderr.isatty()
