"""The pairing invariant under random sessions: whatever shaping does, every call travels with its
output, the reasoning and text of its turn stay in front of it, and the journal is untouched."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core.context import ContextManager, ContextSettings
from core.session.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    ToolOutcome,
    UserMessage,
)

TOOLS = ["read_file", "edit_file", "write_file", "run_shell", "search"]

tool_call = st.tuples(st.sampled_from(TOOLS), st.integers(0, 6), st.integers(0, 12_000), st.booleans())
model_turn = st.tuples(
    st.booleans(),  # reasoning
    st.booleans(),  # assistant text
    st.lists(tool_call, min_size=0, max_size=3),
)
step = st.one_of(st.tuples(st.just("user"), st.integers(1, 3_000)), st.tuples(st.just("turn"), model_turn))


def build(steps: list) -> list[list[Item]]:
    """The journal as it grows: one list of new items per step."""
    batches: list[list[Item]] = [[UserMessage("Task: keep the API. Never use npm.")]]
    n = 0
    for kind, spec in steps:
        if kind == "user":
            batches.append([UserMessage("u" * spec)])
            continue
        reasoning, text, calls = spec
        batch: list[Item] = []
        if reasoning:
            batch.append(Reasoning(id=f"r{n}", text="think " * 40))
        if text:
            batch.append(AssistantMessage("plan " * 30))
        outputs = []
        for tool, path, size, archived in calls:
            n += 1
            outcome = ToolOutcome(tool=tool, path=f"f{path}", offset=1, limit=2000, sha=f"s{path}")
            if tool == "run_shell":
                outcome = ToolOutcome(tool=tool, command="pytest", archive=f"out-{n}" if archived else "")
            batch.append(FunctionCall(f"c{n}", tool, json.dumps({"path": f"f{path}"})))
            outputs.append(FunctionCallOutput(f"c{n}", "o" * size, outcome))
        batches.append(batch + outputs)
    return batches


def check(journal: list[Item], shaped: list[Item]) -> None:
    position = {id(item): k for k, item in enumerate(journal)}
    calls = {item.call_id: k for k, item in enumerate(shaped) if isinstance(item, FunctionCall)}
    outputs = {item.call_id: k for k, item in enumerate(shaped) if isinstance(item, FunctionCallOutput)}
    assert calls.keys() == outputs.keys()
    for call_id, k in calls.items():
        between = shaped[k + 1 : outputs[call_id]]
        assert outputs[call_id] > k
        assert all(isinstance(item, FunctionCall | FunctionCallOutput) for item in between)
        j = position[id(shaped[k])]  # calls are never replaced: the journal's own object
        before = journal[j - 1]
        if isinstance(before, Reasoning | AssistantMessage | FunctionCall):
            assert shaped[k - 1] is before  # the turn's reasoning and text stay in front of its calls
    pinned = " ".join(item.text for item in shaped if isinstance(item, UserMessage))
    assert "Never use npm." in pinned  # the first message, or the ledger once the messages outgrow their cap


def flaky_summary(items: list[Item]) -> str:
    if len(items) % 3 == 0:
        raise RuntimeError("summariser failed")
    return f"summary of {len(items)} items"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(step, min_size=1, max_size=60),
    window=st.sampled_from([4_000, 8_000, 16_384, 64_000]),
    forced=st.sets(st.integers(0, 60)),
    summarise=st.booleans(),
)
def test_shaping_never_splits_a_turn(steps: list, window: int, forced: set[int], summarise: bool) -> None:
    config = ContextSettings(context_window=window, max_output_tokens=window // 8, working_budget=None)
    manager = ContextManager(config, summarize=flaky_summary if summarise else None)
    journal: list[Item] = []
    for n, batch in enumerate(build(steps)):
        journal += batch
        frozen = [json.dumps(item.to_input()) for item in journal]
        shaped = manager.shape(journal, "instructions", force=n in forced)
        for a in shaped.actions:
            event(a.split(" ")[0])
        check(journal, shaped.items)
        assert [json.dumps(item.to_input()) for item in journal] == frozen
        assert shaped.tokens <= config.budget or any("still over the budget" in a for a in shaped.actions)
