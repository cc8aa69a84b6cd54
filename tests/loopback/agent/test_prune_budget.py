"""One budget: run_shell prunes to the context's per-result cap, so the pruner's fitter (which keeps
error lines first) does the cutting, not the blunt head-and-tail cap applied after it."""

from __future__ import annotations

import sys
from pathlib import Path

from core.agent.loop import Agent
from core.context.cap import prune_budget_chars
from core.context.settings import from_settings
from core.context.tokens import text_tokens
from core.prune.archive import OutputArchive
from core.session.journal import Journal
from tests.conftest import make_settings
from tests.support.events import Recorder
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def test_the_pruner_budget_fits_the_result_cap() -> None:
    for cap in (256, 1_000, 15_000):
        assert text_tokens("x" * prune_budget_chars(cap)) < cap


def test_errors_of_a_long_build_reach_the_model_at_a_small_window(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    script = tmp_path / "ws" / "build.py"  # in the workspace: a confined command reads nothing beside it
    script.write_text(
        "import sys\n"
        "for n in range(3000):\n"
        "    print(f'[{n}/3000] compiling module_{n}.c with flags -O2 -Wall -Wextra -fPIC')\n"
        "    if n % 10 == 0:\n"
        "        print(f'src/module_{n}.c:{n}:7: error: expected expression before token')\n"
        "sys.exit(2)\n")
    env = {"DEEPSEEK_CONTEXT_WINDOW": "8192", "DEEPSEEK_MAX_OUTPUT_TOKENS": "1024"}
    settings = make_settings("http://127.0.0.1:9", tmp_path, **env)
    cap = from_settings(settings).result_cap_tokens
    run = Reply(call_events([("run_shell", {"command": f"{sys.executable} {script}"})]))
    with ScriptedServer([run, Reply(text_events("three errors"))]) as server:
        settings = make_settings(server.url, tmp_path, **env)
        workspace = tmp_path / "ws"
        journal = Journal.create(tmp_path / "sessions", workspace, settings.model)
        agent = Agent(settings, Recorder(), workspace, "yes", journal=journal,
                      archive=OutputArchive(tmp_path / "outputs"))
        agent.run("build it")
    output = next(i["output"] for i in server.requests[-1]["input"] if i.get("type") == "function_call_output")
    for n in (0, 2990):  # the first and the last of 300 error lines
        assert f"src/module_{n}.c:{n}:7: error: expected expression before token" in output
    assert "-char budget, read_output out-1 pages the rest" in output.split("\n")[1]  # the pruner cut
    assert "omitted to fit the context budget" not in output  # the blunt cap had nothing left to cut
    assert text_tokens(output) <= cap
