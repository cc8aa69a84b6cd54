"""What a resume costs now that it restores the context shaping, and that it restores it exactly.

A live session of the benchmark's generator (bench.context) is shaped turn by turn, with the
journal's compaction and usage records kept as the agent writes them; then a fresh manager is
restored from those records (ContextManager.restore, what `--resume` does) and its next request is
compared with the live one. Printed per journal size: the restore time, the old cold start (one
shape from nothing, which forgot every compaction) in the same run, their ratio, and whether the
restored next request is identical (it must be).

    python3 -m bench.resume
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/resume.py` and as `python3 -m bench.resume`

from bench.context import INSTRUCTIONS, SETTINGS, Session, stand_in_summary
from bench.measurements import recorded
from core.context import ContextManager
from core.session.items import FunctionCallOutput, Item, UserMessage

SIZES = (1_000, 5_000, 10_000)


def live_session(size: int) -> tuple[list[Item], list[tuple[int, dict]], ContextManager]:
    """Items, the (position, record) events the journal would hold, and the live manager."""
    journal: list[Item] = []
    events: list[tuple[int, dict]] = []

    def summarize(items: list[Item]) -> str:
        text = stand_in_summary(items)
        events.append((len(journal), {"kind": "compaction", "text": text, "manual": False}))
        return text

    manager = ContextManager(SETTINGS, summarize=summarize)
    turns = Session().turns(10**6)
    while len(journal) < size:
        before, after = next(turns)
        journal += before
        shaped = manager.shape(journal, INSTRUCTIONS)
        reported = int(shaped.raw_tokens * 1.07)  # a provider counting 7% more than the local estimate
        outputs = [item for item in after if not isinstance(item, FunctionCallOutput)]
        journal += outputs  # as the agent journals a turn: the model's items, then the usage record,
        manager.calibrate(shaped, reported)
        events.append((len(journal), {"kind": "usage", "input_tokens": reported}))
        journal += after[len(outputs):]  # then the tools' results
    return journal, events, manager


def _request(manager: ContextManager, journal: list[Item]) -> str:
    shaped = manager.shape([*journal, UserMessage("go on")], INSTRUCTIONS)
    return json.dumps([item.to_input() for item in shaped.items], sort_keys=True)


def main() -> None:
    print("| journal items | restore (replay) | old cold start (one shape) | ratio | summaries "
          "| next request, restored | next request, not restored |")
    print("|---:|---:|---:|---:|---:|---|---|")
    for size in SIZES:
        journal, events, live = live_session(size)
        expected = _request(live, journal)
        start = time.perf_counter()
        restored = ContextManager(SETTINGS, summarize=lambda items: "must not be asked")
        restored.restore(journal, events, INSTRUCTIONS)
        replay = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        forgetful = ContextManager(SETTINGS, summarize=stand_in_summary)
        forgetful.shape(journal, INSTRUCTIONS)
        cold = (time.perf_counter() - start) * 1000
        same = _request(restored, journal) == expected
        before = _request(forgetful, journal) == expected
        summaries = sum(record["kind"] == "compaction" for _, record in events)
        print(f"| {size:,} | {replay:.0f} ms | {cold:.1f} ms | {replay / cold:.0f}x | {summaries} | "
              f"{'identical' if same else 'DIFFERENT'} | {'identical' if before else 'different'} |")


if __name__ == "__main__":
    with recorded("resume", "Resume: restoring the context shaping from the journal"):
        main()
