"""Soak: 2,000 scripted turns against a loopback server that injects random faults.

    python -m bench.soak [--turns 2000] [--seed 7]

Each turn is a user message; the server answers with text or a tool call (then text), and before
that, at random, with 429/500/503, a reset connection, a stream dropped before or after output, or
junk events. At the end the session journal is loaded back and compared with what the server
acknowledged (every stream it sent to completion): every acknowledged item must be in the journal
exactly once, in order, and nothing else but the partial text of streams that broke after output
(kept, marked incomplete). Memory is sampled with tracemalloc as the session grows: it should grow
only with the journal's in-memory index (the history list), so bytes per history item stay flat.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/soak.py` and as `python3 -m bench.soak`

from bench.measurements import recorded
from core.agent.loop import Agent
from core.config import load_settings
from core.session.items import AssistantMessage, FunctionCall, FunctionCallOutput, UserMessage
from core.session.journal import Journal, load
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

FAULTS = ("ok",) * 14 + ("429", "500", "503", "reset", "drop_before", "drop_after", "junk")


class Soak:
    """The server side: decides each reply and remembers what it delivered in full."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.acked: list[tuple[str, str]] = []  # (kind, text or call name+args) of completed streams
        self.partial = 0
        self.faults: dict[str, int] = {}
        self.lock = threading.Lock()

    def reply(self, body: dict) -> Reply:
        with self.lock:
            fault = self.rng.choice(FAULTS)
            self.faults[fault] = self.faults.get(fault, 0) + 1
            last = body["input"][-1]
            wants_tool = last.get("role") == "user" and self.rng.random() < 0.3
            n = len(self.acked)
            if wants_tool:
                events = call_events([("read_file", {"path": "notes.txt", "offset": n % 5 + 1, "limit": 2})],
                                     reasoning="")
            else:
                events = text_events(f"answer {n}: 好的, done", chunks=3)
            if fault == "429":
                return Reply(status=429, body=b'{"error":{"message":"busy"}}', headers={"retry-after-ms": "1"})
            if fault in ("500", "503"):
                return Reply(status=int(fault), body=b'{"error":{"message":"oops"}}')
            if fault == "reset":
                return Reply(reset=True)
            if fault == "drop_before":
                return Reply(events, drop_after=1)
            if fault == "drop_after" and not wants_tool:
                self.partial += 1
                return Reply(events, drop_after=3)
            self._ack(events)
            junk = [b": keep-alive\n\n", b"data: {broken\n\n"] if fault == "junk" else []
            return Reply(events, extra_chunks=junk)

    def _ack(self, events: list[dict]) -> None:
        for event in events:
            if event["type"] == "response.output_item.done":
                item = event["item"]
                if item["type"] == "message":
                    self.acked.append(("text", item["content"][0]["text"]))
                elif item["type"] == "function_call":
                    self.acked.append(("call", item["name"] + item["arguments"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    soak = Soak(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="soak-"))
    (tmp / "ws").mkdir()
    (tmp / "ws" / "notes.txt").write_text("".join(f"note {i}\n" for i in range(10)))
    tracemalloc.start()
    samples: list[tuple[int, int, int]] = []
    started = time.perf_counter()
    with ScriptedServer(responder=soak.reply) as server:
        server.keep_requests = False
        settings = load_settings(environ={
            "DEEPSEEK_BASE_URL": server.url, "DEEPSEEK_API_KEY": "sk-soak-key-0000", "AGENT_RETRY_BASE_DELAY": "0.001",
            "AGENT_MAX_RETRIES": "8", "AGENT_SESSIONS_DIR": str(tmp / "sessions")}, env_file=tmp / "none")
        journal = Journal.create(tmp / "sessions", tmp / "ws", settings.model)
        agent = Agent(settings, lambda event: None, tmp / "ws", "yes", journal=journal)
        outcomes: dict[str, int] = {}
        for turn in range(1, args.turns + 1):
            outcome = agent.run(f"turn {turn}: 继续")
            outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
            if turn % (args.turns // 4) == 0:
                gc.collect()
                samples.append((turn, len(agent.history), tracemalloc.get_traced_memory()[0]))
        journal.close()
    elapsed = time.perf_counter() - started

    loaded = load(journal.folder)
    seen: list[tuple[str, str]] = []
    incomplete = 0
    for item in loaded.items:
        if isinstance(item, AssistantMessage):
            if item.status == "completed":
                seen.append(("text", item.text))
            else:
                incomplete += 1
        elif isinstance(item, FunctionCall):
            seen.append(("call", item.name + item.arguments))
    users = sum(isinstance(i, UserMessage) for i in loaded.items)
    outputs = sum(isinstance(i, FunctionCallOutput) for i in loaded.items)
    calls = sum(isinstance(i, FunctionCall) for i in loaded.items)
    exact = seen == soak.acked and incomplete == soak.partial and users == args.turns and outputs == calls

    print(f"turns: {args.turns}   seconds: {elapsed:.1f}   outcomes: {json.dumps(outcomes)}")
    print(f"injected: {json.dumps(dict(sorted(soak.faults.items())))}")
    print(f"journal: {len(loaded.items)} items ({users} user, {calls} calls, {outputs} outputs, "
          f"{incomplete} partial); notices on load: {len(loaded.notices)}")
    print(f"replay matches the server's acknowledged items exactly: {'yes' if exact else 'NO'} "
          f"({len(soak.acked)} acknowledged, {len(seen)} in the journal)")
    print("| turn | history items | traced memory | growth per item since the first sample |")
    print("|---:|---:|---:|---:|")
    first_items, first_memory = samples[0][1], samples[0][2]
    for turn, items, memory in samples:
        growth = (memory - first_memory) / (items - first_items) if items > first_items else 0
        print(f"| {turn} | {items} | {memory / 1e6:.2f} MB | {growth:,.0f} B |")
    if not exact:
        sys.exit(1)


if __name__ == "__main__":
    with recorded("soak", "Soak: scripted turns against a loopback server that injects faults"):
        main()
