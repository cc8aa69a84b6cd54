"""The first run's key prompt: the key saved to .env is the key used, and what it promises is true."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

import pytest

import agent
from core.config import load_settings
from tests.sse_server import Reply, ScriptedServer, text_events
from tests.test_terminal import Terminal, _agent_command, _app_copy, _env, needs_tmux

tmux = needs_tmux


@tmux
@pytest.mark.terminal
def test_an_empty_key_in_the_environment_does_not_hide_the_key_just_saved(tmp_path: Path) -> None:
    """`DEEPSEEK_API_KEY=` (empty) is set, as a shell template leaves it: the first run asks, saves,
    and the REPL starts with that key instead of stopping with "No API key found"."""
    app = _app_copy(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedServer([Reply(text_events("hello with key"))]) as server:
        env = _env(server.url, tmp_path, DEEPSEEK_API_KEY="", PYTHONPATH=str(app))
        env["DEEPSEEK_BASE_URL"] = server.url.replace("127.0.0.1", "localhost.localdomain.invalid")
        term = Terminal(_agent_command(workspace, "--plain", agent=app / "agent.py"), env)
        try:
            screen = term.wait_for("API key (hidden):")
            assert "(readable only by you)" in screen  # true here: the file is made 0600
            term.send("sk-typed-key-987654", "Enter")
            screen = term.wait_for("Type a task")
            assert "No API key found" not in screen and "sk-typed-key-987654" not in screen
        finally:
            term.close()
    assert (app / ".env").read_text() == "DEEPSEEK_API_KEY=sk-typed-key-987654\n"


@pytest.mark.parametrize("platform", ["win32", "linux"])
def test_the_prompt_says_readable_only_by_you_only_where_that_is_made_true(
        platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On Windows no 0600 is applied (the file gets its folder's ACL), so the prompt must not claim it."""
    settings = load_settings(environ={"DEEPSEEK_BASE_URL": "https://api.invalid"}, env_file=tmp_path / ".env")
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(getpass, "getpass", lambda *args, **kwargs: "")
    args = argparse.Namespace(plain=True, model=None)
    assert agent._ask_for_key(settings, args) is settings
    err = capsys.readouterr().err
    assert str(tmp_path / ".env") in err
    assert ("readable only by you" in err) == (platform != "win32"), err
