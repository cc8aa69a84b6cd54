"""The context manager and its shaping layers (core/context), without a network."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from core.context import (
    LEDGER_MARK,
    SUMMARY_MARK,
    CompactionCancelled,
    ContextManager,
    ContextSettings,
)
from core.context.index import JournalIndex
from core.context.tokens import item_tokens, text_tokens
from core.session.items import (
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    Summary,
    UserMessage,
)
from tests.support.context_journal import INSTRUCTIONS, SMALL, TASK, Journal, Scripted, shape_until_it_acts


def unpaired(items: list[Item]) -> set[str]:
    calls = {i.call_id for i in items if isinstance(i, FunctionCall)}
    outputs = {i.call_id for i in items if isinstance(i, FunctionCallOutput)}
    return calls ^ outputs


def outputs_of(items: list[Item]) -> dict[str, str]:
    return {i.call_id: i.output for i in items if isinstance(i, FunctionCallOutput)}


def request_tokens(items: list[Item]) -> int:
    return text_tokens(INSTRUCTIONS) + sum(map(item_tokens, items))


def test_under_the_trigger_the_request_is_the_journal() -> None:
    j = Journal()
    for n in range(5):
        j.read(f"src/f{n}.rs")
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS)
    assert shaped.items == j.items and all(a is b for a, b in zip(shaped.items, j.items, strict=True))
    assert shaped.actions == []
    assert shaped.tokens == request_tokens(j.items) and shaped.budget == 10_000


def test_rereads_alone_are_superseded_by_pointers_to_the_later_read() -> None:
    j = Journal()
    for _ in range(4):
        j.read("src/lib.rs", chars=8_000)  # 4 identical reads, ~2k tokens each: over the 8k trigger
    j.shell("cargo nextest run", chars=100)
    j.shell("git status", chars=100)
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS)
    texts = list(outputs_of(shaped.items).values())
    assert len(shaped.actions) == 1 and shaped.actions[0].startswith("replaced 3 re-read file results")
    assert (
        texts[:3]
        == [
            "[superseded to save context: read_file src/lib.rs lines 1-2000 was read again later and the file "
            "had not changed — see the later result]"
        ]
        * 3
    )
    assert texts[3].startswith("src/lib.rs xxx")
    assert shaped.tokens <= SMALL.share(SMALL.target)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("none", {3: 9, 9: 12}),
        ("edit", {9: 12}),  # the read before the edit is never superseded by the reads after it
        ("write", {9: 12}),
        ("sha", {}),  # changed on disk by other means: different content
    ],
)
def test_a_read_is_superseded_only_by_an_identical_read_of_an_unchanged_file(
    change: str, expected: dict
) -> None:
    j = Journal()  # 0: the user's message; then reasoning, call, output per turn
    j.read("src/lib.rs", chars=100)  # output at 3
    if change == "edit":
        j.edit("src/lib.rs")
    elif change == "write":
        j.write("src/lib.rs", 10)
    else:
        j.shell("git status", chars=10)
    j.read("src/lib.rs", chars=100, sha="sha-2" if change == "sha" else "sha-1")  # 9
    j.read("src/lib.rs", chars=100, sha="sha-3" if change == "sha" else "sha-1")  # 12
    index = JournalIndex()
    index.extend(j.items)
    assert index.superseded == expected


def test_a_different_range_is_not_a_duplicate() -> None:
    j = Journal()
    j.read("src/lib.rs", chars=8_000, offset=1, limit=100)
    j.read("src/lib.rs", chars=8_000, offset=101, limit=100)
    j.read("src/lib.rs", chars=8_000, offset=1, limit=50)
    j.read("src/lib.rs", chars=8_000, offset=201, limit=100)
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS)
    assert not any(t.startswith("[superseded") for t in outputs_of(shaped.items).values())


def test_clearing_alone_empties_old_results_oldest_first_and_keeps_the_recent_window() -> None:
    j = Journal()
    for n in range(9):
        j.read(f"src/f{n}.rs", chars=4_000)  # ~1k tokens each
    j.shell("cargo nextest run", chars=4_000, archive="out-7")
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS)
    texts = list(outputs_of(shaped.items).values())
    assert len(shaped.actions) == 1 and shaped.actions[0].startswith("cleared ")
    assert (
        texts[0]
        == "[cleared to save context: read_file src/f0.rs lines 1-2000 — call read_file again to see it]"
    )
    cleared = [t.startswith("[cleared") for t in texts]
    assert cleared == sorted(cleared, reverse=True)  # oldest first, one contiguous run
    assert not cleared[-1] and not cleared[-2]  # the protected window
    assert shaped.tokens <= SMALL.share(SMALL.target)


def test_write_and_edit_results_are_never_cleared_and_shell_points_at_its_archive() -> None:
    j = Journal()
    j.edit("src/a.rs")
    j.write("src/b.rs", 10)
    j.shell("cargo nextest run", chars=6_000, archive="out-3")
    j.shell("cargo build && cargo install --path .", chars=6_000, archive=None)  # not re-runnable
    j.shell("git log -n 50", chars=6_000, archive=None)  # read-only: re-runnable
    for n in range(6):
        j.read(f"src/f{n}.rs", chars=4_000)
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS, force=True)
    texts = list(outputs_of(shaped.items).values())
    assert texts[0] == "Edited src/a.rs: replaced 1 occurrence."
    assert texts[1] == "Wrote 10 bytes to src/b.rs."
    assert texts[2] == (
        "[cleared to save context: run_shell `cargo nextest run` — full output: read_output id=out-3]"
    )
    assert texts[3] == "z" * 6_000
    assert texts[4] == "[cleared to save context: run_shell `git log -n 50` — run it again to see it]"


def test_dropping_keeps_user_messages_pairs_and_adds_the_ledger() -> None:
    j = Journal()
    for n in range(12):
        j.write(f"src/gen{n}.rs", 3_000)  # ~750-token calls, tiny results: nothing to clear
    j.items.append(UserMessage("Also keep the old API as a shim."))
    for n in range(4):
        j.write(f"src/late{n}.rs", 3_000)
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS)
    assert len(shaped.actions) == 1 and shaped.actions[0].startswith("dropped ")
    assert shaped.items[0] == UserMessage(TASK)
    assert UserMessage("Also keep the old API as a shim.") in shaped.items
    ledger = next(i for i in shaped.items if isinstance(i, UserMessage) and i.text.startswith(LEDGER_MARK))
    assert "Task: Port the parser to Rust." in ledger.text
    assert "- Use cargo nextest, never cargo test." in ledger.text
    assert "src/gen0.rs" in ledger.text and "src/late3.rs" in ledger.text
    assert not unpaired(shaped.items)
    assert isinstance(shaped.items[shaped.items.index(ledger) + 1], Reasoning)  # a whole turn follows
    assert shaped.tokens <= SMALL.share(SMALL.target)


def test_compaction_summarises_the_dropped_span_once_and_caches_it() -> None:
    seen: list[list[Item]] = []

    def summarize(items: list[Item]) -> str:
        seen.append(items)
        return f"Wrote {sum(isinstance(i, FunctionCall) for i in items)} files."

    j = Journal()
    for n in range(14):
        j.write(f"src/gen{n}.rs", 3_000)
    manager = ContextManager(SMALL, summarize=summarize)
    first = manager.shape(j.items, INSTRUCTIONS)
    summary = next(i for i in first.items if isinstance(i, Summary))
    assert summary.text.startswith(SUMMARY_MARK) and summary.text.endswith("files.")
    assert first.actions[0].startswith("dropped ") and ", summarised" in first.actions[0]
    assert len(seen) == 1 and isinstance(seen[0][0], UserMessage) and not unpaired(seen[0][1:])
    j.read("src/small.rs", chars=40)
    again = manager.shape(j.items, INSTRUCTIONS)
    assert len(seen) == 1 and again.actions == []
    assert all(a is b for a, b in zip(first.items, again.items, strict=False))  # same prefix objects


def test_a_failed_summary_keeps_the_turns_and_the_next_rewrite_tries_again() -> None:
    summarize = Scripted(TimeoutError("model did not answer"), "", "Wrote the generated files.")
    j = Journal()
    manager = ContextManager(SMALL, summarize=summarize)
    for failure, why in ((1, "model did not answer"), (2, "the summary came back empty")):
        shaped = shape_until_it_acts(j, manager)
        assert shaped.actions[0] == f"compaction failed ({failure}/3): {why}; kept the turns"
        assert shaped.items == j.items  # nothing dropped (and nothing else to clear here)
    later = shape_until_it_acts(j, manager)
    assert later.actions[0].startswith("dropped ") and ", summarised" in later.actions[0]
    assert any(isinstance(i, Summary) for i in later.items) and summarize.calls == 3


def test_compaction_drops_without_a_summary_only_once_it_gives_up() -> None:
    summarize = Scripted(TimeoutError("model did not answer"))
    j = Journal()
    manager = ContextManager(SMALL, summarize=summarize)
    notices = []
    for n in range(80):
        j.write(f"src/gen{n}.rs", 3_000)
        shaped = manager.shape(j.items, INSTRUCTIONS)
        notices += shaped.actions
        assert not unpaired(shaped.items)
        assert shaped.tokens <= SMALL.budget or any("still over the budget" in a for a in shaped.actions)
    assert summarize.calls == 3
    drops = [n for n in notices if n.startswith("dropped ")]
    assert notices[:2] == [
        "compaction failed (1/3): model did not answer; kept the turns",
        "compaction failed (2/3): model did not answer; kept the turns",
    ]
    assert (
        notices[2] == drops[0] and "(no summary: compaction failed (3/3): model did not answer)" in drops[0]
    )
    assert len(drops) > 3 and all("(no summary: compaction gave up after 3 failures)" in d for d in drops[1:])


def test_overflow_recovery_drops_even_when_the_summary_fails() -> None:
    j = Journal()
    for n in range(14):
        j.write(f"src/gen{n}.rs", 3_000)  # small results: only a drop can shrink this
    manager = ContextManager(SMALL, summarize=Scripted(ConnectionError("server down")))
    forced = manager.shape(j.items, INSTRUCTIONS, force=True)
    assert any(
        a.startswith("dropped ") and "(no summary: compaction failed (1/3): server down)" in a
        for a in forced.actions
    ), forced.actions
    assert forced.tokens <= SMALL.share(SMALL.target) and not unpaired(forced.items)


@pytest.mark.parametrize("force", [False, True])
def test_a_cancelled_summary_drops_nothing_and_is_no_failure(force: bool) -> None:
    summarize = Scripted(*[CompactionCancelled("interrupted by the user")] * 5, "Wrote the generated files.")
    j = Journal()
    manager = ContextManager(SMALL, summarize=summarize)
    for _ in range(5):
        shaped = shape_until_it_acts(j, manager, force=force)
        assert "compaction cancelled; kept the turns" in shaped.actions
        assert not any(a.startswith("dropped ") for a in shaped.actions)
        assert not any(isinstance(i, Summary) for i in shaped.items)
    later = shape_until_it_acts(j, manager, force=force)  # five cancels did not exhaust it
    assert any(a.startswith("dropped ") and ", summarised" in a for a in later.actions)
    assert summarize.calls == 6


def test_decisions_are_replayed_between_rewrites_so_the_prefix_stays_stable() -> None:
    j = Journal()
    manager = ContextManager(SMALL)
    previous: list[Item] = []
    rewrites = []
    for n in range(120):
        j.read(f"src/f{n % 17}.rs", chars=2_000 + 97 * (n % 23), sha=f"v{n // 10}")
        shaped = manager.shape(j.items, INSTRUCTIONS)
        if shaped.actions:
            rewrites.append(n)
        else:  # nothing rewritten: the previous request is an exact prefix of this one
            assert all(a is b for a, b in zip(previous, shaped.items, strict=False))
            assert len(shaped.items) > len(previous)
        assert shaped.tokens <= SMALL.budget
        previous = shaped.items
    # each rewrite goes down to the target, so the next is several turns away (~750 tokens a turn here)
    assert rewrites and min(b - a for a, b in pairwise(rewrites)) >= 3


def test_force_pushes_every_layer_to_the_target_and_never_touches_the_journal() -> None:
    j = Journal()
    for n in range(6):
        j.read(f"src/f{n}.rs", chars=4_000)
    before = [json.dumps(i.to_input()) for i in j.items]
    manager = ContextManager(SMALL)
    assert manager.shape(j.items, INSTRUCTIONS).actions == []  # 6k tokens: under the trigger
    forced = manager.shape(j.items, INSTRUCTIONS, force=True)
    assert forced.actions and forced.tokens <= SMALL.share(SMALL.target)
    assert [json.dumps(i.to_input()) for i in j.items] == before
    later = manager.shape(j.items, INSTRUCTIONS)  # the forced decisions stay
    assert later.items == forced.items


def test_compact_now_summarises_every_turn_but_the_last_two() -> None:
    j = Journal()
    for n in range(6):
        j.read(f"src/f{n}.rs", chars=400)
    manager = ContextManager(SMALL, summarize=lambda items: "All files read.")
    shaped = manager.compact_now(j.items, INSTRUCTIONS)
    assert [type(i).__name__ for i in shaped.items[:3]] == ["UserMessage", "Summary", "UserMessage"]
    assert shaped.actions[0].startswith("dropped 4 old turns, summarised")
    assert len([i for i in shaped.items if isinstance(i, Reasoning)]) == 2
    assert manager.compact_now(j.items, INSTRUCTIONS).actions == []  # nothing left to compact


def test_compact_now_never_drops_without_a_summary() -> None:
    j = Journal()
    for n in range(6):
        j.read(f"src/f{n}.rs", chars=400)
    summarize = Scripted(
        ConnectionError("server down"), CompactionCancelled("interrupted"), "", "", "All files read."
    )
    manager = ContextManager(SMALL, summarize=summarize)
    before = manager.shape(j.items, INSTRUCTIONS).items
    for why in (
        "compaction failed (1/3): server down",
        "compaction cancelled",
        "compaction failed (2/3): the summary came back empty",
        "compaction failed (3/3): the summary came back empty",
    ):
        shaped = manager.compact_now(j.items, INSTRUCTIONS)
        assert shaped.actions == [f"{why}; nothing changed"]
        assert shaped.items == before == manager.shape(j.items, INSTRUCTIONS).items
    shaped = manager.compact_now(j.items, INSTRUCTIONS)  # automatic compaction gave up; /compact tries
    assert shaped.actions[0].startswith("dropped 4 old turns, summarised")
    unsummarised = ContextManager(SMALL).compact_now(j.items, INSTRUCTIONS)
    assert unsummarised.actions == ["nothing compacted: no summariser"] and unsummarised.items == j.items


def test_calibration_scales_estimates_by_the_reported_count() -> None:
    j = Journal()
    j.read("src/a.rs", chars=4_000)
    manager = ContextManager(SMALL)
    shaped = manager.shape(j.items, INSTRUCTIONS)
    manager.calibrate(shaped, reported_input_tokens=shaped.raw_tokens * 3 // 2)
    j.read("src/b.rs", chars=4_000)  # a new item gets the calibrated ratio too
    again = manager.shape(j.items, INSTRUCTIONS)
    assert again.tokens == round(request_tokens(j.items) * 1.5)
    assert manager.breakdown(j.items, INSTRUCTIONS)["tool results: read_file"] == round(
        sum(item_tokens(i) for i in j.items if isinstance(i, FunctionCallOutput)) * 1.5
    )


def test_calibration_moves_the_trigger() -> None:
    j = Journal()
    for n in range(6):
        j.read(f"src/f{n}.rs", chars=4_000)  # ~6k estimated: under the 8k trigger
    manager = ContextManager(SMALL)
    shaped = manager.shape(j.items, INSTRUCTIONS)
    assert shaped.actions == []
    manager.calibrate(shaped, reported_input_tokens=9_000)  # the provider counts more
    assert manager.shape(j.items, INSTRUCTIONS).actions


def test_breakdown_names_every_source() -> None:
    j = Journal()
    j.turn(("read_file", {"path": "a"}, "x" * 400, {"path": "a"}), text="Reading a.")
    j.shell("ls", chars=100)
    manager = ContextManager(SMALL, tools_json='{"tools": []}')
    parts = manager.breakdown(j.items, INSTRUCTIONS)
    assert set(parts) == {
        "instructions",
        "tools",
        "user messages",
        "reasoning",
        "assistant text",
        "tool calls",
        "tool results: read_file",
        "tool results: run_shell",
    }
    assert sum(parts.values()) == manager.shape(j.items, INSTRUCTIONS).tokens


def test_a_huge_user_message_is_cut_in_the_middle_but_the_journal_keeps_it() -> None:
    j = Journal()
    paste = "START " + "log line\n" * 20_000 + " END"
    j.items.append(UserMessage(paste))
    shaped = ContextManager(SMALL).shape(j.items, INSTRUCTIONS)
    cut = shaped.items[1]
    assert isinstance(cut, UserMessage) and cut.text.startswith("START") and cut.text.endswith("END")
    assert "the session journal keeps the whole message" in cut.text
    assert item_tokens(cut) <= SMALL.share(SMALL.user_cap)
    assert j.items[1].text == paste


def test_a_16k_window_keeps_a_long_session_inside_its_budget() -> None:
    settings = ContextSettings(context_window=16_384, max_output_tokens=4_096, working_budget=128_000)
    assert settings.budget == int((16_384 - 4_096) * 0.9)
    assert settings.result_cap_tokens == settings.share(settings.result_cap) < 1_500  # scaled with the window
    j = Journal()
    manager = ContextManager(settings, summarize=lambda items: "Summary of the work so far.")
    for n in range(150):
        if n % 3 == 0:
            j.read(f"src/f{n % 11}.rs", chars=3_000)
        elif n % 3 == 1:
            j.shell("cargo nextest run", chars=1_500, archive=f"out-{n}")
        else:
            j.edit(f"src/f{n % 11}.rs")
        shaped = manager.shape(j.items, INSTRUCTIONS)
        assert request_tokens(shaped.items) <= settings.budget
        assert shaped.items[0] == UserMessage(TASK) and not unpaired(shaped.items)


def test_another_journal_starts_the_manager_over() -> None:
    a, b = Journal(), Journal()
    for n in range(12):
        a.read(f"src/f{n}.rs", chars=4_000)
    b.read("src/only.rs", chars=400)
    manager = ContextManager(SMALL)
    assert manager.shape(a.items, INSTRUCTIONS).actions
    assert manager.shape(b.items, INSTRUCTIONS).items == b.items
