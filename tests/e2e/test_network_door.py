"""`agent.py network-door FD PORT COMMAND…`: what the one-file exe runs inside bubblewrap before a
command on the proxied network (core/network/door.py), with ctypes alone. It listens on 127.0.0.1,
hands that listener over the descriptor it was given, and becomes the command: same process,
nothing of the agent left."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agent_process import AGENT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="descriptors pass over Unix sockets (SCM_RIGHTS)")


def _door(*args: str, fd: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(AGENT), "network-door", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, pass_fds=(fd,) if fd is not None else ())


def test_the_door_is_handed_over_and_the_process_becomes_the_command() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        child = _door(str(theirs.fileno()), "0", sys.executable, "-c", "import os; print(os.getpid())",
                      fd=theirs.fileno())
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err.decode(errors="replace")
        assert out.decode().strip() == str(child.pid)  # exec'd: the command is the door's process
        ours.settimeout(10)
        _, fds, _, _ = socket.recv_fds(ours, 1, 1)
    with socket.socket(fileno=fds[0]) as door:
        host, port = door.getsockname()
        assert host == "127.0.0.1"
        with socket.create_connection((host, port), timeout=5):
            pass  # it listens: the agent's proxy serves what arrives here


@pytest.mark.parametrize("args", [[], ["3"], ["3", "80"], ["x", "80", "true"], ["3", "port", "true"], ["3", "8²", "true"],
                                  ["-3", "80", "true"], ["3", "65536", "true"]])
def test_bad_arguments_get_the_usage_and_exit_2(args: list[str]) -> None:
    out, err = _door(*args).communicate(timeout=60)
    assert b"usage: deepseek-agent network-door FD PORT COMMAND" in err and out == b""


def test_the_command_gets_sigpipe_back() -> None:
    """Python ignores SIGPIPE; a command exec'd from it would inherit that, and a writer into a
    closed pipe would print errors (or loop) instead of ending."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        child = _door(str(theirs.fileno()), "0", "sh", "-c", "yes | head -n 2; grep SigIgn /proc/self/status",
                      fd=theirs.fileno())
        out, err = child.communicate(timeout=60)
    ignored = int(out.decode().split()[-1], 16)
    assert out.decode().startswith("y\ny\n") and b"Broken pipe" not in err, (out, err)
    assert not ignored & (1 << 12 | 1 << 24)  # SIGPIPE 13, SIGXFSZ 25


def test_a_command_that_cannot_start_is_named_and_exits_127() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        child = _door(str(theirs.fileno()), "0", "no-such-program-x7", fd=theirs.fileno())
        _, err = child.communicate(timeout=60)
    assert child.returncode == 127
    assert err.decode().strip() == "network-door: no-such-program-x7: No such file or directory"


def test_a_command_that_cannot_be_run_exits_126(tmp_path: Path) -> None:
    script = tmp_path / "not-executable.sh"
    script.write_text("echo hi\n", encoding="utf-8")
    ours, theirs = socket.socketpair()
    with ours, theirs:
        child = _door(str(theirs.fileno()), "0", str(script), fd=theirs.fileno())
        _, err = child.communicate(timeout=60)
    assert child.returncode == 126 and "Permission denied" in err.decode()
