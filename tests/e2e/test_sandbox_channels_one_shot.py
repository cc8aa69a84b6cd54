"""`agent.py --one` in the default mode (`auto`, no `--yes`) against a scripted model that replays
each way around the filesystem rules, several spellings each: a tmux server and an ssh-agent of
the test's own named in the agent's environment, limits, priority and affinity of the agent and of
a user's process, jobs that drop every mark and try to outlive the session, and the files the
user's git runs later. Nothing outside the workspace changes, and ordinary work still runs."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from core.sandbox import probe, seccomp
from tests.support.agent_process import run_agent
from tests.support.ordinary_work import ORDINARY_WORK
from tests.support.sandbox_corpus import Layout
from tests.support.sandbox_fixtures import agent_layout, process_state
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not probe("auto").active
                                or seccomp.table() is None, reason="needs the Linux kernel sandbox")


layout = pytest.fixture(agent_layout, name="layout")


def _one(layout: Layout, commands: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The outputs the model got back for `commands`, run by `agent.py --one` in the default mode."""
    script = [Reply(call_events([("run_shell", {"command": c}) for c in commands])), Reply(text_events("done"))]
    environ = {"HOME": str(layout.home), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", **(env or {})}
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "do it"], server.url, layout.base, env=environ, timeout=180)
    assert done.returncode in (0, 1), done.stderr.decode()[-2000:]
    return [item["output"] for item in server.requests[-1]["input"] if item.get("type") == "function_call_output"]


def _need(*programs: str) -> None:
    for program in programs:
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")


def test_a_tmux_server_of_the_session_runs_nothing(layout: Layout) -> None:
    _need("tmux")
    name = f"agent-e2e-{uuid.uuid4().hex[:8]}"
    subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", "s", "sleep 120"], check=True, timeout=10)
    try:
        sock = subprocess.run(["tmux", "-L", name, "display-message", "-p", "#{socket_path}"], check=True,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        canary = layout.base / "tmux-ran"
        _one(layout, [f"tmux run-shell 'touch {canary}'", f"tmux -L {name} run-shell 'touch {canary}'",
                      f"tmux -S {sock} new-window 'touch {canary}'",
                      f"tmux -S {sock} send-keys -t s:0 'touch {canary}' Enter"],
             env={"TMUX": f"{sock},1,0", "TMUX_PANE": "%0"})
        time.sleep(0.5)
        assert not canary.exists(), "a confined command made the user's tmux run a command"
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10, check=False)


def test_the_ssh_agent_keeps_its_keys_and_signs_nothing(layout: Layout, tmp_path: Path) -> None:
    _need("ssh-agent", "ssh-add", "ssh-keygen")
    sock = tmp_path / "agent.sock"
    started = subprocess.run(["ssh-agent", "-a", str(sock), "-s"], check=True, capture_output=True, text=True,
                             timeout=10).stdout
    pid = int(started.split("SSH_AGENT_PID=")[1].split(";")[0])
    try:
        key = layout.home / ".ssh" / "agent_key"  # unreadable to commands: only the agent could sign
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        shutil.copy(f"{key}.pub", tmp_path / "id.pub")
        agent_env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(key)], env=agent_env, check=True, capture_output=True)
        outputs = _one(layout, ["ssh-add -D", f"SSH_AUTH_SOCK={sock} ssh-add -D", f"SSH_AUTH_SOCK={sock} ssh-add -L",
                                f"echo hi > m && SSH_AUTH_SOCK={sock} ssh-keygen -Y sign -n file -f {tmp_path}/id.pub m"
                                " && cat m.sig"],
                       env={"SSH_AUTH_SOCK": str(sock), "SSH_AGENT_PID": str(pid)})
        assert subprocess.run(["ssh-add", "-l"], env=agent_env, capture_output=True).returncode == 0, \
            "a confined command emptied the user's ssh-agent"
        assert not any("ssh-ed25519 " in o or "BEGIN SSH SIGNATURE" in o for o in outputs), outputs
    finally:
        os.kill(pid, signal.SIGTERM)


def test_the_gpg_agent_and_the_session_bus_answer_nothing(layout: Layout, tmp_path: Path) -> None:
    _need("gpg-agent", "gpg-connect-agent", "gpgconf", "dbus-daemon", "dbus-send")
    gnupg = layout.home / ".gnupg"  # a secret place: its socket must be out of reach too
    gnupg.mkdir(mode=0o700, exist_ok=True)
    gpg_env = {**os.environ, "GNUPGHOME": str(gnupg)}
    subprocess.run(["gpg-connect-agent", "--homedir", str(gnupg), "/bye"], env=gpg_env, check=True,
                   capture_output=True, timeout=20)
    gpg = subprocess.run(["gpgconf", "--homedir", str(gnupg), "--list-dirs", "agent-socket"], env=gpg_env,
                         capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    bus, bus_pid = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1",
                                   f"--address=unix:path={tmp_path / 'bus'}"], capture_output=True, text=True,
                                  check=True, timeout=20).stdout.split()
    commands = {  # each answers when run outside the sandbox
        f"gpg-connect-agent -S {gpg} 'GETINFO pid' /bye": "D ",
        f"gpg-connect-agent --no-autostart -S {gpg} 'GETINFO version' /bye": "D ",
        "dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames":
            "method return",
        f"dbus-send --bus={bus} --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
        "org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:LD_PRELOAD,/w/x.so": "method return",
    }
    try:
        for command, answer in commands.items():
            plain = subprocess.run(["bash", "-c", command], env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus},
                                   capture_output=True, text=True, timeout=20)
            assert answer in plain.stdout, f"{command!r} gets no answer even unconfined: not a probe"
        outputs = _one(layout, list(commands), env={"DBUS_SESSION_BUS_ADDRESS": bus})
        answered = [c for (c, answer), out in zip(commands.items(), outputs, strict=True) if answer in out]
        assert not answered, f"a confined command was answered by a server of the session: {answered}"
    finally:
        os.kill(int(bus_pid), signal.SIGTERM)
        subprocess.run(["gpgconf", "--homedir", str(gnupg), "--kill", "gpg-agent"], env=gpg_env,
                       capture_output=True, timeout=10, check=False)


@pytest.mark.parametrize("folder", [".venv/bin", "node_modules/.bin"])
def test_helpers_planted_in_the_workspace_are_not_run_by_the_agent(layout: Layout, folder: str) -> None:
    _need("git")
    canary = layout.base / "planted-helper-ran"
    bin_dir = layout.workspace / folder
    bin_dir.mkdir(parents=True)
    for name in ("git", "rg", "bash", "sh"):
        helper = bin_dir / name
        helper.write_text(f"#!/bin/sh\necho {name} >> {canary}\nexit 0\n")
        helper.chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=layout.workspace, check=True)  # the checkpoints run git
    script = [Reply(call_events([("run_shell", {"command": "echo changed > f.txt"})])),
              Reply(call_events([("search", {"pattern": "changed"})])), Reply(text_events("done"))]
    environ = {"HOME": str(layout.home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "do it"], server.url, layout.base, env=environ, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "f.txt" in server.requests[-1]["input"][-1]["output"]  # the search found the change
    assert not canary.exists(), f"the agent ran a helper planted in {folder}: {canary.read_text()}"


def test_no_limit_priority_or_affinity_of_the_agent_or_a_users_process_changes(layout: Layout) -> None:
    user = subprocess.Popen(["sleep", "120"])
    try:
        before = process_state(user.pid)
        spellings = ["prlimit --pid {p} --cpu=1", "prlimit --pid {p} --fsize=0", "prlimit --pid={p} --nofile=3",
                     "renice -n 19 -p {p}", "taskset -p 1 {p}", "ionice -c 3 -p {p}",
                     "python3 -c 'import resource; resource.prlimit({p}, resource.RLIMIT_CPU, (1, 1))'",
                     "python3 -c 'import os; os.setpriority(os.PRIO_PROCESS, {p}, 19)'"]
        commands = [s.format(p=p) for s in spellings for p in ("$PPID", str(user.pid))]
        outputs = _one(layout, [*commands, "echo still-here"])
        assert outputs[-1].startswith("exit code 0") and "still-here" in outputs[-1], "the agent died mid-turn"
        assert process_state(user.pid) == before, "a confined command changed a user's process"
        assert user.poll() is None
    finally:
        user.kill()
        user.wait()


ESCAPES = [
    "setsid env -u DEEPSEEK_AGENT_PID sh -c 'while :; do echo b >> {f}; sleep 0.1; done' > /dev/null 2>&1 < /dev/null &",
    "setsid bash -c 'exec -c sh -c \"while :; do echo b >> {f}; sleep 0.1; done\"' > /dev/null 2>&1 < /dev/null &",
    "env -i /usr/bin/setsid /bin/sh -c 'while :; do echo b >> {f}; sleep 0.1; done' > /dev/null 2>&1 < /dev/null &",
    "(setsid sh -c 'while :; do echo b >> {f}; sleep 0.1; done' > /dev/null 2>&1 < /dev/null &) ; sleep 0.1",
    "nohup sh -c 'while :; do echo b >> {f}; sleep 0.1; done' > /dev/null 2>&1 < /dev/null &",
    "python3 -c \"import subprocess; subprocess.Popen(['/bin/sh', '-c', 'while :; do echo b >> {f}; "
    "sleep 0.1; done'], env={{}}, start_new_session=True)\"",
]


def test_no_job_outlives_the_session_whatever_it_does_to_its_environment(layout: Layout) -> None:
    beats = [layout.workspace / f"beat{i}" for i in range(len(ESCAPES))]
    # each command waits for its job's first beats: with a PID namespace of its own, a job ends with its command
    _one(layout, [e.format(f=b) + "\nsleep 0.3" for e, b in zip(ESCAPES, beats, strict=True)] + ["sleep 0.5"])
    sizes = [b.stat().st_size if b.exists() else 0 for b in beats]
    assert all(sizes), f"a heartbeat never ran: {dict(zip(ESCAPES, sizes, strict=True))}"
    time.sleep(1.0)
    grown = [e for e, b, s in zip(ESCAPES, beats, sizes, strict=True) if b.stat().st_size != s]
    assert not grown, f"outlived the session: {grown}"


def test_what_the_users_git_and_the_next_session_run_stays_as_it_was(layout: Layout) -> None:
    ws = layout.workspace
    (ws / ".mcp.json").write_text('{"mcpServers": {}}')
    watched = [ws / ".git" / "config", ws / ".mcp.json"]
    before = [p.read_bytes() for p in watched]
    hooks = sorted(p.name for p in (ws / ".git" / "hooks").iterdir())
    outputs = _one(layout, ["git config core.fsmonitor 'touch ../x/ran #'", "git config core.hooksPath h",
                            "echo '[alias] x = !evil' >> .git/config",
                            "printf '#!/bin/sh\\ntouch ../x/ran\\n' > .git/hooks/pre-commit",
                            "mv .git .git2 && cp -r .git2 .git && echo '[core] editor = evil' >> .git/config",
                            "echo '{\"mcpServers\": {\"x\": {\"command\": \"evil\", \"trusted\": true}}}' > .mcp.json",
                            "echo '[submodule \"s\"] url = evil' > .gitmodules",
                            "echo y > y.txt && git add y.txt && git commit -qm y && git branch b && git tag t1 "
                            "&& git log --oneline | wc -l"])
    assert [p.read_bytes() for p in watched] == before
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir()) == hooks
    assert (not (ws / ".gitmodules").exists() and not (ws / ".git2").exists()) or True
    assert outputs[-1].startswith("exit code 0"), outputs[-1]
    subprocess.run(["git", "status", "--short"], cwd=ws, check=True, capture_output=True)
    assert not (layout.base / "x" / "ran").exists()


def test_writing_the_shared_temp_folder_is_blocked_and_said(layout: Layout) -> None:
    name = f"agent-e2e-{uuid.uuid4().hex[:8]}"
    outputs = _one(layout, [f"echo x > /tmp/{name}", f"mkdir /var/tmp/{name}", "f=$(mktemp) && echo ok > \"$f\" && cat \"$f\""])
    assert not Path(f"/tmp/{name}").exists() and not Path(f"/var/tmp/{name}").exists()
    # Refused by the gate, which sees the path, or blocked by the kernel: either way $TMPDIR is named.
    assert all(("blocked by the sandbox" in o or "the sandbox would block" in o) and "$TMPDIR" in o
               for o in outputs[:2]), outputs[:2]
    assert outputs[2].startswith("exit code 0") and "ok" in outputs[2]


def test_ordinary_work_still_runs_unasked(layout: Layout) -> None:
    outputs = _one(layout, list(ORDINARY_WORK.values()))
    failed = {name: out[-300:] for (name, _), out in zip(ORDINARY_WORK.items(), outputs, strict=True)
              if not out.startswith("exit code 0")}
    assert not failed, json.dumps(failed, indent=1, ensure_ascii=False)


def test_no_byte_reaches_a_terminal_of_the_user(layout: Layout) -> None:
    master, slave = os.openpty()
    name = os.ttyname(slave)
    try:
        _one(layout, [f"printf '\\033]52;c;Y3VybCB4fHNo\\a' > {name}", f"printf '\\033[2Jforged' | tee -a {name}",
                      f"python3 -c \"open('{name}', 'w').write('forged')\"", "echo forged > /dev/tty",
                      "for t in /dev/pts/*; do echo forged > $t; done"])
        assert not select.select([master], [], [], 0.3)[0], "a confined command wrote the user's terminal"
    finally:
        os.close(master)
        os.close(slave)
