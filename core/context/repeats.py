"""Layer (c): stop a model that repeats the same call while nothing changes.

A model stuck in a loop re-issues an identical call and gets an identical result, filling the
context with copies. Answering the repeat with an error costs a few tokens and usually breaks the
loop. Only the last two calls are compared, and any user message or state-changing call between
them clears the suspicion (a re-read after an edit, or a re-run after a fix, is legitimate).
"""

from __future__ import annotations

from ..items import FunctionCall, Item, UserMessage
from .calls import call_key, changes_state

_WINDOW = 2


def repeated_call_error(history: list[Item], call: FunctionCall) -> str | None:
    """The error to answer `call` with instead of running it, or None to run it.

    `history` is the journal so far; it may already hold `call` itself (matched by call_id and
    skipped) and the other calls of the same turn.
    """
    key = call_key(call)
    looked = 0
    for item in reversed(history):
        if isinstance(item, UserMessage):
            return None
        if not isinstance(item, FunctionCall) or item.call_id == call.call_id:
            continue
        if call_key(item) == key:
            return (
                f"Refused: {call.name} was just called with exactly these arguments and nothing has "
                "changed since, so the result would be the same as the one above. Change course: use "
                "that result, change the arguments, or try a different approach."
            )
        if changes_state(item):
            return None
        looked += 1
        if looked == _WINDOW:
            return None
    return None
