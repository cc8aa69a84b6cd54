"""The full-screen front end (prompt_toolkit + Rich); its parts live in `ui.tui/`.

`agent.py` calls `unavailable_reason()` and, when it is None, `run()`. Importing this module also
checks that rich and prompt_toolkit are there; when they are not, `agent.py` falls back to plain
mode rather than failing. A crash restores the terminal, writes the traceback to the session
folder and says where; the conversation is printed to the normal screen on the way out.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import prompt_toolkit  # noqa: F401 - availability check
import rich  # noqa: F401 - availability check

from core.config import saved_privately
from core.i18n import _

CJK_CODE_PAGES = {932, 936, 949, 950}


def unavailable_reason() -> str | None:
    """Why the TUI cannot run here, or None when it can."""
    if sys.platform == "win32" and not _windows_console():
        return _("this is not a Windows console (Git Bash's mintty?); run it with `winpty deepseek-agent`, "
                 "or from Windows Terminal, cmd or PowerShell")
    if sys.platform == "win32" and _under_wine():
        return _("wine's console garbles full-screen drawing (colours, the last column)")
    if os.environ.get("TERM") == "dumb":
        return "TERM=dumb"
    return None


def _windows_console() -> bool:
    """True when stdin and stdout are real console handles (prompt_toolkit needs them)."""
    try:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        kernel32.GetStdHandle.restype = wintypes.HANDLE
        mode = wintypes.DWORD()
        return all(kernel32.GetConsoleMode(kernel32.GetStdHandle(n), ctypes.byref(mode)) for n in (-10, -11))
    except (AttributeError, OSError):
        return False


def _under_wine() -> bool:
    """Wine's ntdll exports wine_get_version; Windows' does not."""
    try:
        import ctypes

        return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return False


def _ascii_console() -> bool:
    """A conhost on a CJK code page draws box glyphs double-width: use ASCII chrome there."""
    if os.environ.get("AGENT_ASCII"):
        return True
    if sys.platform != "win32":
        return False
    try:
        import ctypes

        return ctypes.windll.kernel32.GetConsoleOutputCP() in CJK_CODE_PAGES  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return False


def ask_key(env_file: Path) -> str:
    """First run: the key in a masked field (Enter saves it, Esc or Cancel declines); empty when
    the user declined."""
    from prompt_toolkit.application import Application, get_app
    from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
    from prompt_toolkit.key_binding.bindings.focus import focus_next, focus_previous
    from prompt_toolkit.key_binding.defaults import load_key_bindings
    from prompt_toolkit.layout import HSplit, Layout
    from prompt_toolkit.widgets import Button, Dialog, Label, TextArea

    field = TextArea(multiline=False, password=True, prompt=_("API key: "),
                     accept_handler=lambda buffer: get_app().exit(result=buffer.text) or True)
    dialog = Dialog(title=_("deepseek-agent: API key"), with_background=True, body=HSplit([
        Label(_("No DeepSeek API key yet. Paste it and press Enter to save it in\n{file}\n").format(file=env_file)
              + (_("(readable only by you), ") if saved_privately() else "")
              + _("or Esc to quit and set DEEPSEEK_API_KEY yourself.") + "\n"),
        field]), buttons=[Button(_("Save"), handler=lambda: get_app().exit(result=field.text)),
                          Button(_("Cancel"), handler=lambda: get_app().exit(result=""))])
    keys = KeyBindings()
    keys.add("tab")(focus_next)
    keys.add("s-tab")(focus_previous)
    keys.add("escape", eager=True)(lambda event: event.app.exit(result=""))
    keys.add("c-c")(lambda event: event.app.exit(result=""))
    app: Application[str] = Application(layout=Layout(dialog, focused_element=field), full_screen=True,
                                        key_bindings=merge_key_bindings([load_key_bindings(), keys]))
    try:
        return (app.run() or "").strip()
    except (EOFError, KeyboardInterrupt):
        return ""


def run(make_runtime: Callable[[Any], Any], workspace: Path, data_dir: Path, *, mouse: bool = False) -> int:
    """Open the runtime (`make_runtime(emit)`) on the TUI's emit and run the full-screen app until
    the user quits."""
    from ui.tui.app import create, exit_dump
    from ui.tui.blocks import use_ascii

    use_ascii(_ascii_console())
    app = create(make_runtime, workspace, data_dir=data_dir, mouse=mouse)
    code, crash = 0, ""
    try:
        code = app.run()
    except Exception:  # the terminal is restored by now: log it, say where, keep the transcript
        crash = app.crash or traceback.format_exc()
    finally:
        app.runtime.close()
    sys.stdout.write("\x1b[?1007h")  # give the terminal its alternate-scroll mode back
    sys.stdout.flush()
    _print_transcript(app, exit_dump)
    if not crash:
        return code
    path = app.log_crash(crash)
    where = _("; the details are in {path}").format(path=path) if path else ""
    print(_("deepseek-agent: the full-screen view crashed{where}. Your conversation is saved "
            "(resume it with --resume {id}).").format(where=where, id=app.view.session_id), file=sys.stderr)
    return 1  # agent.run() keeps a double-clicked exe's window open until Enter


def _print_transcript(app: Any, exit_dump: Callable[..., None]) -> None:
    from rich.console import Console

    console = Console(highlight=False, legacy_windows=False)
    try:
        exit_dump(app.transcript.blocks, console.print)
    except Exception:  # the dump is a courtesy: never fail the exit for it
        pass
