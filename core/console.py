"""UTF-8 everywhere: console streams, command output and command-line arguments.

Windows pipes default to the ANSI code page (cp1252), which turns Chinese into mojibake both ways;
POSIX turns undecodable argv/stdin bytes into lone surrogates, which `json.dumps` then refuses to
encode for the request. Everything that enters is therefore decoded as UTF-8 with replacement,
and everything that leaves is written as UTF-8.
"""

from __future__ import annotations

import codecs
import io
import re
import sys
from functools import lru_cache
from typing import Any


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


@lru_cache(maxsize=1)
def _kernel32() -> Any:
    """kernel32 with the signatures used here declared: a HANDLE is pointer-sized, not a C int."""
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.GetStdHandle.argtypes, kernel32.GetStdHandle.restype = [wintypes.DWORD], wintypes.HANDLE
    kernel32.GetConsoleMode.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD)]
    kernel32.GetConsoleMode.restype = wintypes.BOOL
    kernel32.SetConsoleMode.argtypes, kernel32.SetConsoleMode.restype = [wintypes.HANDLE, wintypes.DWORD], wintypes.BOOL
    for name in ("GetConsoleOutputCP", "GetOEMCP", "GetACP"):
        getattr(kernel32, name).argtypes, getattr(kernel32, name).restype = [], wintypes.UINT
    kernel32.GetFileInformationByHandleEx.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
    kernel32.GetFileInformationByHandleEx.restype = wintypes.BOOL
    return kernel32


def _enable_windows_vt() -> None:
    """Turn on VT processing so ANSI sequences render instead of printing as garbage."""
    try:
        from ctypes import byref, wintypes

        kernel32 = _kernel32()
        for handle_id in (-11, -12):  # STD_OUTPUT_HANDLE, STD_ERROR_HANDLE
            handle = kernel32.GetStdHandle(handle_id & 0xFFFFFFFF)
            mode = wintypes.DWORD()
            if kernel32.GetConsoleMode(handle, byref(mode)):
                kernel32.SetConsoleMode(handle, mode.value | 0x0004)  # ENABLE_VIRTUAL_TERMINAL_PROCESSING
    except (AttributeError, OSError):
        pass


def console_encoding() -> str | None:
    """The code page a Windows console's programs write to a pipe when they do not write UTF-8:
    the console's output code page (what `chcp` shows: 936 for Chinese, 437/850 for Western
    systems), or the OEM code page when this process has no console. None on POSIX, for UTF-8
    (65001) and for a code page Python does not know."""
    if sys.platform != "win32":
        return None
    try:
        kernel32 = _kernel32()
        page = kernel32.GetConsoleOutputCP() or kernel32.GetOEMCP()
    except (AttributeError, OSError):
        return None
    try:
        name = codecs.lookup(f"cp{page}").name
    except LookupError:
        return None
    return None if name == "utf-8" else name


class OutputDecoder:
    """A command's output bytes to text, incrementally (`final` at the end).

    Each line (ended by \n or \r) is UTF-8 when it decodes as UTF-8, else it is read in `fallback`,
    the console code page: cmd's built-ins, PowerShell and many native programs write that to a pipe,
    so a Chinese system's GBK output is shown as Chinese, not as U+FFFD. Per line, because one
    command can mix both (a UTF-8 Python child, then `dir`). Without a fallback (POSIX), bytes that
    are not UTF-8 become U+FFFD. A line that is not yet complete is shown as far as it is certain:
    its UTF-8 without a fallback; with one, its ASCII, since the start of a GBK line can look like
    UTF-8 (GBK's 末 is C4 A9, UTF-8's ĩ). The rest waits for the line's end (or HOLD_LIMIT bytes)."""

    HOLD_LIMIT = 65536

    def __init__(self, fallback: str | None = None) -> None:
        self.fallback = fallback
        self._held = b""

    def decode(self, data: bytes, final: bool = False) -> str:
        data = self._held + data
        self._held = b""
        cut = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        lines, rest = data[:cut], data[cut:]
        try:
            text = lines.decode("utf-8")
        except UnicodeDecodeError:
            text = "".join(self._line(line) for line in _LINE_END.split(lines))
        if final or len(rest) > self.HOLD_LIMIT:
            return text + self._line(rest)
        return text + self._unfinished(rest)

    def _unfinished(self, rest: bytes) -> str:
        """What can be shown of a line whose end has not come yet; the rest is held."""
        if self.fallback is not None:
            wide = _NOT_ASCII.search(rest)
            keep = wide.start() if wide else len(rest)
        else:
            try:
                return rest.decode("utf-8")
            except UnicodeDecodeError as exc:
                if exc.end != len(rest) or exc.reason != "unexpected end of data":
                    return rest.decode("utf-8", errors="replace")
                keep = exc.start  # a character cut by the read
        self._held = rest[keep:]
        return rest[:keep].decode("utf-8")

    def _line(self, line: bytes) -> str:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            return line.decode(self.fallback or "utf-8", errors="replace")


_NOT_ASCII = re.compile(rb"[\x80-\xff]")
_LINE_END = re.compile(rb"(?<=[\r\n])")


def clean_text(text: str) -> str:
    """Replace lone surrogates (undecodable bytes smuggled in by the OS) with U+FFFD."""
    try:  # bytes the OS smuggled in as U+DC80..U+DCFF come back as themselves, then get replaced
        return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")


def is_terminal(stream: Any) -> bool:
    """A person is at the other end: a console or tty, or the pipe Git Bash's mintty (Cygwin/MSYS
    ptys) gives a Windows program, where `isatty()` says no and every question would be refused."""
    try:
        return stream is not None and (stream.isatty() or is_pty_pipe_name(_pipe_name(stream) or ""))
    except (ValueError, OSError):
        return False


_PTY_PIPE = re.compile(r"\\(?:msys|cygwin)-[0-9a-f]+-pty\d+-(?:from|to)-master", re.IGNORECASE)


def is_pty_pipe_name(name: str) -> bool:
    """`\\msys-1888ae32e00d56aa-pty0-from-master` and its Cygwin twin name a mintty terminal."""
    return _PTY_PIPE.search(name) is not None


def _pipe_name(stream: Any) -> str | None:
    """The name of the named pipe behind `stream` on Windows (None elsewhere or for other files)."""
    if sys.platform != "win32":
        return None
    import ctypes
    import msvcrt

    size = 4 + 2 * 1024  # FILE_NAME_INFO: a DWORD length, then UTF-16 without a terminator
    buffer = ctypes.create_string_buffer(size)
    handle = msvcrt.get_osfhandle(stream.fileno())  # type: ignore[attr-defined]
    if not _kernel32().GetFileInformationByHandleEx(handle, 2, buffer, size):  # FileNameInfo
        return None
    length = int.from_bytes(buffer.raw[:4], "little")
    return buffer.raw[4:4 + min(length, size - 4)].decode("utf-16-le", errors="replace")
