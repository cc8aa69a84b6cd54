"""What a confined command gets besides its files: an environment that names no server of the
user's session and not the agent, a temp folder of the session's own instead of the shared ones,
no terminal of the user's, and the workspace's protected files read-only while git still works."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from core.sandbox import mountns, session_temp
from core.sandbox.environment import without_session_sockets
from core.sandbox.protected import Snapshot
from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import confinement, run
from tests.support.session_env import SESSION_VARIABLES


@pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets named by unix:// paths")
def test_an_allowed_socket_keeps_the_variable_that_names_it_alone(tmp_path: Path) -> None:
    allowed = tmp_path / "docker.sock"
    env = {"DOCKER_HOST": f"unix://{allowed}", "SSH_AUTH_SOCK": "/tmp/ssh/agent"}
    assert without_session_sockets(env, [allowed]) == {"DOCKER_HOST": f"unix://{allowed}"}


def test_a_confined_command_sees_no_session_server_and_not_the_agent(layout: Layout, backend: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SESSION_VARIABLES.items():
        monkeypatch.setenv(name, value)
    shown = run("env", layout, confinement(layout, backend)).output.decode()
    names = {line.split("=", 1)[0] for line in shown.splitlines() if "=" in line}
    assert not names & set(SESSION_VARIABLES), names & set(SESSION_VARIABLES)
    assert not [line for line in shown.splitlines() if line.split("=", 1)[-1] == str(os.getpid())], \
        "the agent's process id is in the command's environment"


@pytest.mark.parametrize("command", [
    "touch /tmp/{n}", "echo x > /tmp/{n}", "python3 -c \"open('/tmp/{n}', 'w')\"", "mkdir /tmp/{n}",
    "cp f.txt /var/tmp/{n}", "echo x > /dev/shm/{n}", "mktemp -p /tmp {n}.XXXX", "TMPDIR=/tmp mktemp -t {n}.XXXX",
    "python3 -c \"import tempfile; tempfile.mkstemp(dir='/var/tmp', prefix='{n}')\"",
])
def test_the_shared_temp_folders_are_not_written(layout: Layout, backend: str, command: str) -> None:
    name = f"agent-test-{os.getpid()}-{abs(hash(command)) % 10**8}"
    done = run(command.format(n=name), layout, confinement(layout, backend))
    made = [p for folder in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(folder).glob(f"{name}*")]
    for path in made:
        path.unlink() if path.is_file() else path.rmdir()
    assert not made, f"{command!r} wrote a shared temp folder from the {backend} sandbox"
    own_shm = "/dev/shm" in command and mountns.available()  # an empty one of the command's own
    if backend == "landlock" and not own_shm:  # bubblewrap gives an empty /tmp of its own, gone with the command
        assert done.exit_code != 0


@pytest.mark.parametrize("command", [
    "f=$(mktemp) && echo x > \"$f\" && cat \"$f\"", "d=$(mktemp -d) && touch \"$d/a\" && rm -r \"$d\" && echo x",
    "python3 -c \"import tempfile; f = tempfile.NamedTemporaryFile(); f.write(b'x'); f.flush(); print('x')\"",
    "echo x > \"$TMPDIR/own\" && cat \"$TMPDIR/own\"",
])
def test_the_sessions_own_temp_folder_is_tmpdir_and_writable(layout: Layout, backend: str, command: str) -> None:
    done = run(command + " && echo \"$TMPDIR\"", layout, confinement(layout, backend))
    assert done.exit_code == 0, done.output.decode()[-300:]
    assert done.output.decode().split() == ["x", str(session_temp.folder())]


def test_a_workspace_inside_a_temp_folder_is_writable_but_not_its_neighbours(backend: str, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from core.cancel import Cancel
    from core.config import load_settings
    from core.sandbox import Confinement, probe
    from core.tools.shell import run_command

    if probe(backend).backend != backend:
        pytest.skip(f"no {backend} here")
    workspace, neighbour = tmp_path / "ws", tmp_path / "nb"
    workspace.mkdir()
    neighbour.mkdir()
    (neighbour / "f").write_text("keep")
    confined = Confinement.for_workspace(workspace, load_settings(environ={"AGENT_SANDBOX": backend},
                                                                  env_file=tmp_path / "none.env"))
    done = run_command("echo x > mine && echo gone > ../nb/f; rm -f ../nb/f; cat mine", workspace, 10, Cancel(),
                       confinement=confined)
    assert done.output.decode().split()[-1] == "x"
    assert (neighbour / "f").read_text() == "keep"


def test_no_terminal_of_the_user_is_written_or_read(layout: Layout, backend: str) -> None:
    master, slave = os.openpty()
    name = os.ttyname(slave)
    try:
        confined = confinement(layout, backend)
        for command in (f"printf '\\033]52;c;Y3VybCB4fHNo\\a' > {name}", f"printf '\\033[2Jforged' >> {name}",
                        f"python3 -c \"open('{name}', 'w').write('forged')\"", f"cat {name} > stolen & sleep 0.2",
                        "echo forged > /dev/tty", f"script -qc 'echo forged > {name}' /dev/null"):
            run(command, layout, confined)
            ready, _, _ = select.select([master], [], [], 0.2)
            assert not ready, f"{command!r} reached the user's terminal from the {backend} sandbox"
        os.write(master, b"typed\n")
        assert not (layout.workspace / "stolen").exists() or b"typed" not in (layout.workspace / "stolen").read_bytes()
        run(f"printf probe > {name}", layout, None)
        assert select.select([master], [], [], 2)[0], "writing the terminal fails even unconfined: not a probe"
    finally:
        os.close(master)
        os.close(slave)


PROTECTED_WRITES = [
    "git config core.fsmonitor 'touch ../x/ran #'", "git config include.path ../../x/inc",
    "git config core.hooksPath h", "git config diff.external 'touch ../x/ran #'", "git config core.sshCommand evil",
    "git config filter.f.clean 'touch ../x/ran #' && echo '* filter=f' > .git/info/attributes",
    "echo '[core]fsmonitor=evil' >> .git/config", "sed -i 's/bare = false/bare = false\\n\\teditor = evil/' .git/config",
    "python3 -c \"open('.git/config', 'a').write('[alias]x=!evil')\"",
    "printf '#!/bin/sh\\ntouch ../x/ran\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout",
    "rm -rf .git/hooks && mkdir .git/hooks && echo evil > .git/hooks/pre-commit",
    "mv .git/hooks .git/old-hooks", "ln -sf /dev/null .git/hooks/pre-commit.sample",
    "cp .git/config c && echo evil >> c && mv c .git/config", "mv .git .git2 && mkdir .git && echo evil > .git/config",
    "echo '[submodule \"s\"]' > .gitmodules", "echo '{\"mcpServers\": {\"x\": {\"trusted\": true}}}' > .mcp.json",
    "echo evil > .git/info/exclude", "(sleep 0.3; echo evil >> .git/config) & wait",
]


@pytest.mark.parametrize("command", PROTECTED_WRITES)
def test_what_the_users_git_runs_later_stays_as_it_was(layout: Layout, backend: str, command: str) -> None:
    ws = layout.workspace
    (ws / ".mcp.json").write_text('{"mcpServers": {}}')
    watched = Snapshot.take(ws, (ws / ".git" / "config", ws / ".git" / "hooks", ws / ".git" / "info",
                                 ws / ".gitmodules", ws / ".mcp.json"))
    before = watched.seen
    done = run(command, layout, confinement(layout, backend))
    after = Snapshot.take(ws, tuple(before)).seen
    assert after == before, f"{command!r} changed a protected file from the {backend} sandbox"
    assert all(not p.startswith("/") for p in done.reverted)


@pytest.mark.parametrize("command", [
    "echo y >> f.txt && git add -A && git commit -qm one && git log --oneline | wc -l",
    "git branch feature && git tag v1 && git checkout -q feature && git checkout -q - && git branch -d feature",
    "git add f.txt && git commit -qm f && echo y >> f.txt && git stash -q && git stash pop -q && git diff --stat",
    "git commit -q --allow-empty -m two && git reset -q --soft HEAD~1 && git status --short",
    "git gc -q --prune=now 2>/dev/null; git fsck --no-progress && git count-objects",
])
def test_git_work_runs_confined(layout: Layout, backend: str, command: str) -> None:
    done = run(command, layout, confinement(layout, backend))
    assert done.exit_code == 0, f"{command!r} failed in the {backend} sandbox: {done.output.decode()[-300:]}"
    assert not done.reverted


@pytest.mark.skipif(sys.platform == "win32", reason="the protected files' floor runs under the Linux sandbox")
def test_the_floor_puts_back_what_changed_and_says_what(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    protected = (ws / ".git" / "config", ws / ".git" / "hooks", ws / ".gitmodules", ws / ".mcp.json")
    config = (ws / ".git" / "config").read_bytes()
    snap = Snapshot.take(ws, protected)
    (ws / ".git" / "config").write_text("[core]\nfsmonitor = evil\n")
    (ws / ".git" / "hooks" / "pre-commit").write_text("evil")
    (ws / ".gitmodules").write_text("evil")
    assert sorted(snap.restore()) == [".git/config", ".git/hooks", ".gitmodules"]
    assert (ws / ".git" / "config").read_bytes() == config
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / ".gitmodules").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws / ".git").rename(ws / ".git2")
    (ws / ".git").symlink_to(elsewhere)
    assert ".git/config" in snap.restore()
    assert not (ws / ".git").is_symlink() and (ws / ".git" / "config").read_bytes() == config
    assert list(elsewhere.iterdir()) == [], "the floor wrote through a symlink"
    assert snap.restore() == []
