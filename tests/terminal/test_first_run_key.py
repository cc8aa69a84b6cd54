"""The first run's key prompt in a real terminal, plain and full-screen: the key is typed unseen,
saved privately beside agent.py, and the key saved is the key used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.sse_server import Reply, ScriptedServer, text_events
from tests.support.terminal import Terminal, agent_command, app_copy, needs_tmux, terminal_env

pytestmark = [pytest.mark.terminal, needs_tmux]


def test_an_empty_key_in_the_environment_does_not_hide_the_key_just_saved(tmp_path: Path) -> None:
    """`DEEPSEEK_API_KEY=` (empty) is set, as a shell template leaves it: the first run asks, saves,
    and the REPL starts with that key instead of stopping with "No API key found"."""
    app = app_copy(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedServer([Reply(text_events("hello with key"))]) as server:
        env = terminal_env(server.url, tmp_path, DEEPSEEK_API_KEY="", PYTHONPATH=str(app))
        env["DEEPSEEK_BASE_URL"] = server.url.replace("127.0.0.1", "localhost.localdomain.invalid")
        term = Terminal(agent_command(workspace, "--plain", agent=app / "agent.py"), env)
        try:
            screen = term.wait_for("API key (hidden):")
            assert "(readable only by you)" in screen  # true here: the file is made 0600
            term.send("sk-typed-key-987654", "Enter")
            screen = term.wait_for("Type a task")
            assert "No API key found" not in screen and "sk-typed-key-987654" not in screen
        finally:
            term.close()
    assert (app / ".env").read_text() == "DEEPSEEK_API_KEY=sk-typed-key-987654\n"


def test_first_run_asks_for_the_key_and_saves_it_privately(tmp_path: Path, workspace: Path) -> None:
    """The key is looked for next to agent.py: run a copy from a scratch folder."""
    app = app_copy(tmp_path)
    with ScriptedServer([Reply(text_events("hello with key"))]) as server:
        env = terminal_env(server.url, tmp_path, DEEPSEEK_API_KEY="", PYTHONPATH=str(app))
        env["DEEPSEEK_BASE_URL"] = server.url.replace("127.0.0.1", "localhost.localdomain.invalid")
        term = Terminal(agent_command(workspace, "--plain", agent=app / "agent.py"), env)
        try:
            term.wait_for("API key (hidden):")
            term.send("sk-typed-key-987654", "Enter")
            term.wait_for("Saved to")
            assert "sk-typed-key-987654" not in term.screen()
        finally:
            term.close()
    saved = app / ".env"
    assert saved.read_text() == "DEEPSEEK_API_KEY=sk-typed-key-987654\n"
    assert os.stat(saved).st_mode & 0o777 == 0o600


def test_tui_first_run_asks_for_the_key_in_a_masked_field(tmp_path: Path, workspace: Path) -> None:
    app = app_copy(tmp_path)
    with ScriptedServer([Reply(text_events("hello with key"))]) as server:
        env = terminal_env(server.url, tmp_path, PYTHONPATH=str(app))
        del env["DEEPSEEK_API_KEY"]  # unset, so the saved key is the one that is used next
        env["DEEPSEEK_BASE_URL"] = server.url.replace("127.0.0.1", "localhost.localdomain.invalid")
        term = Terminal(agent_command(workspace, agent=app / "agent.py"), env, width=80, height=24)
        try:
            term.wait_for("API key")
            term.send("sk-typed-key-123456", literal=True)
            screen = term.wait_for("*" * 19)
            assert "sk-typed-key" not in screen
            term.send("Enter")
            term.wait_for("idle")
        finally:
            term.close()
    assert (app / ".env").read_text() == "DEEPSEEK_API_KEY=sk-typed-key-123456\n"
