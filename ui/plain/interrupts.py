"""Ctrl-C in the plain front ends: interrupt the running turn, or exit when idle after a second press."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from core.i18n import _

CTRL_C_EVENT, CTRL_BREAK_EVENT = 0, 1  # Windows' console control events (signal has them only there)


class Cancellable(Protocol):
    """What a press of Ctrl-C stops: the running job (the plain front ends send the runtime an
    `Interrupt` op from `cancel`)."""

    @property
    def cancelled(self) -> bool: ...

    def cancel(self, reason: str) -> None: ...


class InterruptHandler:
    """While a turn runs, SIGINT cancels it (the stream is closed, the process tree killed) and the
    turn ends cleanly. A second press while it is still stopping, or a press when idle, raises
    KeyboardInterrupt as usual.

    On Windows a SIGINT handler runs only once the main thread's blocking call returns, and a socket
    read there is not interrupted: a stalled stream held Ctrl-C off until its next byte or the idle
    timeout. Windows calls console control handlers on a thread of their own, so one installed there
    cancels the turn at once (the stream's socket is closed); other presses go on to the SIGINT
    handler. Ctrl-Break, which Windows would answer by ending the process at once, is a Ctrl-C."""

    def __init__(self) -> None:
        self._current: Cancellable | None = None
        self._prompting = False
        self._console_handler: Any = None  # kept referenced while Windows may call it

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._handle)
            if sys.platform == "win32":
                signal.signal(signal.SIGBREAK, self._handle)  # Ctrl-Break: Ctrl-C, not an abrupt end
                self._install_console_handler()

    def _handle(self, signum: int, frame: Any) -> None:
        if not self._cancel_turn():
            raise KeyboardInterrupt

    def _cancel_turn(self) -> bool:
        """Cancel the running turn; False when this press is a KeyboardInterrupt instead."""
        current = self._current
        if current is None or current.cancelled or self._prompting:
            return False
        current.cancel(_("interrupted by the user (Ctrl-C)"))
        return True

    def _install_console_handler(self) -> None:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined]
        routine = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)  # type: ignore[attr-defined]
        # Handled (True) stops there; False passes the press on to the SIGINT handler.
        self._console_handler = routine(self._on_console_event)
        kernel32.SetConsoleCtrlHandler.argtypes = [routine, wintypes.BOOL]
        kernel32.SetConsoleCtrlHandler(self._console_handler, True)

    def _on_console_event(self, event: int) -> bool:
        """Windows' console control handler: Ctrl-C or Ctrl-Break during a turn cancels it (True:
        handled); anything else goes on to the next handler (Python's, which raises SIGINT/SIGBREAK)."""
        return event in (CTRL_C_EVENT, CTRL_BREAK_EVENT) and self._cancel_turn()

    @contextmanager
    def running(self, cancel: Cancellable) -> Iterator[None]:
        self._current = cancel
        try:
            yield
        finally:
            self._current = None

    @contextmanager
    def prompting(self) -> Iterator[None]:
        """While a question waits for an answer, Ctrl-C interrupts the question itself."""
        self._prompting = True
        try:
            yield
        finally:
            self._prompting = False
