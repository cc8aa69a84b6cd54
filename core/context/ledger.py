"""The task ledger: the few facts a long task must not lose when its old turns are dropped.

Task, the constraints the user stated, files changed and the current step, in one short, visibly
marked message. It is rebuilt only when a drop happens, never per turn, so it does not disturb
the cached prefix between rewrites.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..session.items import AssistantMessage, FunctionCall, Item, UserMessage
from .index import JournalIndex
from .placeholders import LEDGER_MARK, short

_CONSTRAINT = re.compile(
    r"\b(?:never|always|don'?t|do not|must|mustn'?t|only|avoid|without|instead of|prefer|make sure|stop)\b"
    r"|不要|不能|不许|必须|务必|禁止|只能|只用|一定要|别",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")
_MAX_CONSTRAINTS = 16  # the first and the last eight: the ones that set the task and the latest corrections
_MAX_FILES = 30
_STEP_LOOKBACK = 200


def constraints(texts: Iterable[str]) -> list[str]:
    """Sentences of the user's messages that state a rule ("use pnpm, never npm"), in order, once each."""
    found: dict[str, None] = {}
    for text in texts:
        for sentence in _SENTENCE.split(text):
            if _CONSTRAINT.search(sentence):
                found.setdefault(short(sentence, 200), None)
    rules = list(found)
    half = _MAX_CONSTRAINTS // 2
    return rules if len(rules) <= _MAX_CONSTRAINTS else rules[:half] + rules[-half:]


def build_ledger(items: list[Item], index: JournalIndex) -> UserMessage:
    """The ledger message for the journal as it stands."""
    user_texts = [item.text for i in index.users if isinstance(item := items[i], UserMessage)]
    lines = [LEDGER_MARK]
    if user_texts:
        lines.append(f"Task: {short(user_texts[0], 300)}")
    rules = constraints(user_texts)
    if rules:
        lines += ["Constraints the user stated:", *(f"- {rule}" for rule in rules)]
    files = list(index.changed_files)
    if files:
        more = f" (and {len(files) - _MAX_FILES} earlier)" if len(files) > _MAX_FILES else ""
        lines.append(f"Files changed so far: {', '.join(files[-_MAX_FILES:])}{more}")
    words, call = _current_step(items, index.size)
    if words:
        lines.append(f"Current step: {words}")
    if call:
        lines.append(f"Last action: {call}")
    return UserMessage("\n".join(lines))


def _current_step(items: list[Item], size: int) -> tuple[str, str]:
    """The model's latest words and its latest call: what it was doing when the turns were dropped."""
    words = call = ""
    for item in items[max(size - _STEP_LOOKBACK, 0) : size][::-1]:
        if isinstance(item, AssistantMessage) and item.text.strip() and not words:
            words = short(item.text, 300)
        elif isinstance(item, FunctionCall) and not call:
            call = f"{item.name} {short(item.arguments, 160)}"
        if words and call:
            break
    return words, call
