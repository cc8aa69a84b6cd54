"""bench/tasks.py's harness against the real local models: one task through `agent.py --one` in a fresh
folder, its events counted and its check run. Whether a small model solves it is the benchmark's
business; these tests hold the harness working (a run that never reached the model, or whose events
were not read, fails them) and, with the 1.5B model, hold that a run does not end on its first request
(a call the model wrote as text is run, not taken for the answer)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.task_suite import TASKS
from bench.tasks import LOCAL_MODEL_ENV, ROOT, check, prepare, run_task
from devtools import local_model

pytestmark = pytest.mark.realserver


@pytest.fixture(scope="module")
def qwen() -> Iterator[local_model.ServerHandle]:
    """The 0.5B model, where the 1.5B one is not cached; where it is, the 1.5B test runs the harness
    end to end (one real-model task per run: each costs minutes of CPU on a 2-core machine)."""
    if local_model.cached_model("qwen1.5b") is not None:
        pytest.skip("the qwen1.5b weights are cached: the 1.5B test runs the harness end to end")
    try:
        local_model.ensure_built()
        local_model.ensure_model("qwen")
    except local_model.LocalModelUnavailable as exc:
        pytest.skip(f"llama-server unavailable here: {exc.reason}")
    with local_model.start_server("qwen") as handle:
        yield handle


@pytest.mark.parametrize("name", ["calc"])
def test_a_task_runs_end_to_end_through_the_harness(qwen: local_model.ServerHandle, tmp_path: Path,
                                                    name: str) -> None:
    task = next(t for t in TASKS if t.name == name)
    work = tmp_path / "work"
    prepare(task, work)
    assert not check(task, work)  # the task is not solved before the agent runs
    env = {**os.environ, **LOCAL_MODEL_ENV, "DEEPSEEK_BASE_URL": qwen.url, "DEEPSEEK_MODEL": "qwen",
           "AGENT_MAX_STEPS": "2", "AGENT_SESSIONS_DIR": str(tmp_path / "sessions")}
    run = run_task(task, "this", [sys.executable, str(ROOT / "agent.py")], work, env, timeout=900)
    assert run.status in ("ok", "error", "step_limit"), run
    assert run.steps >= 1 and run.tokens_in > 0 and run.tokens_out > 0 and run.wall > 0
    assert run.solved == check(task, work)
    assert set(task.files) <= {p.name for p in work.iterdir()}  # the task's files are still there


@pytest.fixture(scope="module")
def qwen15b() -> Iterator[local_model.ServerHandle]:
    """The 1.5B model when its weights are cached (1.1 GB: fetched by `local_model.py build --models
    qwen1.5b` or by bench/tasks.py, not by a test run)."""
    if local_model.cached_model("qwen1.5b") is None:
        pytest.skip(f"the qwen1.5b weights are not cached in {local_model.model_path('qwen1.5b').parent}; "
                    "fetch them with: python3 devtools/local_model.py build --models qwen1.5b")
    try:
        local_model.ensure_built()
    except local_model.LocalModelUnavailable as exc:
        pytest.skip(f"llama-server unavailable here: {exc.reason}")
    with local_model.start_server("qwen1.5b") as handle:
        yield handle


def test_a_short_task_with_the_1_5b_model_goes_past_its_first_request(qwen15b: local_model.ServerHandle,
                                                                       tmp_path: Path) -> None:
    """The harness end to end with the 1.5B model; two steps show the first answer was a call."""
    task = next(t for t in TASKS if t.name == "config_value")
    work = tmp_path / "work"
    prepare(task, work)
    assert not check(task, work)
    env = {**os.environ, **LOCAL_MODEL_ENV, "DEEPSEEK_BASE_URL": qwen15b.url, "DEEPSEEK_MODEL": "qwen1.5b",
           "AGENT_MAX_STEPS": "2", "AGENT_SESSIONS_DIR": str(tmp_path / "sessions")}
    run = run_task(task, "this", [sys.executable, str(ROOT / "agent.py")], work, env, timeout=1200)
    assert run.status in ("ok", "error", "step_limit"), run
    assert run.steps >= 2, run  # its first answer is a call (native or written as text), never the end
    assert run.tokens_in > 0 and run.tokens_out > 0 and run.wall > 0
    assert run.solved == check(task, work)
    assert set(task.files) <= {p.name for p in work.iterdir()}
