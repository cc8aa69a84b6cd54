"""Shared fixtures: settings pointed at a loopback server, and an event recorder (tests/support/events.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from core.config import Settings, load_settings
from core.network.proxy import Proxy
from core.session.journal import Journal
from tests.support.events import Recorder

TEST_KEY = "sk-test-0123456789abcdef-SECRET"


def require_symlinks(folder: Path) -> None:
    """Skip the test unless this system really makes symlinks: Windows needs a privilege (or
    Developer Mode) for them, and wine's CreateSymbolicLink reports success and makes nothing."""
    probe = folder / ".symlink-probe"
    try:
        os.symlink(folder, probe, target_is_directory=True)
        made = os.path.islink(probe)
    except OSError:
        made = False
    if os.path.islink(probe):
        os.unlink(probe)
    if not made:
        pytest.skip("this system makes no symlinks (Windows without the privilege or Developer Mode; "
                    "wine only pretends to)")


def make_settings(url: str, tmp_path: Path | None = None, **env: str) -> Settings:
    environ = {"DEEPSEEK_BASE_URL": url, "DEEPSEEK_API_KEY": TEST_KEY, "AGENT_RETRY_BASE_DELAY": "0.05",
               "AGENT_IDLE_TIMEOUT": "10", **env}
    if tmp_path is not None:
        environ.setdefault("AGENT_SESSIONS_DIR", str(tmp_path / "sessions"))
    return load_settings(environ=environ, env_file=Path("/nonexistent/.env"))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(autouse=True)
def _journals_closed(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Closes every session journal a test opened and left open (agents built in a test hold theirs
    for good): an open journal keeps its file and lock open, and on Windows a temp folder holding
    an open file cannot be deleted."""
    opened: dict[int, Journal] = {}
    original = Journal._open

    def tracked(journal: Journal) -> Any:
        opened[id(journal)] = journal
        return original(journal)

    monkeypatch.setattr(Journal, "_open", tracked)
    yield
    for journal in opened.values():
        journal.close()


@pytest.fixture(autouse=True)
def _proxies_closed(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Stops every network proxy a test started and left running (agents built in a test never
    close their session, and tests of the proxy itself start many): each is a server thread, and
    dozens of them slow every later test."""
    started: list[Proxy] = []
    original = Proxy.start

    def tracked(proxy: Proxy) -> Any:
        started.append(proxy)
        return original(proxy)

    monkeypatch.setattr(Proxy, "start", tracked)
    yield
    for proxy in started:
        proxy.close()


# The tiers, one folder each under tests/: every test there carries its folder's marker.
TIERS = ("unit", "loopback", "e2e", "terminal", "realserver")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by its tier folder, so `-m unit` (or `pytest tests/unit`) is the quick loop and
    `-m "not terminal"` leaves out the tmux tier without each file having to say so."""
    tests = Path(__file__).resolve().parent
    for item in items:
        parts = item.path.resolve().relative_to(tests).parts if item.path.resolve().is_relative_to(tests) else ()
        if parts and parts[0] in TIERS:
            item.add_marker(parts[0])
