"""Issue 9 through the real agent: what a cloned repository or a careless or prompt-injected model
must not be able to do. Each test runs `agent.py --one` against the loopback server and asserts the
harm did not happen."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.sse_server import Reply, ScriptedServer, text_events
from tests.test_one_shot import run_agent

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symlinks, FIFOs and modes as on POSIX")


# -- 1. AGENTS.md goes through the workspace guard ------------------------------------------------
@posix_only
@pytest.mark.parametrize("target", ["secret", "fifo", "/dev/zero"])
def test_agents_md_pointing_outside_or_at_a_special_file_is_not_read(tmp_path: Path, target: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG\n")
    if target == "secret":
        (workspace / "AGENTS.md").symlink_to(secret)
    elif target == "fifo":
        os.mkfifo(workspace / "AGENTS.md")
    else:
        (workspace / "AGENTS.md").symlink_to(target)
    with ScriptedServer([Reply(text_events("hello"))]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    instructions = server.requests[0]["instructions"]
    assert "wJalr" not in instructions
    assert "AGENTS.md was not read" in instructions


def test_agents_md_inside_the_workspace_is_read_with_a_byte_bound(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Use tabs. 用中文回答。\n" + "x" * 5_000_000)
    with ScriptedServer([Reply(text_events("hello"))]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    instructions = server.requests[0]["instructions"]
    assert "Use tabs. 用中文回答。" in instructions and "AGENTS.md cut at 40,000 characters" in instructions
    assert len(instructions) < 50_000
