"""Layer (c): stop a model that repeats the same look while nothing changes.

A model stuck in a loop re-issues an identical read and gets an identical result, filling the
context with copies. Answering the repeat with an error costs a few tokens and usually breaks the
loop. Only a repeat of a state-free call is refused (read_file, list_files, search, read_output,
and shell commands that obviously just look): its result cannot differ. A call that may change
state or depends on the outside world (a write, `npm test` after a flaky failure, `curl` polling a
server that is starting) may legitimately be repeated, so it never is refused. Only the last two
calls are compared, and any user message or state-changing call between them clears the
suspicion (a re-read after an edit is legitimate).
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
        # Before the key test: an identical state-changing call is a legitimate re-run, not a loop.
        if changes_state(item):
            return None
        if call_key(item) == key:
            return (
                f"Refused: {call.name} was just called with exactly these arguments and nothing has "
                "changed since, so the result would be the same as the one above. Change course: use "
                "that result, change the arguments, or try a different approach."
            )
        looked += 1
        if looked == _WINDOW:
            return None
    return None
