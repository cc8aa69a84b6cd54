"""A running command seen from the UI and from Ctrl-C/Esc: cancel() never blocks its caller, live
output arrives on a timer and decodes characters split across reads, and jobs left running are
killed at the end of the session even when they ignore SIGTERM."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.protocol import Event, ToolOutput
from core.tools import shell
from core.tools.base import ToolContext
from core.tools.shell import kill_lingering, run_shell
from core.tools.workspace import Workspace
from tests.conftest import make_settings
from tests.support.events import Recorder

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell commands")


class Timed(Recorder):
    """The recorder that also keeps the moment each event came and the thread it came from."""

    def __init__(self) -> None:
        super().__init__()
        self.when: list[tuple[float, str]] = []

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        self.when.append((time.monotonic(), threading.current_thread().name))

    def live(self) -> list[tuple[float, str]]:
        return [(t, e.text) for e, (t, _) in zip(self.all, self.when, strict=True) if isinstance(e, ToolOutput)]


def _ctx(tmp_path: Path, emit: Timed, cancel: Cancel | None = None) -> ToolContext:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return ToolContext(workspace=Workspace(tmp_path / "ws"), settings=make_settings("http://127.0.0.1:1"),
                       emit=emit, approve=lambda w, y: None, cancel=cancel or Cancel(), call_id="c1")


def _pids_running(marker: str) -> list[int]:
    """The host's pids of processes whose command line holds `marker` (a pid a command prints from
    inside its own PID namespace means nothing out here)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_cancel_returns_at_once_and_the_tree_still_dies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that ignores SIGTERM must not block cancel() for the grace period."""
    monkeypatch.setattr(shell, "KILL_GRACE_SECONDS", 4.0)  # long enough that waiting for it shows
    cancel = Cancel()
    ctx = _ctx(tmp_path, Timed(), cancel)
    pid_file = tmp_path / "ws" / "pid"
    result: list = []
    marker = f"cancel-tree-{os.getpid()}"
    worker = threading.Thread(target=lambda: result.append(run_shell(
        {"command": f": {marker}; trap '' TERM; echo $$ > {pid_file}; while :; do sleep 0.1; done"}, ctx)))
    worker.start()
    deadline = time.monotonic() + 10
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    running = _pids_running(marker)
    assert running, "the command runs"
    start = time.monotonic()
    cancel.cancel()
    took = time.monotonic() - start
    assert took < shell.KILL_GRACE_SECONDS / 2, took  # half the grace: generous, yet a blocking cancel fails
    worker.join(timeout=15)
    assert not worker.is_alive() and result[0].output.startswith("interrupted by the user")
    assert all(_gone(pid, within=10) for pid in running)  # SIGKILL followed from the timer


def test_live_output_is_flushed_on_a_timer_and_decodes_split_characters(tmp_path: Path) -> None:
    emit = Timed()
    command = (r"printf 'step 1\n'; sleep 0.3; printf 'step 2 \344\275'; sleep 0.3; printf '\240\345\245\275\n'; "
               r"sleep 0.05; printf 'step 3\n'; sleep 2.5; echo end")
    start = time.monotonic()
    run_shell({"command": command}, _ctx(tmp_path, emit))
    live = emit.live()
    text = "".join(t for _, t in live)
    assert text == "step 1\nstep 2 你好\nstep 3\nend\n" and "\ufffd" not in text
    shown_by = next(t for t, chunk in live if "step 3" in chunk) - start
    ended = next(t for t, chunk in live if "end" in chunk) - start
    assert shown_by < ended / 2, (shown_by, ended)  # not held back until the command printed again


def test_a_background_job_that_ignores_sigterm_is_killed_when_the_session_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "ws" / "job"
    marker = f"sigterm-job-{os.getpid()}"
    command = f"sh -c ': {marker}; trap \"\" TERM; echo $$ > {pid_file}; while :; do sleep 0.1; done' & echo started"
    out = run_shell({"command": command}, _ctx(tmp_path, Timed())).output
    assert "background job is still running" in out
    running = _pids_running(marker)
    assert running, "the job runs on after its command"
    kill_lingering(grace=0.3)
    assert all(_gone(pid, within=10) for pid in running)
