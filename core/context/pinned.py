"""Pinned user messages: never dropped with old turns, kept verbatim up to a generous cap.

What the user said is the task; losing it is the commonest way a long session drifts. When the
messages together outgrow the cap, the newest are kept (the ledger still carries the task and
every stated constraint), and a single message over the cap keeps its head and tail.
"""

from __future__ import annotations

from bisect import bisect_left

from ..session.items import UserMessage
from .cap import cut_middle
from .plan import Costed, Pass
from .tokens import item_tokens

_MIN_PART = 64  # a cut message shorter than this says nothing useful


def cap_user(item: UserMessage, max_tokens: int) -> UserMessage:
    """The message cut to `max_tokens` in the middle (the journal keeps it whole)."""
    return UserMessage(cut_middle(item.text, max_tokens, "the session journal keeps the whole message"))


def pin_users(p: Pass, boundary: int, cap: int) -> list[Costed]:
    """The user messages before `boundary` that still fit `cap` with those after it, oldest first."""
    users = p.index.users
    split = bisect_left(users, boundary)
    room = cap - sum(p.plan.cost(p.index, i) for i in users[split:])
    kept: list[Costed] = []
    for i in reversed(users[:split]):
        cost = p.plan.cost(p.index, i)
        if cost <= room:
            stand_in = p.plan.replaced.get(i)
            kept.append(stand_in or (p.items[i], cost))
            room -= cost
            continue
        if room >= _MIN_PART:
            item = p.items[i]
            assert isinstance(item, UserMessage)
            cut = cap_user(item, room)
            kept.append((cut, item_tokens(cut)))
        break
    return kept[::-1]
