"""Each cause of the red-team round, in several spellings, run for real: unconfined it harms the
canary outside the workspace (so the command is a real threat), confined it leaves it as it was."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.programs import require_programs
from tests.support.sandbox_corpus import ENV_SECRET, ORDINARY, SECRET_READS, Layout, corpus, leaks
from tests.support.sandbox_fixtures import confinement, run

METADATA = ("chmod ", "chown ")


@pytest.mark.parametrize(("cause", "command"), corpus(), ids=[f"{c}: {m[:40]}" for c, m in corpus()])
def test_a_destructive_command_harms_nothing_outside_when_confined(layout: Layout, backend: str, cause: str,
                                                                    command: str, request: pytest.FixtureRequest) -> None:
    require_programs(command)
    if backend == "landlock" and command.startswith(METADATA):
        request.applymarker(pytest.mark.xfail(strict=True, reason="Landlock does not cover a file's mode and owner"))
    confined = confinement(layout, backend)
    before = layout.canaries()
    run(command, layout, confined)
    assert layout.canaries() == before, f"{cause}: {command!r} changed a canary inside the {backend} sandbox"
    layout.reset_workspace()
    run(command, layout, None)
    assert layout.canaries() != before, f"{cause}: {command!r} harms nothing even unconfined: not a probe"


@pytest.fixture
def agent_like() -> subprocess.Popen:
    """An unconfined process holding a secret in its environment, as the agent does."""
    proc = subprocess.Popen(["sleep", "60"], env={"PATH": "/usr/bin:/bin", "AWS_SECRET_ACCESS_KEY": ENV_SECRET})
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("command", SECRET_READS)
def test_reading_secrets_or_the_agents_environment_yields_nothing(layout: Layout, backend: str, command: str,
                                                                  agent_like: subprocess.Popen) -> None:
    require_programs(command)
    command = command.replace("$PPID", str(agent_like.pid))
    confined = confinement(layout, backend)
    shown = run(command, layout, confined).output
    assert not leaks(shown), f"{command!r} printed a secret inside the {backend} sandbox: {shown[:300]!r}"
    plain = run(command, layout, None).output
    assert leaks(plain), f"{command!r} reads no secret even unconfined: not a probe ({plain[:200]!r})"


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_work_in_the_workspace_runs_confined(layout: Layout, backend: str, command: str) -> None:
    require_programs(command)
    done = run(command, layout, confinement(layout, backend))
    assert done.exit_code == 0, f"{command!r} failed in the {backend} sandbox: {done.output.decode()[-400:]}"


def test_new_files_in_the_workspace_can_be_read_back_in_the_same_command(layout: Layout, backend: str) -> None:
    done = run("mkdir -p a/b && echo one > a/b/c && cat a/b/c && echo two > top && cat top", layout,
               confinement(layout, backend))
    assert done.exit_code == 0 and done.output.decode().split() == ["one", "two"]


def test_signals_to_outside_processes_are_refused(layout: Layout, backend: str,
                                                  agent_like: subprocess.Popen) -> None:
    confined = confinement(layout, backend)
    for command in (f"kill -0 {agent_like.pid}", f"kill -9 {agent_like.pid}", f"kill -STOP {agent_like.pid}",
                    f"python3 -c 'import os, signal; os.kill({agent_like.pid}, signal.SIGTERM)'"):
        assert run(command, layout, confined).exit_code != 0, command
        assert agent_like.poll() is None, f"{command!r} reached a process outside the {backend} sandbox"
    assert run(f"kill -0 {agent_like.pid}", layout, None).exit_code == 0
