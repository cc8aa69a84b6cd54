"""`agent.py --one` without `--yes`, confined by the kernel sandbox, against a scripted model: the
destructive corpus harms no canary, secrets never reach the provider, and a `setsid` heartbeat
ends with the session."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from core.sandbox import probe
from core.secrets import spellings, squeeze
from tests.conftest import TEST_KEY
from tests.support.agent_process import run_agent
from tests.support.sandbox_corpus import (
    CANARY,
    DESTRUCTIVE,
    ENV_SECRET,
    ORDINARY,
    SECRET_READS,
    Layout,
    encodings,
    leaks,
)
from tests.support.sandbox_fixtures import agent_layout
from tests.support.sandbox_reads import ONE_FILE, WHOLE_HOME, write_credential_home
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not probe("auto").active,
                                reason="needs the Linux kernel sandbox")


layout = pytest.fixture(agent_layout, name="layout")


def _one(layout: Layout, commands: list[str], yes: bool = False) -> tuple[ScriptedServer, str]:
    script = [Reply(call_events([("run_shell", {"command": c}) for c in commands])), Reply(text_events("done"))]
    env = {"HOME": str(layout.home), "AWS_SECRET_ACCESS_KEY": ENV_SECRET, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "do it", *(["--yes"] if yes else [])], server.url, layout.base, env=env,
                         timeout=120)
    assert done.returncode in (0, 1), done.stderr.decode()[-2000:]
    return server, done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


def _outputs(server: ScriptedServer) -> list[str]:
    return [item["output"] for item in server.requests[-1]["input"] if item.get("type") == "function_call_output"]


@pytest.mark.parametrize("cause", list(DESTRUCTIVE))
def test_the_destructive_corpus_harms_no_canary(layout: Layout, cause: str) -> None:
    before = layout.canaries()
    server, _ = _one(layout, DESTRUCTIVE[cause])
    assert layout.canaries() == before or _metadata_only(layout.canaries(), before), cause
    outputs = _outputs(server)
    assert len(outputs) == len(DESTRUCTIVE[cause])
    # Whatever the gate let through was confined; a command the sandbox stopped says so.
    assert all("blocked by the sandbox" in o or "refused" in o or "exit code" in o for o in outputs)


def _metadata_only(after: dict, before: dict) -> bool:
    """Landlock does not cover a file's mode and owner (`chmod`/`chown`): contents and names held."""
    if probe("auto").backend != "landlock" or after.keys() != before.keys():
        return False
    return all((a or ("",))[0] == (b or ("",))[0] for a, b in zip(after.values(), before.values(), strict=True))


def test_the_corpus_has_over_a_hundred_commands() -> None:
    assert sum(len(c) for c in DESTRUCTIVE.values()) >= 100


def test_secrets_and_the_agents_environment_never_reach_the_provider(layout: Layout) -> None:
    server, shown = _one(layout, SECRET_READS)
    sent = json.dumps(server.requests, ensure_ascii=False)
    assert not leaks(sent.encode()), "a secret reached the provider"
    squeezed = "".join(sent.split())
    assert not [form for form in encodings(TEST_KEY) if form in squeezed], "the API key reached the provider"
    assert not leaks(shown.encode())
    assert any("Permission denied" in o for o in _outputs(server))


def test_ordinary_work_runs_unasked(layout: Layout) -> None:
    server, _ = _one(layout, ORDINARY)
    assert all(o.startswith("exit code 0") for o in _outputs(server)), _outputs(server)


def test_one_shot_refuses_to_run_a_blocked_command_outside_and_says_how_to_allow_it(layout: Layout) -> None:
    server, _ = _one(layout, ["echo gone >&../x/f.txt"])
    (output,) = _outputs(server)
    assert "blocked by the sandbox" in output and "--no-sandbox" in output and "rerun with --yes" not in output, output
    assert (layout.base / "x" / "f.txt").read_text() == CANARY


def test_yes_keeps_a_blocked_command_confined(layout: Layout) -> None:
    server, _ = _one(layout, ["echo gone >&../x/f.txt"], yes=True)
    (output,) = _outputs(server)
    assert "blocked by the sandbox" in output and "--no-sandbox" in output, output
    assert (layout.base / "x" / "f.txt").read_text() == CANARY


def test_a_setsid_heartbeat_ends_with_the_session(layout: Layout) -> None:
    beat = layout.workspace / "beat"
    # the command waits for the first beats: with a PID namespace of its own, a job ends with its command
    start = "setsid sh -c 'while :; do echo b >> beat; sleep 0.1; done' > /dev/null 2>&1 < /dev/null & sleep 0.3"
    _one(layout, [start, "sleep 0.5"])
    size = beat.stat().st_size
    assert size > 0, "the heartbeat never ran"
    time.sleep(1.0)
    assert beat.stat().st_size == size, "the setsid heartbeat outlived the session"


def test_no_credential_of_a_full_home_folder_reaches_the_provider(layout: Layout) -> None:
    """Many tools' credential files, a sibling project's .env and another process's --password:
    read in several spellings, none reaches the model, and it is told how the user could allow a
    read. Tokens of shapes redaction does not know (a .pgpass password) count too."""
    files = write_credential_home(layout.home, layout.workspace)
    every = [c for _, found in files for c in found]
    password = "Ps-Args-Pw-2718"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", f"--password={password}"])
    try:
        server, shown = _one(layout, [*WHOLE_HOME, *(s.format(f=p) for p, _ in files for s in ONE_FILE[:2]),
                                      "cat ../other/.env", "ps -eo args"])
    finally:
        holder.kill()
        holder.wait()
    sent = squeeze(json.dumps(server.requests, ensure_ascii=False))
    assert not [c for c in [*every, password] if any(form in sent for form in spellings(c))]
    assert not [c for c in every if c in shown]
    told = [o for o in _outputs(server) if "blocked by the sandbox" in o and "AGENT_SANDBOX_READABLE=" in o]
    assert told, _outputs(server)[-3:]
