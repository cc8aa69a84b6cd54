"""Facts about the journal that shaping needs, kept up to date as items are appended.

The journal only grows, so each fact is worked out once, when its item first appears: the token
estimate, the turn group, call pairing, duplicate reads, files changed. A shaping pass then only
looks at what changed, which keeps it in the low milliseconds at 10k items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..session.items import FunctionCall, FunctionCallOutput, Item, ToolOutcome
from .calls import MUTATING_TOOLS
from .tokens import item_tokens

# Order of item kinds inside one model turn; a kind earlier than its predecessor starts a new turn.
_PHASE = {"reasoning": 0, "assistant": 1, "summary": 1, "function_call": 2, "function_call_output": 3}


@dataclass
class _Read:
    index: int
    sha: str
    writes: int  # writes to the path seen before this read


@dataclass
class JournalIndex:
    """Incremental facts about one journal. Indices are journal positions."""

    raw: list[int] = field(default_factory=list)  # local token estimate of each item
    starts: list[int] = field(default_factory=list)  # first index of each turn group (never splits a pair)
    users: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    tools: dict[int, str] = field(default_factory=dict)  # output index -> tool name (its outcome's, else the call's)
    call_at: dict[str, int] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)  # calls still waiting for their output
    orphans: set[int] = field(default_factory=set)  # outputs whose call never appeared
    superseded: dict[int, int] = field(default_factory=dict)  # read -> later identical read
    changed_files: dict[str, None] = field(default_factory=dict)  # ordered set
    _phase: int | None = None
    _last: Item | None = None
    _reads: dict[tuple[Any, ...], _Read] = field(default_factory=dict)
    _writes: dict[str, int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.raw)

    def follows(self, items: list[Item]) -> bool:
        """Whether `items` is the indexed journal with (maybe) more appended."""
        n = self.size
        return len(items) >= n and (n == 0 or items[n - 1] is self._last)

    def extend(self, items: list[Item]) -> None:
        for i in range(self.size, len(items)):
            self._add(i, items[i], items)
        if items:
            self._last = items[-1]

    def unpaired(self) -> set[int]:
        """Indices that must not be sent: calls without output yet, outputs without call."""
        return self.orphans | set(self.pending.values()) if self.pending else self.orphans

    def _add(self, i: int, item: Item, items: list[Item]) -> None:
        self.raw.append(item_tokens(item))
        if item.kind == "user":
            self.users.append(i)
            self._phase = None
            return
        phase = _PHASE[item.kind]
        if self._phase is None or phase < self._phase:
            self.starts.append(i)
        self._phase = phase
        if isinstance(item, FunctionCall):
            self.call_at[item.call_id] = i
            self.pending[item.call_id] = i
        elif isinstance(item, FunctionCallOutput):
            self._add_output(i, item, items)

    def _add_output(self, i: int, item: FunctionCallOutput, items: list[Item]) -> None:
        call = self.pending.pop(item.call_id, None)
        if call is None:
            self.orphans.add(i)
            return
        while self.starts[-1] > call:  # the call sits in an earlier group: merge so the pair stays whole
            self.starts.pop()
        self.outputs.append(i)
        call_item = items[call]
        outcome = item.outcome
        tool = outcome.tool or (call_item.name if isinstance(call_item, FunctionCall) else "")
        self.tools[i] = tool
        path = outcome.path
        if not path:
            return
        if tool in MUTATING_TOOLS:
            self._writes[path] = self._writes.get(path, 0) + 1
            if outcome.status == "ok":
                self.changed_files.pop(path, None)
                self.changed_files[path] = None
        elif tool == "read_file" and outcome.status == "ok" and outcome.sha:
            self._note_read(i, outcome)

    def _note_read(self, i: int, read: ToolOutcome) -> None:
        key = (read.path, read.offset, read.limit)
        writes = self._writes.get(read.path, 0)
        earlier = self._reads.get(key)
        if earlier and earlier.sha == read.sha and earlier.writes == writes:
            self.superseded[earlier.index] = i
        self._reads[key] = _Read(i, read.sha, writes)
