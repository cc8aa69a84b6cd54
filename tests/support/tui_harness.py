"""Run the full-screen app in-process: keys through prompt_toolkit's pipe input, the screen read
back as text from the renderer's own cell buffer (what it drew, wide characters included), a real
session against the loopback server. The app runs on the test's main thread; a helper thread
types and looks, then quits.

Why the renderer's buffer rather than a terminal emulator fed with the output bytes (pyte): it
needs no extra dependency, and the byte level is covered for real by the tmux tests."""

from __future__ import annotations

import concurrent.futures
import io
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from agent import parse_args
from core.modes import ASK, AUTO, resolve_mode
from core.protocol import Emit
from core.runtime.runtime import Runtime
from tests.conftest import make_settings
from ui.tui.app import AgentApp, create


class Harness:
    def __init__(self, url: str, tmp_path: Path, rows: int = 24, columns: int = 80, resume: bool = False,
                 **env: str) -> None:
        self.resume = resume
        self.size = Size(rows=rows, columns=columns)
        self.tmp_path = tmp_path
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.settings = make_settings(url, tmp_path, **env)
        self.bytes = io.StringIO()
        self.output = Vt100_Output(self.bytes, lambda: self.size, term="xterm-256color", enable_cpr=False)
        self.app: AgentApp | None = None
        parse_args([])  # the same flags a user would have

    def run(self, steps: Callable[[Harness], None]) -> AgentApp:
        """Run the app until `steps` (on a helper thread) returns; re-raise what it raised."""
        errors: list[BaseException] = []
        with create_pipe_input() as pipe:
            self.pipe = pipe
            self.app = create(self._runtime, self.workspace, data_dir=self.tmp_path / "data", input=pipe,
                              output=self.output)

            def drive() -> None:
                try:
                    self.wait_for("›")
                    steps(self)
                except BaseException as exc:
                    errors.append(exc)
                finally:
                    self.call(lambda: self.app.app.exit(result=0) if self.app.app.is_running else None)

            helper = threading.Thread(target=drive, daemon=True)
            helper.start()
            self.app.run()
            helper.join(10)
            self.app.runtime.close()
        if errors:
            raise errors[0]
        return self.app

    def _runtime(self, emit: Emit) -> Runtime:
        # The screens are the same on every platform: where no sandbox works (Windows), the mode is
        # auto without one (the gate alone asks), as on Linux the sandbox's auto.
        mode = AUTO if resolve_mode(self.settings) == ASK and not self.settings.mode else resolve_mode(self.settings)
        runtime = Runtime(self.settings, self.workspace, emit, mode=mode, resume_latest=self.resume)
        runtime.open()
        return runtime

    # -- from the helper thread ----------------------------------------------------------------
    def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the UI loop and return its result."""
        loop = self.app.pump.loop
        if loop is None or loop.is_closed():
            return None
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        try:
            loop.call_soon_threadsafe(run)
        except RuntimeError:
            return None
        return future.result(10)

    def screen(self) -> str:
        def grab() -> str:
            self.app.app._redraw()  # on the UI loop: draw what the model holds now
            screen = self.app.app.renderer._last_screen
            if screen is None:
                return ""
            rows = []
            for y in range(self.size.rows):
                row = screen.data_buffer[y]
                rows.append("".join(row[x].char for x in range(self.size.columns)).rstrip())
            return "\n".join(rows)

        return self.call(grab) or ""

    def wait_for(self, text: str, timeout: float = 15) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.call(predicate):
                return
            time.sleep(0.05)
        raise AssertionError(f"condition never held; the screen shows:\n{self.screen()}")

    def keys(self, text: str) -> None:
        self.pipe.send_text(text)

    def type(self, text: str) -> None:
        """Type a line and send it (returns once the app took it)."""
        self.pipe.send_text(text)
        self.wait_until(lambda: bool(self.app.input.text) or self.app.dialog.asking_reason)
        self.pipe.send_text("\r")
        self.wait_until(lambda: not self.app.input.text and not self.app.dialog.reason.text)

    def idle(self, timeout: float = 15) -> None:
        self.wait_until(lambda: self.app.pending == 0, timeout)

    def resize(self, rows: int, columns: int) -> None:
        self.size = Size(rows=rows, columns=columns)
        self.call(lambda: self.app.app._on_resize())
