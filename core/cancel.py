"""A cancellation token for one job of the runtime, shared by the agent loop, the HTTP stream and
running tools.

The runtime makes one per job and cancels it from its control thread when an `Interrupt` op is sent
while that job runs (Esc in the TUI, Ctrl-C in the plain front ends); a KeyboardInterrupt that reaches the job's
own thread cancels it there too. Whatever is blocking at that moment has registered a callback
(close the HTTP response, kill the process tree), so the interrupt takes effect at once instead of
at the next poll. `cancel()` runs the callbacks on the caller's thread, which also serves the
approval answers that follow: callbacks must return at once (the process tree gets SIGTERM, and a
timer sends the SIGKILL later), never wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

POLL_SECONDS = 0.1


class Cancel:
    def __init__(self) -> None:
        self._event = threading.Event()
        # Re-entrant: the SIGINT handler calls cancel() on the main thread, possibly while that same
        # thread is inside on_cancel() holding the lock; a plain Lock would deadlock there.
        self._lock = threading.RLock()
        self._callbacks: list[Callable[[], None]] = []
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "interrupted by the user") -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a failing cleanup must not hide the interrupt itself
                pass

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True if cancelled meanwhile.

        Waits in short slices: on Windows a long blocking wait would hold off Ctrl-C until it ends."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._event.wait(min(left, POLL_SECONDS)):
                return True
        return self._event.is_set()

    @contextmanager
    def on_cancel(self, callback: Callable[[], None]) -> Iterator[None]:
        """Run `callback` if cancellation happens while the block runs (or already happened)."""
        with self._lock:
            self._callbacks.append(callback)
            already = self._event.is_set()
        if already:
            callback()
        try:
            yield
        finally:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)
