"""Getting text out of a full-screen app: /copy (OSC 52, then the native clipboard, then a file)
and /export (the conversation as Markdown)."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from core.i18n import _
from core.runtime.open import helper_environment

OSC52_LIMIT = 100_000  # terminals cap the sequence; beyond it only a file is reliable


def osc52(text: str) -> str:
    return "\x1b]52;c;" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "\x07"


def _native(text: str) -> bool:
    """The platform clipboard; False when there is none."""
    if sys.platform == "win32":
        return _windows(text)
    for cmd in (["pbcopy"], ["wl-copy"], ["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]):
        if shutil.which(cmd[0]):
            try:
                subprocess.run(cmd, input=text.encode("utf-8"), check=True, timeout=3, env=helper_environment(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                return True
            except (OSError, subprocess.SubprocessError):
                continue
    return False


def _windows(text: str) -> bool:
    try:
        import ctypes

        user32, kernel32 = ctypes.windll.user32, ctypes.windll.kernel32  # type: ignore[attr-defined]
        kernel32.GlobalAlloc.restype = ctypes.c_void_p
        kernel32.GlobalLock.restype = ctypes.c_void_p
        kernel32.GlobalLock.argtypes = [ctypes.c_void_p]
        kernel32.GlobalUnlock.argtypes = [ctypes.c_void_p]
        user32.SetClipboardData.argtypes = [ctypes.c_uint, ctypes.c_void_p]
        data = text.encode("utf-16-le") + b"\x00\x00"
        if not user32.OpenClipboard(None):
            return False
        try:
            user32.EmptyClipboard()
            handle = kernel32.GlobalAlloc(0x0002, len(data))  # GMEM_MOVEABLE
            pointer = kernel32.GlobalLock(handle)
            ctypes.memmove(pointer, data, len(data))
            kernel32.GlobalUnlock(handle)
            return bool(user32.SetClipboardData(13, handle))  # CF_UNICODETEXT
        finally:
            user32.CloseClipboard()
    except (AttributeError, OSError):
        return False


def copy(text: str, write_raw: Callable[[str], None], folder: Path) -> str:
    """Put `text` on the clipboard every way that may work; says where it went."""
    ways = []
    if len(text) <= OSC52_LIMIT:
        write_raw(osc52(text))
        ways.append(_("the terminal clipboard (OSC 52)"))
    if _native(text):
        ways.append(_("the system clipboard"))
    path = folder / f"copy-{time.strftime('%Y%m%d-%H%M%S')}.md"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        ways.append(str(path))
    except OSError:
        pass
    if not ways:
        return _("could not copy: no clipboard and no writable folder")
    return _("copied to {places}").format(places=_(" and ").join(ways))


def export(markdown: str, path: Path) -> str:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown, encoding="utf-8")
    except OSError as exc:
        return _("could not write {path}: {problem}").format(path=path, problem=exc.strerror or exc)
    return _("wrote the conversation to {path}").format(path=path)
