"""Fixtures for the sandbox tests: a layout outside the temp folders (HOME pointed at its fake home),
each backend in turn, and commands run in them. A test folder's conftest.py imports them."""

from __future__ import annotations

import sys
from collections.abc import Iterator

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


