"""Ctrl-C in the plain front ends: interrupt the running turn, or exit when idle after a second press."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from core.cancel import Cancel


class InterruptHandler:
    """While a turn runs, SIGINT cancels it (the stream is closed, the process tree killed) and the
    turn ends cleanly. A second press while it is still stopping, or a press when idle, raises
    KeyboardInterrupt as usual."""

    def __init__(self) -> None:
        self._current: Cancel | None = None
        self._prompting = False

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        current = self._current
        if current is None or current.cancelled or self._prompting:
            raise KeyboardInterrupt
        current.cancel("interrupted by the user (Ctrl-C)")

    @contextmanager
    def running(self, cancel: Cancel) -> Iterator[None]:
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
