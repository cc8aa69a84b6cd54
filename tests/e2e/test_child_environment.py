"""The child environment: what a first, name-based policy would let through.

Git's own config in the environment (a credential helper, an `Authorization` header), connection
strings, personal access tokens, cookies, and values shaped like a credential whatever the name,
are kept from commands; what builds need (`PATH`, a `PATCH_LEVEL`, `XDG_SESSION_TYPE`) still arrives,
and git in a command still works. (A confined command gets no session socket either:
tests/unit/sandbox/test_channels.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.secrets import EnvPolicy
from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

HELD_BACK = {
    "GIT_CONFIG_PARAMETERS": "'http.extraheader'='Authorization: Basic dXNlcjpodW50ZXIy'",
    "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "credential.helper",
    "GIT_CONFIG_VALUE_0": "!f() { echo password=hunter3; }; f",
    "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0LTQ=",
    "SQL_SERVER": "Server=db.invalid;User Id=sa;Password=hunter5;",
    "GITHUB_PAT": "pat-6", "AZURE_DEVOPS_EXT_PAT": "pat-7", "SESSION_COOKIE": "cookie-8",
    "HF_COOKIES": "cookie-9", "DEPLOY_CREDS": "creds-10", "SLACK_WEBHOOK_URL": "https://hooks.invalid/T0/B0/x11",
    "SOME_SERVICE": "ghp_" + "a" * 36, "OPENAI_ORG_BEARER": "bearer-12",
}
PASSED_ON = {"XDG_SESSION_TYPE": "tty",
             "PATCH_LEVEL": "3", "COMPAT_MODE": "on", "COOKIECUTTER_CONFIG": "/tmp/cc.yaml",
             "SESSION_NAME": "main", "NODE_OPTIONS": "--max-old-space-size=4096"}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_config_tokens_and_connection_strings_do_not_reach_commands(tmp_path: Path) -> None:
    command = "env > env.txt; git config --list > git.txt 2>&1; echo \"git exit $?\" >> git.txt"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "show env"], server.url, tmp_path, env={**HELD_BACK, **PASSED_ON})
    assert done.returncode == 0, done.stderr.decode()
    seen = (tmp_path / "ws" / "env.txt").read_text()
    assert "PATH=" in seen
    for name, value in PASSED_ON.items():
        assert f"{name}={value}" in seen, name
    for name, value in HELD_BACK.items():
        assert f"{name}=" not in seen and (len(value) < 4 or value not in seen), name
    git = (tmp_path / "ws" / "git.txt").read_text()
    assert "git exit 0" in git and "hunter" not in git and "credential.helper" not in git, git


def test_keep_can_pass_git_config_on_as_a_whole() -> None:
    policy = EnvPolicy.parse(keep="GIT_CONFIG_*")
    kept = policy.apply({k: v for k, v in HELD_BACK.items() if k.startswith("GIT_CONFIG")})
    assert set(kept) == {"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"}
    assert "DEEPSEEK_API_KEY" not in EnvPolicy.parse(keep="*").apply({"DEEPSEEK_API_KEY": "sk-x"})
