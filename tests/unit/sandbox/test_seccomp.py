"""The seccomp filter, run for real on each backend: what a command could do to a process or file
outside its sandbox (limits, priority, affinity, tracing, inode flags, xattrs, terminal input) is
refused in several spellings, and the same calls on the command itself still work (Unix sockets:
tests/loopback/sandbox/test_session_servers.py).
Each refused spelling is first seen to work unconfined, so it is a real probe."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.sandbox import seccomp
from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import confinement, process_state, run

pytestmark = pytest.mark.skipif(seccomp.table() is None, reason="no seccomp table for this machine")


@pytest.fixture
def outsider() -> Iterator[subprocess.Popen]:
    """A process outside the sandbox, as the agent or one of the user's is."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


AIMED = [
    "prlimit --pid {pid} --nofile=64", "prlimit --pid {pid} --fsize=0", "prlimit --pid={pid} --cpu=1",
    "python3 -c 'import resource; resource.prlimit({pid}, resource.RLIMIT_NOFILE, (64, 64))'",
    "renice -n 7 -p {pid}", "python3 -c 'import os; os.setpriority(os.PRIO_PROCESS, {pid}, 9)'",
    "taskset -p 1 {pid}", "python3 -c 'import os; os.sched_setaffinity({pid}, {{0}})'",
    "chrt -i -p 0 {pid}", "ionice -c 3 -p {pid}",
]


@pytest.mark.parametrize("command", AIMED)
def test_limits_priority_and_affinity_of_an_outside_process_stay(layout: Layout, backend: str, command: str,
                                                                  outsider: subprocess.Popen) -> None:
    if os.cpu_count() == 1 and ("taskset" in command or "affinity" in command):
        pytest.skip("one CPU: an affinity cannot change")
    command = command.format(pid=outsider.pid)
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"no {command.split()[0]} here")
    confined = confinement(layout, backend)
    before = process_state(outsider.pid)
    done = run(command, layout, confined)
    assert process_state(outsider.pid) == before, f"{command!r} changed a process outside the {backend} sandbox"
    assert done.exit_code != 0
    run(command, layout, None)
    if "ionice" not in command and "chrt" not in command:  # their effect is not in the state read above
        assert process_state(outsider.pid) != before, f"{command!r} changes nothing even unconfined: not a probe"


@pytest.mark.parametrize("command", [
    "ulimit -n 128 && ulimit -n", "python3 -c 'import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))'",
    "prlimit --nofile=100 true", "nice -n 5 true", "taskset -c 0 true", "ionice -c 3 true",
    "chrt -i 0 true", "python3 -c 'import os; os.sched_setaffinity(0, os.sched_getaffinity(0))'",
    "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); assert b.recv(1) == b\"x\"'",
    "python3 -c 'import socket; socket.socket(socket.AF_INET6 if 0 else socket.AF_INET).close()'",
])
def test_the_same_calls_on_the_command_itself_still_work(layout: Layout, backend: str, command: str) -> None:
    done = run(command, layout, confinement(layout, backend))
    assert done.exit_code == 0, f"{command!r} failed in the {backend} sandbox: {done.output.decode()[-300:]}"


@pytest.mark.parametrize("command", [
    "setfattr -n user.mark -v 1 {f}", "python3 -c 'import os; os.setxattr(\"{f}\", \"user.mark\", b\"1\")'",
    "chattr +i {f}", "chattr +a {f}",
])
def test_xattrs_and_inode_flags_are_refused(layout: Layout, backend: str, command: str) -> None:
    outside = layout.base / "x" / "f.txt"
    command = command.format(f=outside)
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"no {command.split()[0]} here")
    done = run(command, layout, confinement(layout, backend))
    assert done.exit_code != 0, f"{command!r} ran in the {backend} sandbox"
    unconfined = run(command, layout, None)
    subprocess.run(["chattr", "-i", "-a", str(outside)], capture_output=True, check=False)
    if unconfined.exit_code != 0:
        pytest.skip(f"{command!r} fails here even unconfined ({unconfined.output.decode()[-120:]!r})")


@pytest.mark.parametrize("command", [
    "cp -a a.txt b.txt", "cp --preserve=all a.txt b.txt", "cp -p a.txt b.txt", "sed -i s/1/2/ a.txt",
    "mkdir d && cp -a a.txt d/ && mv d e", "install -p -m 644 a.txt b.txt",
    "tar --xattrs --acls -cf t.tar a.txt && mkdir x && tar --xattrs --acls -xf t.tar -C x",
    "mkdir d0 && python3 -c 'import shutil; shutil.copy2(\"a.txt\", \"d0/b.txt\"); shutil.copytree(\"d0\", \"d1\")'",
])
def test_copies_that_keep_permissions_work_where_xattrs_are_refused(layout: Layout, backend: str,
                                                                    command: str) -> None:
    """Refused xattr calls read as a filesystem without extended attributes: tools that copy a
    file's permissions and ACLs go on instead of failing ("preserving permissions … not permitted")."""
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"no {command.split()[0]} here")
    (layout.workspace / "a.txt").write_text("n = 1\n")
    if _xattrs_work(layout.workspace):  # an attribute to copy, where the filesystem keeps them
        os.setxattr(layout.workspace / "a.txt", "user.origin", b"test")
    done = run(command, layout, confinement(layout, backend))
    assert done.exit_code == 0, f"{command!r} failed in the {backend} sandbox: {done.output.decode()[-300:]}"


def _xattrs_work(folder: Path) -> bool:
    """Whether this filesystem takes user xattrs (tmpfs in some kernels does not)."""
    try:
        os.setxattr(folder, "user.probe", b"1")
        os.removexattr(folder, "user.probe")
        return True
    except OSError:
        return False


@pytest.mark.parametrize("command", [
    "python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b\"x\")'",
    "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
    "assert l.ioctl(0, 0x5412, ctypes.c_char_p(b\"x\")) == 0, ctypes.get_errno()'",
])
def test_typing_into_a_terminal_is_refused(layout: Layout, backend: str, command: str) -> None:
    done = run(command, layout, confinement(layout, backend))
    assert done.exit_code != 0 and (b"Operation not permitted" in done.output or b"AssertionError: 1" in done.output), \
        done.output.decode()[-300:]


@pytest.mark.parametrize("command", [
    "strace -o /dev/null -p {pid}",
    "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); assert l.ptrace(16, {pid}, 0, 0) == 0'",
    "gdb -batch -p {pid}",
])
def test_tracing_is_refused(layout: Layout, backend: str, command: str, outsider: subprocess.Popen) -> None:
    command = command.format(pid=outsider.pid)
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"no {command.split()[0]} here")
    run(command, layout, confinement(layout, backend), timeout=10)
    state = Path(f"/proc/{outsider.pid}/status").read_text()
    assert "TracerPid:\t0" in state, f"{command!r} attached to a process outside the {backend} sandbox"


@pytest.mark.parametrize("machine", sorted(seccomp.TABLES))
def test_every_architecture_gets_a_program_the_kernel_can_take(machine: str) -> None:
    for unix in (False, True):
        code = seccomp.program(seccomp.TABLES[machine], unix_sockets=unix)
        assert len(code) % 8 == 0 and 0 < len(code) // 8 < 4096


@pytest.mark.skipif(sys.platform == "win32", reason="seccomp is Linux's")
def test_a_machine_without_a_table_gets_no_filter_and_the_probe_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.sandbox import probe

    monkeypatch.setattr(seccomp.platform, "machine", lambda: "riscv64")
    assert seccomp.table() is None and seccomp.installer(ctypes.CDLL(None)) is None
    probe.cache_clear()
    try:
        said = probe("auto").describe()
    finally:
        probe.cache_clear()
    if probe("auto").active:
        assert "NOT covered (no seccomp filter for this CPU)" in said, said
