"""The shaping decisions that persist between turns, and the request they project.

Hysteresis lives here: once an old item has been replaced or a span dropped, later turns replay
the same decision with the very same stand-in objects, so the serialised prefix of the request
does not change until the next time pressure forces a rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..session.items import Item
from .index import JournalIndex
from .tokens import item_tokens

Costed = tuple[Item, int]  # an item the shaper made, with its raw tokens


@dataclass
class Head:
    """What stands in for the dropped prefix, in request order."""

    users: list[Costed] = field(default_factory=list)  # the pinned user messages from the dropped span
    summary: Costed | None = None
    ledger: Costed | None = None

    def parts(self) -> list[Costed]:
        return [*self.users, *(part for part in (self.summary, self.ledger) if part)]


@dataclass
class Plan:
    """Decisions about the journal: stand-ins for single items, and a dropped prefix.

    Non-user items before `boundary` are left out; `head` stands in for them (the pinned user
    messages among them, the summary, the ledger), in that order.
    """

    replaced: dict[int, Costed] = field(default_factory=dict)  # journal index -> stand-in
    boundary: int = 0
    head: Head = field(default_factory=Head)
    saved: int = 0  # raw tokens saved by the stand-ins at or after boundary

    def replace(self, index: JournalIndex, i: int, item: Item) -> int:
        """Put `item` in place of journal item `i`; returns the raw tokens saved."""
        raw = item_tokens(item)
        saving = self.cost(index, i) - raw
        self.replaced[i] = (item, raw)
        self.saved += saving
        return saving

    def cost(self, index: JournalIndex, i: int) -> int:
        """Raw tokens journal item `i` takes in the request now."""
        stand_in = self.replaced.get(i)
        return stand_in[1] if stand_in else index.raw[i]

    def advance(self, index: JournalIndex, boundary: int, head: Head) -> None:
        """Drop everything before `boundary` and put `head` in its place."""
        for i in [i for i in self.replaced if i < boundary]:
            self.saved -= index.raw[i] - self.replaced.pop(i)[1]
        self.boundary, self.head = boundary, head

    def raw_total(self, index: JournalIndex) -> int:
        """Raw tokens of the projected items (without instructions)."""
        unpaired = sum(index.raw[i] for i in index.unpaired() if i >= self.boundary)
        kept = sum(index.raw[self.boundary :])
        return sum(raw for _, raw in self.head.parts()) + kept - self.saved - unpaired

    def build(self, items: list[Item], index: JournalIndex) -> list[Item]:
        """The projected request items: head, then the journal from `boundary` with stand-ins."""
        return [item for item, _ in self.head.parts()] + self.span(items, index, self.boundary, index.size)

    def span(self, items: list[Item], index: JournalIndex, start: int, end: int) -> list[Item]:
        """Journal items [start, end) as the request has them: stand-ins in place, unpaired ones left out."""
        part = items[start:end]
        for i, (item, _) in self.replaced.items():
            if start <= i < end:
                part[i - start] = item
        unpaired = index.unpaired()
        if unpaired:
            part = [item for i, item in enumerate(part, start) if i not in unpaired]
        return part

    def protected_start(self, index: JournalIndex, tokens: int, min_groups: int) -> int:
        """Where the protected recent window begins: the newest turns within `tokens` raw tokens,
        and never fewer than `min_groups` turns (so the latest calls keep their results)."""
        end, start = index.size, index.size
        for n, group in enumerate(reversed(index.starts)):
            if group < self.boundary:
                break
            tokens -= sum(self.cost(index, i) for i in range(group, end))
            if tokens < 0 and n >= min_groups:
                break
            start = end = group
        return start


@dataclass(frozen=True)
class Action:
    """What one layer did, for the notice the loop shows."""

    what: str
    saved: int  # raw tokens


@dataclass
class Pass:
    """One shaping event: the plan it extends and how far it has to go (all in raw tokens)."""

    items: list[Item]
    index: JournalIndex
    plan: Plan
    fixed: int  # instructions and tool schemas: sent every time, never shaped
    goal: int
    protected: int  # journal index where the protected recent window starts
    total: int = 0  # the whole request now

    def __post_init__(self) -> None:
        self.recount()

    def recount(self) -> None:
        self.total = self.fixed + self.plan.raw_total(self.index)

    def over(self) -> bool:
        return self.total > self.goal

    def replace(self, i: int, item: Item) -> int:
        saving = self.plan.replace(self.index, i, item)
        self.total -= saving
        return saving
