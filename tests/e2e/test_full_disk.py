"""A full disk gives clear sentences, never a traceback or a stalled command: `--one` on a real small
file system (tmpfs, mounted for the test) that fills up, by what cannot be written: the output
archive, the journal, the checkpoints (git objects and the session's own store), the session folder
itself, and files and inodes alike."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY
from tests.support.agent_process import AGENT
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0,
                                reason="mounts a small tmpfs: Linux, as root")

PRINT_A_LOT = f'"{sys.executable}" -c "import sys; sys.stdout.write(\'line of output\\n\' * 200000); print(\'end\')"'


@contextmanager
def small_disk(folder: Path, size: str, inodes: int = 10_000) -> Iterator[Path]:
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},nr_inodes={inodes},mode=0755", "tmpfs",
                              str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(disk: Path) -> None:
    """No byte and no inode left."""
    for n in range(100_000):
        try:
            (disk / f"inode-{n}").touch()
        except OSError:
            break
    subprocess.run(["dd", "if=/dev/zero", f"of={disk}/filler", "bs=4k"], capture_output=True, check=False)


def run(disk: Path, replies: list[Reply], when_asked: Callable[[int], None] = lambda n: None,
        git: bool = True) -> tuple[subprocess.CompletedProcess[bytes], list[dict], float]:
    workspace = disk / "ws"
    workspace.mkdir(exist_ok=True)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    if not (workspace / "a.txt").exists():
        (workspace / "a.txt").write_text("a\n")
    script = list(replies)

    def responder(body: dict) -> Reply:
        when_asked(len(body["input"]))
        return script.pop(0) if len(script) > 1 else script[0]

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_"))}
    with ScriptedServer(responder=responder) as server:
        environ.update({"DEEPSEEK_BASE_URL": server.url, "DEEPSEEK_API_KEY": TEST_KEY, "NO_COLOR": "1",
                        "AGENT_SESSIONS_DIR": str(disk / "sessions")})
        start = time.monotonic()
        done = subprocess.run([sys.executable, str(AGENT), "--cwd", str(workspace), "--one", "go"], env=environ,
                              capture_output=True, timeout=90, check=False)
        return done, server.requests, time.monotonic() - start


def _no_traceback(done: subprocess.CompletedProcess[bytes]) -> str:
    err = done.stderr.decode()
    assert "Traceback" not in err and "Exception in thread" not in err, err
    return err


def test_a_command_printing_onto_a_disk_that_fills_up_runs_to_its_end(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "256k") as disk:
        done, requests, took = run(disk, [Reply(call_events([("run_shell", {"command": PRINT_A_LOT})])),
                                          Reply(text_events("finished"))])
    err = _no_traceback(done)
    assert done.returncode == 0 and done.stdout.decode().strip() == "finished" and took < 30
    output = requests[1]["input"][-1]["output"]
    assert output.startswith("exit code 0") and "end" in output  # the command ran to its end, not to a timeout
    assert "could not be written (No space left on device)" in output
    assert err.count("output archive: out-1 could not be written (No space left on device)") == 1


@pytest.mark.parametrize("git", [True, False], ids=["git work tree", "plain folder"])
def test_a_disk_full_from_the_first_command_still_runs_commands(tmp_path: Path, git: bool) -> None:
    """No inode and no byte left once the session has started: the checkpoints' folder, git's
    objects, the archive and the journal all fail; each says so once, and the command runs."""
    with small_disk(tmp_path / "disk", "512k", inodes=300) as disk:
        done, requests, took = run(disk, [Reply(call_events([("run_shell", {"command": "echo hi; echo x > a.txt"})])),
                                          Reply(call_events([("run_shell", {"command": "echo again"})])),
                                          Reply(text_events("finished"))],
                                   when_asked=lambda items: fill(disk) if items == 1 else None, git=git)
    err = _no_traceback(done)
    assert done.returncode == 0 and done.stdout.decode().strip() == "finished" and took < 30
    assert requests[1]["input"][-1]["output"].startswith("exit code 0\nhi")
    assert requests[2]["input"][-1]["output"].startswith("exit code 0\nagain")
    assert "No space left on device" in err
    assert err.count("cannot write the session journal") <= 1  # said once, when a record no longer fits
    if git:
        assert "no snapshot before this command" in err


def test_a_full_disk_before_the_session_starts_is_one_sentence(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "256k", inodes=50) as disk:
        (disk / "ws").mkdir()
        (disk / "ws" / "a.txt").write_text("a\n")
        fill(disk)
        done, requests, _ = run(disk, [Reply(text_events("never"))], git=False)
    err = _no_traceback(done).strip()
    assert done.returncode == 2 and not requests
    assert err.startswith("error: Cannot start the session:") and "No space left on device" in err
    assert len(err.splitlines()) == 1
