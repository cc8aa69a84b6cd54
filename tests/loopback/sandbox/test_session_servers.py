"""The Unix-socket servers of the user's session run what a client asks, outside any sandbox. A
confined command reaches none of them, whether the environment names them or the command names
the socket itself: a tmux server, an ssh-agent, a gpg-agent and a D-Bus session bus of the test's
own, each first seen to obey the same command unconfined (so every spelling is a real probe)."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.sandbox import seccomp
from core.sandbox.environment import without_session_sockets
from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import confinement, run
from tests.support.session_env import KEPT, SESSION_VARIABLES

pytestmark = pytest.mark.skipif(seccomp.table() is None, reason="no seccomp table for this machine")


def _need(*programs: str) -> None:
    for program in programs:
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (apt-get install it to run this test)")


def _refused_then_obeyed(layout: Layout, backend: str, command: str, harmed: Callable[[], bool],
                         undo: Callable[[], object] | None = None, variable: str = "") -> None:
    """`command` harms nothing confined, and harms unconfined (given `variable`, which the agent's
    own scrubbing may hold back from unconfined commands too)."""
    confined = confinement(layout, backend)
    run(command, layout, confined, timeout=15)
    assert not harmed(), f"{command!r} reached a session server from the {backend} sandbox"
    given = f"export {variable}={shlex.quote(os.environ[variable])}; " if variable else ""
    run(given + command, layout, None, timeout=15)
    assert harmed(), f"{command!r} reaches nothing even unconfined: not a probe"
    if undo is not None:
        undo()


@pytest.fixture
def tmux(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    _need("tmux")
    name = f"agent-test-{uuid.uuid4().hex[:8]}"
    subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", "s", "sleep 120"], check=True, timeout=10)
    sock = Path(subprocess.run(["tmux", "-L", name, "display-message", "-p", "#{socket_path}"], check=True,
                               capture_output=True, text=True, timeout=10).stdout.strip())
    pid = subprocess.run(["tmux", "-L", name, "display-message", "-p", "#{pid}"], capture_output=True,
                         text=True, timeout=10).stdout.strip()
    monkeypatch.setenv("TMUX", f"{sock},{pid},0")
    monkeypatch.setenv("TMUX_PANE", "%0")
    yield name, sock
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10, check=False)


@pytest.mark.parametrize("spelling", [
    "tmux run-shell 'touch {canary}'", "tmux -L {name} run-shell 'touch {canary}'",
    "tmux -S {sock} run-shell 'touch {canary}'", "env -u TMUX tmux -L {name} new-window 'touch {canary}'",
    "tmux -S {sock} send-keys -t s:0 'touch {canary}' Enter; tmux -S {sock} respawn-pane -k -t s:0 'touch {canary}'",
])
def test_a_tmux_server_of_the_session_runs_nothing(layout: Layout, backend: str, tmux: tuple[str, Path],
                                                   spelling: str) -> None:
    canary = layout.base / "tmux-ran"
    command = spelling.format(name=tmux[0], sock=tmux[1], canary=canary)

    def harmed() -> bool:
        for _ in range(20):
            if canary.exists():
                return True
            threading.Event().wait(0.05)
        return False

    _refused_then_obeyed(layout, backend, command, harmed, canary.unlink, "TMUX")


@pytest.fixture
def ssh_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    _need("ssh-agent", "ssh-add", "ssh-keygen")
    sock = tmp_path / "agent.sock"
    started = subprocess.run(["ssh-agent", "-a", str(sock), "-s"], check=True, capture_output=True, text=True,
                             timeout=10).stdout
    pid = int(started.split("SSH_AGENT_PID=")[1].split(";")[0])
    key = tmp_path / "id"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=20)
    env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
    subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, capture_output=True, timeout=10)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    monkeypatch.setenv("SSH_AGENT_PID", str(pid))
    yield sock
    os.kill(pid, signal.SIGTERM)


@pytest.mark.parametrize("spelling", ["ssh-add -D", "SSH_AUTH_SOCK={sock} ssh-add -D",
                                      "env SSH_AUTH_SOCK={sock} ssh-add -d {key}.pub"])
def test_the_ssh_agent_keeps_its_keys(layout: Layout, backend: str, ssh_agent: Path, spelling: str) -> None:
    key = ssh_agent.parent / "id"
    env = {**os.environ, "SSH_AUTH_SOCK": str(ssh_agent)}

    def harmed() -> bool:
        return subprocess.run(["ssh-add", "-l"], env=env, capture_output=True, timeout=10).returncode != 0

    def undo() -> None:
        subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, capture_output=True, timeout=10)

    _refused_then_obeyed(layout, backend, spelling.format(sock=ssh_agent, key=key), harmed, undo, "SSH_AUTH_SOCK")


@pytest.mark.parametrize("spelling", ["ssh-add -L > {out}", "SSH_AUTH_SOCK={sock} ssh-add -L > {out}"])
def test_the_ssh_agent_signs_and_lists_nothing(layout: Layout, backend: str, ssh_agent: Path, spelling: str) -> None:
    out = layout.workspace / "listed"
    _refused_then_obeyed(layout, backend, spelling.format(sock=ssh_agent, out=out),
                         lambda: out.exists() and b"ssh-ed25519" in out.read_bytes(), out.unlink, "SSH_AUTH_SOCK")


@pytest.fixture
def gpg_agent(layout: Layout) -> Iterator[Path]:
    _need("gpg-agent", "gpg-connect-agent", "gpgconf")
    home = layout.home / ".gnupg"  # a secret place: its contents are unreadable, its socket must be too
    home.chmod(0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    subprocess.run(["gpg-connect-agent", "--homedir", str(home), "/bye"], env=env, check=True, capture_output=True,
                   timeout=20)
    sock = Path(subprocess.run(["gpgconf", "--homedir", str(home), "--list-dirs", "agent-socket"], env=env,
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip())
    yield sock
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], env=env, capture_output=True,
                   timeout=10, check=False)


@pytest.mark.parametrize("spelling", ["gpg-connect-agent -S {sock} 'GETINFO pid' /bye > {out}",
                                      "gpg-connect-agent --no-autostart -S {sock} 'GETINFO version' /bye > {out}"])
def test_the_gpg_agent_answers_nothing(layout: Layout, backend: str, gpg_agent: Path, spelling: str) -> None:
    out = layout.workspace / "answered"
    _refused_then_obeyed(layout, backend, spelling.format(sock=gpg_agent, out=out),
                         lambda: out.exists() and out.read_text().startswith("D "), out.unlink)


@pytest.fixture
def session_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    _need("dbus-daemon", "dbus-send")
    started = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1",
                              f"--address=unix:path={tmp_path / 'bus'}"], capture_output=True, text=True,
                             check=True, timeout=20).stdout.split()
    address, pid = started[0], int(started[1])
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    yield address
    os.kill(pid, signal.SIGTERM)


@pytest.mark.parametrize("spelling", [
    "dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames > {out}",
    "dbus-send --bus={address} --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames > {out}",
    "dbus-send --bus={address} --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:LD_PRELOAD,/w/x.so > {out}",
])
def test_the_session_bus_answers_nothing(layout: Layout, backend: str, session_bus: str, spelling: str) -> None:
    out = layout.workspace / "answered"
    _refused_then_obeyed(layout, backend, spelling.format(address=session_bus, out=out),
                         lambda: out.exists() and b"method return" in out.read_bytes(), out.unlink,
                         "DBUS_SESSION_BUS_ADDRESS")


@pytest.mark.parametrize("command", [
    "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{sock}\")'",
    "python3 -c 'import socket; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(\"{sock}\")'",
    "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{sock}\") or die \"no: $!\"'",
    "curl -s --max-time 3 --unix-socket {sock} http://x/",
])
def test_no_unix_socket_outside_can_be_reached(layout: Layout, backend: str, command: str, tmp_path: Path) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET if "SEQPACKET" in command else socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    reached = threading.Event()
    threading.Thread(target=lambda: (server.accept(), reached.set()), daemon=True).start()
    command = command.format(sock=path)
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"no {command.split()[0]} here")
    try:
        run(command, layout, confinement(layout, backend), timeout=10)
        assert not reached.wait(0.5), f"{command!r} reached a Unix socket outside the {backend} sandbox"
        run(command, layout, None, timeout=10)
        assert reached.wait(3), f"{command!r} reaches no socket even unconfined: not a probe"
    finally:
        server.close()


def test_an_allowed_socket_lifts_the_unix_socket_rule_and_keeps_its_variable(
        layout: Layout, backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = tmp_path / "docker.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(allowed))
    server.listen(1)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{allowed}")
    confined = confinement(layout, backend, AGENT_SANDBOX_SOCKETS=str(allowed))
    try:
        done = run("python3 -c 'import os, socket; socket.socket(socket.AF_UNIX).connect(os.environ[\"DOCKER_HOST\"]"
                   "[7:]); print(\"reached\")'", layout, confined)
    finally:
        server.close()
    assert done.exit_code == 0 and b"reached" in done.output, done.output.decode()[-300:]


@pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets")
def test_the_environment_names_no_session_server_by_name_or_value(tmp_path: Path) -> None:
    sock = tmp_path / "any.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    try:
        env = without_session_sockets({**SESSION_VARIABLES, **KEPT, "ODD_NAME": str(sock),
                                       "A_LIST": f"/usr/lib:{sock}"})
    finally:
        server.close()
    assert env == KEPT
