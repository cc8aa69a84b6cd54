"""The agent moves secrets out of its own environment: a child reading its ancestors' environment
blocks (as `cat /proc/$PPID/environ` or `ps eww` do) finds none of them, in any encoding."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY
from tests.support.agent_process import AGENT, run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/<pid>/environ is Linux's")

SECRETS = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY", "STRIPE_SK": "sk_live_51Habcdefghijkl",
           "SLACK_HOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX", "DB_PW": "correct-horse-battery",
           "SENTRY_DSN": "https://abcdef0123456789@o1.ingest.sentry.io/1", "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}

# Walks up from the command to the agent and prints each ancestor's environment block three ways.
ANCESTORS = r"""
import base64, os
pid = os.getpid()
while pid > 1:
    try:
        block = open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        break
    print(pid, block.replace(b"\0", b" ").decode("utf-8", "replace"))
    print(base64.b64encode(block).decode())
    print(block.hex())
    print(block.decode("utf-8", "replace")[::-1])
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
"""


def _spellings(value: str) -> list[str]:
    raw = value.encode()
    return [value, value[::-1], raw.hex(), base64.b64encode(raw).decode()[:-4]]


@pytest.mark.parametrize("confinement", [["--no-sandbox", "--yes"], []], ids=["unconfined", "default"])
def test_a_child_reading_the_agents_environment_finds_no_secret(tmp_path: Path, confinement: list[str]) -> None:
    """Unconfined, the command reads the agent's block and finds the secrets gone; under the sandbox
    it cannot read the agent's /proc entries at all. Either way the test reads it from outside."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "ancestors.py").write_text(ANCESTORS)
    seen_from_outside: list[bytes] = []
    agent: list[subprocess.Popen[bytes]] = []

    def reply(body: dict) -> Reply:
        # The test reads the running agent's block from outside, as any process of the user's could.
        seen_from_outside.append(Path(f"/proc/{agent[0].pid}/environ").read_bytes())
        if len(seen_from_outside) == 1:
            return Reply(call_events([("run_shell", {"command": f"{sys.executable} ancestors.py"})]))
        return Reply(text_events("done"))

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK_", "AGENT_"))}
    with ScriptedServer(responder=reply) as server:
        environ.update({"DEEPSEEK_BASE_URL": server.url, "DEEPSEEK_API_KEY": TEST_KEY, "NO_COLOR": "1",
                        "AGENT_SESSIONS_DIR": str(tmp_path / "sessions"), "KEEP_THIS_ONE": "visible-value",
                        **SECRETS})
        agent.append(subprocess.Popen([sys.executable, str(AGENT), "--cwd", str(workspace), "--one", "look",
                                       *confinement],
                                      env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        out, err = agent[0].communicate(timeout=60)
    assert agent[0].returncode == 0, err.decode()
    sent = json.dumps(server.requests)
    archived = b"".join(path.read_bytes() for path in (tmp_path / "sessions").rglob("*") if path.is_file())
    if confinement:  # it read the agent's block
        assert f"\n{agent[0].pid} ".encode() in archived and b"KEEP_THIS_ONE=visible-value" in archived
    everything = sent.encode() + out + err + b"".join(seen_from_outside) + archived
    for value in (TEST_KEY, *SECRETS.values()):
        for spelling in _spellings(value):
            assert spelling.encode() not in everything, (value, spelling)
    for block in seen_from_outside:
        assert b"KEEP_THIS_ONE=visible-value" in block and b"DEEPSEEK_API_KEY" not in block


SPELL = r"""
import base64, sys
for secret in open(sys.argv[1]).read().split():
    raw = secret.encode()
    print(secret[::-1], " ".join(secret), raw.hex(), sep="\n")
    for prefix in (b"", b"k=", b"key="):
        print(base64.b64encode(prefix + raw).decode(), base64.urlsafe_b64encode(prefix + raw).decode())
"""


def test_secrets_a_command_spells_out_reach_neither_the_provider_nor_the_session(tmp_path: Path) -> None:
    """The key (a model can read it from the .env) and a value the agent took out of its environment,
    printed reversed, spaced, hex and base64: the provider, the screen and the session files get none."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "spell.py").write_text(SPELL)
    (workspace / "found.txt").write_text(f"{TEST_KEY}\n{SECRETS['DB_PW']}\n")
    command = f"{sys.executable} spell.py found.txt"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "spell"], server.url, tmp_path, env={"DB_PW": SECRETS["DB_PW"]})
    assert done.returncode == 0, done.stderr.decode()
    archived = b"".join(path.read_bytes() for path in (tmp_path / "sessions").rglob("*") if path.is_file())
    everything = json.dumps(server.requests).encode() + done.stdout + done.stderr + archived
    assert archived.count(b"[REDACTED]") >= 2 * 9
    for value in (TEST_KEY, SECRETS["DB_PW"]):
        for spelling in [*_spellings(value), " ".join(value)]:
            assert spelling.encode() not in everything, (value, spelling)
