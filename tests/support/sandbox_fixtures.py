"""Fixtures for the sandbox tests: a layout outside the temp folders (HOME pointed at its fake home),
each backend in turn, and commands run in them. A test folder's conftest.py imports them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.config import load_settings
from core.sandbox import Confinement, probe
from core.tools.shell import ShellRun, run_command
from tests.support.sandbox_corpus import Layout

BACKENDS = ("landlock", "bwrap")


def confinement(layout: Layout, backend: str, **env: str) -> Confinement:
    if probe(backend).backend != backend:
        pytest.skip(f"no {backend} here: {probe(backend).describe()}")
    settings = load_settings(environ={"AGENT_SANDBOX": backend, **env}, env_file=layout.base / "none.env")
    found = Confinement.for_workspace(layout.workspace, settings)
    assert found is not None
    return found


def run(command: str, layout: Layout, confined: Confinement | None, timeout: float = 20) -> ShellRun:
    return run_command(command, layout.workspace, timeout, Cancel(), confinement=confined)


@pytest.fixture
def layout(monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    if not sys.platform.startswith("linux"):
        pytest.skip("the kernel sandbox is Linux's")
    made = Layout.create()
    monkeypatch.setenv("HOME", str(made.home))
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "t")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "t@t")
    try:
        yield made
    finally:
        made.remove()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param




def agent_layout() -> Iterator[Layout]:
    """A layout for tests that run the agent as a process (which gets HOME from the test):
    `layout = pytest.fixture(agent_layout, name="layout")`."""
    made = Layout.create()
    try:
        yield made
    finally:
        made.remove()


def process_state(pid: int) -> tuple[str, str, str]:
    """What a confined command must not change in a process outside: its limits, nice value and
    CPU affinity."""
    limits = Path(f"/proc/{pid}/limits").read_text()
    nice = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16]
    affinity = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("Cpus_allowed_list"))
    return limits, nice, affinity
