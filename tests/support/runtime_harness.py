"""A runtime driven with no front end: the event inbox the tests read, and a runtime started on a
loopback server in a test's folder."""

from __future__ import annotations

import queue
import time
from pathlib import Path

from core import protocol as ev
from core.modes import ASK
from core.runtime.runtime import Runtime
from tests.conftest import make_settings
from tests.support.events import Recorder


class Inbox(Recorder):
    """The event callback: every event, in order, and a way to wait for the next of a kind."""

    def __init__(self) -> None:
        super().__init__()
        self._queue: queue.Queue[ev.Event] = queue.Queue()

    def __call__(self, event: ev.Event) -> None:
        super().__call__(event)
        self._queue.put(event)

    def next(self, kind: type, timeout: float = 15) -> ev.Event:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                event = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if isinstance(event, kind):
                return event
        raise AssertionError(f"no {kind.__name__} within {timeout} s; got {self.kinds()}")


def runtime_for(url: str, tmp_path: Path, inbox: Inbox, **kw) -> Runtime:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    runtime = Runtime(make_settings(url, tmp_path), workspace, inbox, mode=ASK, **kw)
    runtime.open()
    runtime.start()
    return runtime
