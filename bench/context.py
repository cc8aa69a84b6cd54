"""Context shaping benchmark: one scripted coding session through five request-building strategies.

Run from the repository root: `python -m bench.context`. No network: the session is generated
from a fixed seed, the summariser is a deterministic stand-in, and tokens are counted with the
agent's own local estimate (the same yardstick for every strategy).

A turn here is one model request: the strategy builds the request from the journal, then the
scripted model turn (reasoning, maybe text, one or two calls) and its tool results are appended.
A token counts as cached when it lies in the longest common prefix, item by item, with the
previous request; cost uses DeepSeek flash peak prices.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/context.py` and as `python3 -m bench.context`

from bench.measurements import recorded
from core.context import DEFAULT_PRICES, SUMMARY_PROMPT, ContextManager, ContextSettings, cap_result
from core.context.tokens import item_tokens, text_tokens
from core.session.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    ToolOutcome,
    UserMessage,
)

SEED = 20250
STEPS = 300
SETTINGS = ContextSettings()  # the defaults: 1M window, 128k working budget
PRICES = DEFAULT_PRICES["deepseek-flash"]
TASK = "migrate the test suite of the web app from Jest to Vitest"
CONSTRAINT = "use pnpm, never npm"
USER_MESSAGES = {
    0: f"Please {TASK}. Important: {CONSTRAINT}. Keep the public API of src/ unchanged.",
    95: "Also move the CI workflow to Vitest and make sure coverage still reaches 80%.",
    190: "The build fails on Windows paths now; look at src/paths.ts before going on.",
    265: "Looks good. Finish with a short CHANGELOG entry and run the whole suite once more.",
}
INSTRUCTIONS = (
    "You are a coding agent working in the user's repository through tools. Read before you edit, "
    "keep changes small, run the tests after every change, and report what you did.\n\n"
    "# AGENTS.md\n" + "- Code style: TypeScript strict, 2-space indent, no default exports.\n" * 25
)
WORDS = ["test", "suite", "config", "module", "mock", "vitest", "jest", "path", "build", "alias", "fix"]


# ---------------------------------------------------------------- the scripted session


@dataclass
class _Repo:
    rng: random.Random
    files: dict[str, str] = field(default_factory=dict)
    reads: list[tuple[str, int | None, int | None]] = field(default_factory=list)
    edited: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for n in range(28):
            self.files[f"src/module{n:02d}.ts"] = self._code(self.rng.randint(2_000, 20_000))

    def _code(self, chars: int) -> str:
        lines = []
        while sum(map(len, lines)) < chars:
            a, b = self.rng.sample(WORDS, 2)
            lines.append(
                f"  export const {a}{len(lines)} = {b}(ctx, {self.rng.randint(0, 999)}); // {a} {b}\n"
            )
        return "".join(lines)


class Session:
    """Yields, per turn, the items to append after the request (user message first when one is due)."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        self.repo = _Repo(random.Random(seed + 1))
        self.calls = 0
        self.archives = 0

    def turns(self, steps: int) -> Iterator[tuple[list[Item], list[Item]]]:
        """(items before the request, items after it) for each step."""
        for step in range(steps):
            before: list[Item] = [UserMessage(USER_MESSAGES[step])] if step in USER_MESSAGES else []
            yield before, self._model_turn(step)

    def _text(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi)
        words = []
        while sum(len(w) + 1 for w in words) < n:
            words.append(self.rng.choice(WORDS))
        return " ".join(words)

    def _model_turn(self, step: int) -> list[Item]:
        items: list[Item] = [Reasoning(id=f"rs-{step}", text=self._text(150, 1500))]
        if self.rng.random() < 0.2:
            items.append(AssistantMessage(f"Next: {self._text(60, 300)}."))
        tools = [self._tool_call() for _ in range(2 if self.rng.random() < 0.15 else 1)]
        items += [call for call, _ in tools]
        items += [output for _, output in tools]
        return items

    def _tool_call(self) -> tuple[FunctionCall, FunctionCallOutput]:
        self.calls += 1
        cid = f"call_{self.calls:05d}"
        roll = self.rng.random()
        if roll < 0.30:
            name, args, text, meta = self._read(new=True)
        elif roll < 0.40:
            name, args, text, meta = self._read(new=False)
        elif roll < 0.58:
            name, args, text, meta = self._edit()
        elif roll < 0.62:
            name, args, text, meta = self._write()
        elif roll < 0.86:
            name, args, text, meta = self._shell()
        else:
            name, args, text, meta = self._search()
        outcome = ToolOutcome(tool=name, **meta)
        text = cap_result(text, name, outcome, SETTINGS.result_cap_tokens)  # layer (a), in the tool runner
        return FunctionCall(cid, name, json.dumps(args)), FunctionCallOutput(cid, text, outcome)

    def _read(self, new: bool) -> tuple[str, dict, str, dict]:
        repo = self.repo
        if new or not repo.reads:
            path = self.rng.choice(sorted(repo.files))
            ranged = self.rng.random() < 0.3
            offset, limit = (self.rng.randint(1, 40), 120) if ranged else (None, None)
            repo.reads.append((path, offset, limit))
        else:  # a re-read: after an edit of the file half the time, else of an unchanged one
            edited = [r for r in repo.reads[-40:] if r[0] in repo.edited]
            path, offset, limit = self.rng.choice(
                edited if edited and self.rng.random() < 0.5 else repo.reads[-40:]
            )
        content = repo.files[path]
        lines = content.splitlines()
        args = {"path": path, **({"offset": offset, "limit": limit} if limit else {})}
        first, count = offset or 1, limit or 2000  # the read_file tool's defaults
        text = "\n".join(
            f"{n:>6}\t{line}" for n, line in enumerate(lines[first - 1 : first - 1 + count], first)
        )
        sha = hashlib.sha256(content.encode()).hexdigest()
        meta = {"path": path, "offset": first, "limit": count, "sha": sha, "total_lines": len(lines)}
        return "read_file", args, text, meta

    def _edit(self) -> tuple[str, dict, str, dict]:
        path = self.rng.choice(sorted(self.repo.files))
        content = self.repo.files[path]
        start = self.rng.randint(0, max(len(content) - 600, 0))
        old = content[start : start + self.rng.randint(80, 600)]
        new = old.replace("jest", "vi").replace("ctx", "context") + f"  // migrated {self.calls}\n"
        self.repo.files[path] = content.replace(old, new, 1)
        self.repo.edited.add(path)
        args = {"path": path, "old_text": old, "new_text": new}
        return "edit_file", args, f"Edited {path}: replaced 1 occurrence.", {"path": path}

    def _write(self) -> tuple[str, dict, str, dict]:
        path = f"src/new{self.calls}.test.ts"
        self.repo.files[path] = self.repo._code(self.rng.randint(1_000, 6_000))
        self.repo.edited.add(path)
        args = {"path": path, "content": self.repo.files[path]}
        return "write_file", args, f"Wrote {len(self.repo.files[path])} bytes to {path}.", {"path": path}

    def _shell(self) -> tuple[str, dict, str, dict]:
        command = self.rng.choice(
            [
                "pnpm vitest run",
                "pnpm run build",
                "git diff --stat",
                "pnpm vitest run src/module07.test.ts",
                "git status",
                "pnpm lint",
                "rg -n jest src",
            ]
        )
        self.archives += 1
        lines = [
            f"{self.rng.choice(['✓', '✗', ' '])} {self._text(30, 90)}\n"
            for _ in range(self.rng.randint(8, 50))
        ]
        archive = f"out-{self.archives}"
        return "run_shell", {"command": command}, "".join(lines), {"command": command, "archive": archive}

    def _search(self) -> tuple[str, dict, str, dict]:
        pattern = self.rng.choice(WORDS)
        hits = [
            f"{self.rng.choice(sorted(self.repo.files))}:{self.rng.randint(1, 400)}: {self._text(40, 100)}\n"
            for _ in range(self.rng.randint(8, 40))
        ]
        return "search", {"pattern": pattern}, "".join(hits), {}


def stand_in_summary(items: list[Item]) -> str:
    """A deterministic summariser: the last words and the files touched in the span."""
    touched: dict[str, None] = {}
    for item in items:
        if isinstance(item, FunctionCall):
            touched.setdefault(json.loads(item.arguments).get("path", item.name), None)
    said = [item.text for item in items if isinstance(item, AssistantMessage)][-5:]
    return "\n".join(
        [f"Worked through {len(items)} items.", "Touched: " + ", ".join(list(touched)[-40:]), *said]
    )


# ---------------------------------------------------------------- strategies


def _groups(items: list[Item]) -> list[list[Item]]:
    """Units no strategy may split: a user message, or a model turn (reasoning to last output)."""
    units: list[list[Item]] = []
    for item in items:
        if isinstance(item, UserMessage | Reasoning) or not units or isinstance(units[-1][0], UserMessage):
            units.append([item])
        else:
            units[-1].append(item)
    return units


def _chars(item: Item) -> int:
    return len(_serial(item))


class NoShaping:
    name = "no shaping"

    def build(self, items: list[Item]) -> list[Item]:
        return list(items)


class DropOldest:
    name = "drop oldest turns at 200k chars"

    def build(self, items: list[Item]) -> list[Item]:
        units = _groups(items)
        total = sum(_chars(i) for i in items)
        while total > 200_000 and len(units) > 1:
            total -= sum(_chars(i) for i in units.pop(0))
        return [item for unit in units for item in unit]


class Clip:
    name = "clip transcript to 12k chars"

    def build(self, items: list[Item]) -> list[Item]:
        kept, total = [], 0
        for item in reversed(items):
            total += _chars(item)
            if total > 12_000:
                break
            kept.append(item)
        return kept[::-1]


class ClearEveryTurn:
    name = "clear old outputs every turn"
    keep = 3

    def __init__(self) -> None:
        self._stand_ins: dict[str, FunctionCallOutput] = {}

    def build(self, items: list[Item]) -> list[Item]:
        outputs = [i for i, item in enumerate(items) if isinstance(item, FunctionCallOutput)]
        old = set(outputs[: -self.keep])
        return [self._cleared(item) if i in old else item for i, item in enumerate(items)]

    def _cleared(self, item: Item) -> Item:
        assert isinstance(item, FunctionCallOutput)
        if item.call_id not in self._stand_ins:
            self._stand_ins[item.call_id] = FunctionCallOutput(
                item.call_id, "[old output cleared]", item.outcome
            )
        return self._stand_ins[item.call_id]


class Ours:
    name = "ours (core.context)"

    def __init__(self, settings: ContextSettings = SETTINGS) -> None:
        self.summary_in = self.summary_cached = self.summary_out = self.summaries = 0
        self.manager = ContextManager(settings, summarize=self._summarize)
        self._last: list[str] = []

    def _summarize(self, items: list[Item]) -> str:
        """The stand-in, billed like the real one: instructions, the span (a prefix of the last
        request, so cached as far as it matches), the prompt; the answer as output."""
        text = stand_in_summary(items)
        sizes = [text_tokens(INSTRUCTIONS), *map(item_tokens, items)]
        self.summary_in += sum(sizes) + text_tokens(SUMMARY_PROMPT)
        self.summary_cached += sum(sizes[: _common([INSTRUCTIONS, *map(_serial, items)], self._last)])
        self.summary_out += text_tokens(text)
        self.summaries += 1
        return text

    def build(self, items: list[Item]) -> list[Item]:
        request = self.manager.shape(items, INSTRUCTIONS).items
        self._last = [INSTRUCTIONS, *map(_serial, request)]
        return request


# ---------------------------------------------------------------- measuring

_SERIAL: dict[int, tuple[Item, str]] = {}


def _serial(item: Item) -> str:
    hit = _SERIAL.get(id(item))
    if hit is None or hit[0] is not item:
        hit = _SERIAL[id(item)] = (item, json.dumps(item.to_input(), ensure_ascii=False, sort_keys=True))
    return hit[1]


@dataclass
class Tally:
    peak: int = 0
    over_budget: int = 0
    sent: int = 0
    cached: int = 0
    faithful: int = 0
    unpaired: int = 0
    turns: int = 0
    previous: list[str] = field(default_factory=list)

    def record(self, request: list[Item], budget: int) -> None:
        serial = [INSTRUCTIONS, *map(_serial, request)]
        sizes = [text_tokens(INSTRUCTIONS), *map(item_tokens, request)]
        tokens = sum(sizes)
        common = _common(serial, self.previous)
        self.previous = serial
        self.turns += 1
        self.peak = max(self.peak, tokens)
        self.over_budget += tokens > budget
        self.sent += tokens
        self.cached += sum(sizes[:common])
        text = "\n".join(getattr(item, "text", "") for item in request)
        self.faithful += CONSTRAINT in text and TASK in text
        calls = {item.call_id for item in request if isinstance(item, FunctionCall)}
        outputs = {item.call_id for item in request if isinstance(item, FunctionCallOutput)}
        self.unpaired += calls != outputs

    def cost(self, extra_in: int = 0, extra_cached: int = 0, extra_out: int = 0) -> float:
        return PRICES.cost(self.sent + extra_in, self.cached + extra_cached, extra_out)


def _common(a: list[str], b: list[str]) -> int:
    """Length of the longest common prefix of two serialised requests, in items."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def compare() -> list[str]:
    strategies = [NoShaping(), DropOldest(), Clip(), ClearEveryTurn(), Ours()]
    tallies = {s.name: Tally() for s in strategies}
    journal: list[Item] = []
    for before, after in Session().turns(STEPS):
        journal += before
        for strategy in strategies:
            tallies[strategy.name].record(strategy.build(journal), SETTINGS.budget)
        journal += after
    ours = strategies[-1]
    assert isinstance(ours, Ours)
    raw_total = sum(map(item_tokens, journal))
    rows = [
        f"Session: {STEPS} turns, {len(journal)} items, {raw_total / 1000:.0f}k tokens in the journal; budget "
        f"{SETTINGS.budget / 1000:.0f}k (trigger {SETTINGS.trigger:.0%}, target {SETTINGS.target:.0%}); "
        f"prices ${PRICES.cache_hit}/${PRICES.cache_miss} per 1M input tokens (hit/miss).",
        "",
        "| strategy | peak request (of budget) | turns over budget | input tokens sent | cache-hit share "
        "| est. input cost | fidelity | requests with unpaired calls |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for strategy in strategies:
        t = tallies[strategy.name]
        extra = (ours.summary_in, ours.summary_cached, ours.summary_out) if strategy is ours else (0, 0, 0)
        sent, cached = t.sent + extra[0], t.cached + extra[1]
        rows.append(
            f"| {strategy.name} | {t.peak / 1000:.1f}k ({t.peak / SETTINGS.budget:.0%}) | {t.over_budget} "
            f"| {sent / 1e6:.2f}M | {cached / sent:.1%} | ${t.cost(*extra):.3f} "
            f"| {t.faithful / t.turns:.0%} | {t.unpaired} |"
        )
    rows.append("")
    rows.append(
        f"Ours called the summariser {ours.summaries} times ({ours.summary_in / 1000:.0f}k tokens in, "
        f"{ours.summary_cached / 1000:.0f}k of them cached, {ours.summary_out / 1000:.1f}k out); "
        "those requests are included above."
    )
    return rows


def timing(sizes: tuple[int, ...] = (1_000, 5_000, 10_000), window: int = 240) -> list[str]:
    """Shaping time per turn while one long session grows, over the `window` items up to each size
    (quiet turns and rewrite turns apart), and cold: the first shape after a resume."""
    manager = ContextManager(SETTINGS, summarize=stand_in_summary)
    journal: list[Item] = []
    quiet: dict[int, list[float]] = {n: [] for n in sizes}
    rewrites: dict[int, list[float]] = {n: [] for n in sizes}
    turns = Session().turns(10**6)
    while len(journal) < max(sizes):
        before, after = next(turns)
        journal += before
        start = time.perf_counter()
        shaped = manager.shape(journal, INSTRUCTIONS)
        elapsed = (time.perf_counter() - start) * 1000
        for n in sizes:
            if n - window <= len(journal) <= n:
                (rewrites if shaped.actions else quiet)[n].append(elapsed)
        journal += after
    rows = []
    for n in sizes:
        slowest = f"slowest of {len(rewrites[n])} rewrite turns {max(rewrites[n], default=0):.2f} ms"
        rows.append(
            f"~{n:>6} journal items: median {statistics.median(quiet[n]):.3f} ms per quiet turn "
            f"({len(quiet[n])} turns), {slowest}; cold start (first shape after resume) {_cold(journal[:n]):.1f} ms"
        )
    return rows


def _cold(journal: list[Item]) -> float:
    best = float("inf")
    for _ in range(3):
        manager = ContextManager(
            SETTINGS, summarize=lambda items: "summary"
        )  # shaping's time, not the stand-in's
        start = time.perf_counter()
        manager.shape(journal, INSTRUCTIONS)
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def main() -> None:
    print("\n".join(compare()))
    print()
    print("\n".join(timing()))


if __name__ == "__main__":
    with recorded("context", "Context shaping: a scripted 300-step session through five strategies"):
        main()
