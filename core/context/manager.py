"""The context manager: builds each request from the journal, inside the budget.

Shaping is a projection: the journal is never touched, the request is computed from it before
every call, and what was decided once (a cleared result, a dropped span) is replayed identically
afterwards. Nothing happens while the request is under the trigger; past it, the layers run in
order, cheapest and least lossy first, each only while the request is still over the target:
re-read pointers (b), cleared old results (d), then dropping old turns with a summary (e, f);
a failed summary keeps the turns unless the request must shrink at any price (force).
Layers (a) and (c) act at ingestion: `cap_result` and `judge_repeat`.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from ..i18n import _
from ..session.items import FunctionCallOutput, Item, UserMessage
from .breakdown import breakdown
from .clear import clear_old_results, results_can_reach_goal
from .compact import CompactionCancelled, Compactor, Summarizer
from .dedup import supersede_rereads
from .drop import drop_old_turns
from .index import JournalIndex
from .pinned import cap_user
from .plan import Action, Pass, Plan
from .settings import ContextSettings
from .tokens import Calibration, text_tokens

_MIN_PROTECTED_TURNS = 2  # the latest calls keep their results, even under force


@dataclass(frozen=True)
class Shaped:
    """One request's input, as shaped.

    `tokens` is the calibrated estimate of the whole request (instructions and tool schemas too),
    `raw_tokens` the local estimate before calibration, `actions` short notices of what shaping
    did this time (empty on most turns).
    """

    items: list[Item]
    tokens: int
    budget: int
    actions: list[str]
    raw_tokens: int


def _request_end(items: list[Item], at: int) -> int:
    """How many of the first `at` items a request made at that point carried: up to the last input
    (user message or tool output), not the model output that came back."""
    for i in range(at, 0, -1):
        if isinstance(items[i - 1], UserMessage | FunctionCallOutput):
            return i
    return at


def _not_journaled(items: list[Item]) -> str:
    raise CompactionCancelled("no journaled summary for this span")


class ContextManager:
    """Shapes requests for one session's journal. See the package docstring for the loop's part."""

    def __init__(
        self, settings: ContextSettings, summarize: Summarizer | None = None, tools_json: str = ""
    ) -> None:
        self.settings = settings
        self.calibration = Calibration()
        self._summarize = summarize
        # Through a lambda, so restore() can serve journaled summaries while it replays.
        self._compactor = Compactor(lambda items: self._summarize(items)) if summarize else None  # type: ignore[misc]
        self.compacting_now = False  # inside compact_now(): the summary about to be journaled is a /compact
        self._tools_json = tools_json
        self._tools_raw = text_tokens(tools_json)
        self._instructions = ("", 0)
        self._index = JournalIndex()
        self._plan = Plan()

    def set_tools(self, tools_json: str) -> None:
        """The tool list changed (an MCP server came or went): it costs tokens in every request."""
        self._tools_json = tools_json
        self._tools_raw = text_tokens(tools_json)

    @property
    def budget(self) -> int:
        return self.settings.budget

    def shape(self, items: list[Item], instructions: str, force: bool = False) -> Shaped:
        """The request input for the journal `items` (append-only between calls; never modified).

        force=True (after a context-overflow error) ignores the trigger, shrinks the protected
        window to the last two turns and runs every layer down to the target, or to half the
        current request when that is lower: the server has just said the window is smaller than
        the settings claim, so the budget cannot be trusted.
        """
        self._sync(items)
        fixed = self._fixed(instructions)
        total = fixed + self._plan.raw_total(self._index)
        actions: list[Action] = []
        if force or total > self._raw(self.settings.trigger):
            goal = self._raw(self.settings.target)
            p = self._pass(
                items,
                fixed,
                min(goal, total // 2) if force else goal,
                0 if force else self._raw(self.settings.protect),
            )
            actions = self._relieve(p, force)
            total = p.total
        return self._shaped(items, total, actions)

    def compact_now(self, items: list[Item], instructions: str) -> Shaped:
        """/compact: drop and summarise every turn but the last two, now (tries the summariser even
        after automatic compaction gave up). Never drops without a summary: when there is none,
        nothing changes and the action says why. No actions means there was nothing to compact."""
        self._sync(items)
        p = self._pass(items, self._fixed(instructions), 0, 0)
        self.compacting_now = True
        try:
            action = drop_old_turns(
                p,
                self._raw(self.settings.user_cap),
                self._raw(self.settings.summary_cap),
                self._compactor,
                manual=True,
            )
        finally:
            self.compacting_now = False
        return self._shaped(items, p.total, [action] if action else [])

    def restore(self, items: list[Item], events: list[tuple[int, dict]], instructions: str) -> None:
        """Rebuild the shaping state of a resumed session, so its next request is the one it would
        have sent without the restart (and no span is summarised, and billed, twice).

        Shaping is deterministic given the journal, the calibration and the summaries, so the
        decisions are replayed: `events` are the journal's compaction and usage records, each with
        the number of items before it. A compaction record replays the shaping that asked for it
        (a /compact one, compact_now) with the journaled summary; a usage record replays its
        request's shaping and calibration. A summary the journal does not hold is not made up: the
        replay keeps those turns, as a cancelled summary would."""
        if self._compactor is None:
            return
        live, shaped = self._summarize, None
        try:
            for at, record in events:
                request = _request_end(items, at)
                if record.get("kind") == "compaction":
                    text = str(record.get("text", ""))
                    self._summarize = lambda _items, text=text: text
                    if record.get("manual"):
                        self.compact_now(items[:at], instructions)
                    else:
                        shaped = self.shape(items[:request], instructions)
                elif record.get("kind") == "usage":
                    self._summarize = _not_journaled
                    shaped = shaped or self.shape(items[:request], instructions)
                    self.calibrate(shaped, int(record.get("input_tokens") or 0))
                    shaped = None
        finally:
            self._summarize = live

    def calibrate(self, shaped: Shaped, reported_input_tokens: int) -> None:
        """Scale future estimates by the provider's count of the request `shaped` became."""
        self.calibration.update(shaped.raw_tokens, reported_input_tokens)

    def breakdown(self, items: list[Item], instructions: str) -> dict[str, int]:
        """Tokens by source of the request shape() would send now (without running any layer)."""
        self._sync(items)
        shaped = self._plan.build(items, self._index)
        return breakdown(shaped, instructions, self._tools_json, self.calibration.scale)

    def _relieve(self, p: Pass, force: bool) -> list[Action]:
        actions = []
        for layer in (supersede_rereads, lambda p: clear_old_results(p, self.settings.clear_min_tokens)):
            if not p.over() or not results_can_reach_goal(p):
                break
            actions.append(layer(p))
        if p.over():
            cap = self._raw
            actions.append(
                drop_old_turns(
                    p,
                    cap(self.settings.user_cap),
                    cap(self.settings.summary_cap),
                    self._compactor,
                    forced=force,
                )
            )
        budget = self.calibration.unscale(self.budget)
        if p.total > budget:
            actions.append(Action(_("still over the budget after shaping ({tokens} tokens)").format(
                tokens=self._k(p.total)), 0))
        return [action for action in actions if action]

    def _shaped(self, items: list[Item], total: int, actions: list[Action]) -> Shaped:
        notices = [_("{action} ({tokens} tokens)").format(action=a.what, tokens=self._k(a.saved))
                   if a.saved > 0 else a.what for a in actions]
        return Shaped(
            self._plan.build(items, self._index), self.calibration.scale(total), self.budget, notices, total
        )

    def _pass(self, items: list[Item], fixed: int, goal: int, protect: int) -> Pass:
        protected = self._plan.protected_start(self._index, protect, _MIN_PROTECTED_TURNS)
        return Pass(items, self._index, self._plan, fixed, goal, protected)

    def _sync(self, items: list[Item]) -> None:
        """Index what was appended since the last call; start over if `items` is another journal."""
        if not self._index.follows(items):
            self._index, self._plan = JournalIndex(), Plan()
            if self._compactor:
                self._compactor.forget()
        start = self._index.size
        self._index.extend(items)
        cap = self._raw(self.settings.user_cap)
        users = self._index.users
        for i in users[bisect_left(users, start) :]:
            item = items[i]
            if self._index.raw[i] > cap and isinstance(item, UserMessage):
                self._plan.replace(self._index, i, cap_user(item, cap))

    def _fixed(self, instructions: str) -> int:
        if instructions != self._instructions[0]:
            self._instructions = (instructions, text_tokens(instructions))
        return self._instructions[1] + self._tools_raw

    def _raw(self, fraction: float) -> int:
        """`fraction` of the budget in raw (uncalibrated) tokens, the unit shaping works in."""
        return self.calibration.unscale(self.settings.share(fraction))

    def _k(self, raw: int) -> str:
        tokens = self.calibration.scale(raw)
        return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
