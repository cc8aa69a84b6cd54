"""Layer (c): repeats judged by their result, not by their command text.

A repeated call is run: a file polled with `cat` may have grown, a server may have started, a test
may pass after an edit the agent cannot see. What is judged is what came back. When the cleaned
output equals the last run of the same call (timings, dates, temp paths and addresses normalised),
the model gets one line pointing at the earlier result instead of the same text again. When the
same call fails with the same output three times in a row, with no other call or user message in
between, the model is stuck (a small model ran `pytest -q` fifty times on unchanged files): the
task stops with a clear message. A call that succeeds with the same output gets a little more room
(polling a log or a starting server is ordinary work), then stops the same way (a small model
called the same read_output 69 times).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..session.items import FunctionCall, FunctionCallOutput, Item, UserMessage
from .calls import call_key

STUCK_AFTER = 3  # the same failing output this many times in a row stops the task
STUCK_AFTER_SUCCESS = 6  # the same successful output this many times in a row stops it too

# What differs between two runs that did the same thing.
_VOLATILE = (
    (re.compile(r"^\[pruned [^\n]*\]$", re.M), "[pruned]"),  # our stamp: sizes and archive id
    (re.compile(r"\bout-\d+\b"), "out-N"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<date>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|secs|seconds|µs|us|ns|min)\b"), "<duration>"),
    (re.compile(r"(?:/tmp|/var/tmp|/var/folders|\\Temp|\\AppData\\Local\\Temp)[/\\][^\s'\":]+"), "<tmp>"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "<addr>"),
    (re.compile(r"==\d+=="), "==<pid>=="),
    (re.compile(r"\b(?:pid|PID|process) ?[=:]? ?\d+\b"), "<pid>"),
)


@dataclass
class Repeat:
    """The verdict on one call's result."""

    text: str | None = None  # the line to give the model instead of the output, when it repeats
    stuck: bool = False  # the same output STUCK_AFTER (or STUCK_AFTER_SUCCESS) times in a row: stop the task
    message: str = ""  # what to tell the user when stuck


def fingerprint(text: str) -> str:
    """A hash of the output with what varies between identical runs normalised away."""
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return hashlib.sha256(text.strip().encode("utf-8", "surrogatepass")).hexdigest()[:32]


def judge_repeat(history: list[Item], call: FunctionCall, output: FunctionCallOutput) -> Repeat:
    """Compare `output` with the last result of the same call since the user last spoke.

    `history` is the journal so far; it holds `call` itself (skipped) and not yet `output`. The
    output's outcome gets its fingerprint, so the next repeat can be compared with it.
    """
    mark = fingerprint(output.output)
    output.outcome.fingerprint = mark
    key = call_key(call)
    outputs = {i.call_id: i for i in history if isinstance(i, FunctionCallOutput)}
    in_a_row = 1  # the same output and status, with nothing in between, counting this one
    adjacent = True
    previous: FunctionCallOutput | None = None
    for item in reversed(history):
        if isinstance(item, UserMessage):
            break
        if not isinstance(item, FunctionCall) or item.call_id == call.call_id:
            continue
        earlier = outputs.get(item.call_id)
        same = call_key(item) == key and earlier is not None and earlier.outcome.fingerprint == mark
        if previous is None and call_key(item) == key:
            previous = earlier
        if adjacent and same and _failed(earlier) == _failed(output):
            in_a_row += 1
        else:
            adjacent = False
        if not adjacent and previous is not None:
            break
    if previous is None or previous.outcome.fingerprint != mark:
        return Repeat()
    text = f"same output as {_name(previous)}{_exit(output)}"
    failing = _failed(output)
    if in_a_row >= (STUCK_AFTER if failing else STUCK_AFTER_SUCCESS):
        what = "the same failing output" if failing else "the same output"
        return Repeat(text, True, f"{call.name} returned {what} {in_a_row} times in a row with "
                                  "nothing changed in between; stopping so the model does not burn more time. "
                                  "Give it a hint or change the task.")
    return Repeat(text)


def _failed(item: FunctionCallOutput | None) -> bool:
    return item is not None and item.outcome.status == "error"


def _name(previous: FunctionCallOutput) -> str:
    archive = previous.outcome.archive
    return archive if archive else f"the previous identical call ({previous.call_id})"


def _exit(output: FunctionCallOutput) -> str:
    code = output.outcome.exit_code
    return f" (exit {code})" if code is not None else ""
