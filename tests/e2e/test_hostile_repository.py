"""Through the real agent: what a cloned repository or a careless or prompt-injected model
must not be able to do. Each test runs `agent.py --one` against the loopback server and asserts the
harm did not happen."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.agent_process import env_to_file, native, run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symlinks, FIFOs and modes as on POSIX")


# -- AGENTS.md goes through the workspace guard ---------------------------------------------------
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


# -- the child environment ---------------------------------------------------------------------------
SECRETS = {"AZURE_OPENAI_KEY": "az-1", "JWT_PRIVATE_KEY": "jwt-1", "SIGNING_KEY": "sig-1", "MYSQL_PWD": "my-1",
           "DB_PASS": "db-1", "GPG_PASSPHRASE": "gpg-1", "NPM_AUTH": "npm-1", "SENTRY_DSN": "https://k@o1.invalid/1",
           "DATABASE_URL": "postgres://app:pw-1@db.invalid/app", "REDIS_URL": "redis://:pw-2@cache.invalid:6379",
           "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "CI_JOB_JWT": "ci-1", "STRIPE_KEY": "stripe-1"}


def test_secret_variables_do_not_reach_commands_and_the_policy_adjusts(tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": env_to_file("env.txt")})])), Reply(text_events("done"))]
    env = {**SECRETS, "PLAIN_SETTING": "visible-1", "DROPPED_SETTING": "hidden-1",
           "AGENT_ENV_KEEP": "STRIPE_*", "AGENT_ENV_DROP": "dropped_*"}
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "show env", "--yes"], server.url, tmp_path, env=env)
    assert done.returncode == 0, done.stderr.decode()
    output = (tmp_path / "ws" / "env.txt").read_text(errors="replace")
    assert "PLAIN_SETTING=visible-1" in output and "PATH=" in output.upper()  # env really ran
    assert "STRIPE_KEY=stripe-1" in output  # AGENT_ENV_KEEP let it through
    assert "DROPPED_SETTING" not in output  # AGENT_ENV_DROP kept it back
    for name in SECRETS.keys() - {"STRIPE_KEY"}:
        assert f"{name}=" not in output, name
    assert "DEEPSEEK_API_KEY" not in output
    assert "AGENT_ENV_KEEP" in server.requests[0]["instructions"]  # the model is told how it works


# -- a model's regex cannot hang the agent ---------------------------------------------------------------
@pytest.mark.parametrize("with_rg", [False, True], ids=["no-ripgrep", "ripgrep-if-installed"])
def test_a_pathological_regex_gets_an_answer_through_the_agent(tmp_path: Path, with_rg: bool) -> None:
    """`^(a+)+$` over lines of 40 a's and a '!': hours with Python's re on main (the path Windows always
    takes). Here search and read_output's grep answer, and the agent finishes its task."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "data.txt").write_text(("a" * 40 + "!\n") * 50)
    evil = "^(a+)+$"
    script = [Reply(call_events([("search", {"pattern": evil})])),
              Reply(call_events([("run_shell", {"command": native("cat data.txt", "type data.txt", "Get-Content data.txt")})])),
              Reply(call_events([("read_output", {"id": "out-1", "grep": evil})])),
              Reply(text_events("nothing matches"))]
    env = {}
    if not with_rg:  # a PATH without ripgrep: the Python walk answers, as on Windows
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for tool in ("sh", "bash", "cat"):
            if found := shutil.which(tool):
                (bin_dir / tool).symlink_to(found)
        env["PATH"] = str(bin_dir)
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "find the a-lines"], server.url, tmp_path, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == "nothing matches\n"
    outputs = [r["input"][-1]["output"] for r in server.requests[1:]]
    assert outputs[0] == f"no matches for {evil!r} in ."
    assert outputs[1].startswith("exit code 0")
    assert outputs[2] == f"out-1: no line matches /{evil}/"
