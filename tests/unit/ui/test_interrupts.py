"""Ctrl-C and Ctrl-Break in the plain front ends (ui/plain/interrupts.py), at the handler: the end-to-end
presses are in tests/e2e/test_sessions.py (SIGINT on POSIX, a console event under wine; wine cannot
raise Ctrl-Break, so that press is checked here)."""

from __future__ import annotations

import signal
import sys

import pytest

from core.cancel import Cancel
from ui.plain.interrupts import CTRL_BREAK_EVENT, CTRL_C_EVENT, InterruptHandler


def test_a_press_during_a_turn_cancels_it_and_a_second_one_does_not() -> None:
    handler, cancel = InterruptHandler(), Cancel()
    with handler.running(cancel):
        handler._handle(signal.SIGINT, None)
        assert cancel.cancelled
        with pytest.raises(KeyboardInterrupt):
            handler._handle(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):
        handler._handle(signal.SIGINT, None)  # idle


@pytest.mark.parametrize("event", [CTRL_C_EVENT, CTRL_BREAK_EVENT], ids=["ctrl-c", "ctrl-break"])
def test_windows_console_events_cancel_the_turn_or_pass_on(event: int) -> None:
    handler, cancel = InterruptHandler(), Cancel()
    assert not handler._on_console_event(event), "idle: passed on to Python's handler"
    with handler.running(cancel):
        assert handler._on_console_event(event) and cancel.cancelled
        assert not handler._on_console_event(event), "a second press goes on"
    with handler.running(Cancel()), handler.prompting():
        assert not handler._on_console_event(event), "at a question the press interrupts the question"
    assert not handler._on_console_event(2)  # CTRL_CLOSE_EVENT: Windows' own handling


@pytest.mark.skipif(sys.platform != "win32", reason="SIGBREAK is Windows' (runs under wine: tests/windows.py)")
def test_ctrl_break_reaches_the_same_handler_as_ctrl_c() -> None:
    handler = InterruptHandler()
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGBREAK)}
    try:
        handler.install()
        assert signal.getsignal(signal.SIGBREAK) == handler._handle == signal.getsignal(signal.SIGINT)
    finally:
        for sig, previous in saved.items():
            signal.signal(sig, previous)
        if handler._console_handler is not None:  # never leave a callback that is about to be freed
            import ctypes

            ctypes.WinDLL("kernel32").SetConsoleCtrlHandler(handler._console_handler, False)
