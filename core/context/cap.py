"""Layer (a): the per-result budget, applied once when a tool result enters the journal.

One result must never crowd out the conversation, but cutting silently makes the model guess, so
the cut always says what was left out and the exact call that shows it (rasbt/mini-coding-agent
does the same at its single tool exit).
"""

from __future__ import annotations

from ..session.items import ToolOutcome
from .tokens import text_tokens

_POINTER_TOKENS = 48  # room kept for the note that replaces the cut text
# Characters per token the pruner may count on: ASCII output runs about 4, so 3 leaves room for
# symbols and non-ASCII text; whatever still overshoots is cut here, with a pointer.
_PRUNE_CHARS_PER_TOKEN = 3


def prune_budget_chars(max_tokens: int) -> int:
    """The pruner's budget for a result capped at `max_tokens`: one budget, so the pruner's
    family-aware fitter does the cutting instead of a blunt cut after it."""
    return max(max_tokens - _POINTER_TOKENS, 0) * _PRUNE_CHARS_PER_TOKEN


def cap_result(text: str, tool_name: str, outcome: ToolOutcome, max_tokens: int) -> str:
    """`text` unchanged when it fits `max_tokens`, else cut to fit with a re-read pointer.

    read_file keeps its first lines and names the offset to continue from (the outcome's offset is
    the 1-based first line, limit a line count); other tools keep head and tail, where errors and
    summaries tend to be, and point at `read_output` when the runner archived the full output.
    """
    if tool_name == "read_file":
        keep = _room(text, max_tokens)
        return text if keep is None else _cap_read(text, outcome, keep)
    archive = outcome.archive
    return cut_middle(
        text,
        max_tokens,
        f"full output: read_output id={archive}" if archive else "narrow the request to see it",
    )


def cut_middle(text: str, max_tokens: int, how: str) -> str:
    """`text` cut to about `max_tokens` by dropping its middle, with a note ending in `how`."""
    keep = _room(text, max_tokens)
    if keep is None:
        return text
    head = _head(text, keep // 3)
    tail = _tail(text, keep - len(head))
    lines = text.count("\n") - head.count("\n") - tail.count("\n")
    omitted = len(text) - len(head) - len(tail)
    return (
        f"{head}\n[… {lines} lines ({omitted} characters) omitted to fit the context budget — {how}]\n{tail}"
    )


def _room(text: str, max_tokens: int) -> int | None:
    """How many characters of `text` fit beside the note, or None when all of it fits."""
    total = text_tokens(text)
    return None if total <= max_tokens else max(len(text) * (max_tokens - _POINTER_TOKENS) // total, 0)


def _cap_read(text: str, read: ToolOutcome, keep: int) -> str:
    head = _head(text, keep)
    shown = head.count("\n")
    if not head.endswith("\n") or shown == 0:
        return f"{head}\n[… {len(text) - len(head)} more characters omitted to fit the context budget]"
    offset = read.offset if isinstance(read.offset, int) else 1
    limit = read.limit
    rest = f" limit={limit - shown}" if isinstance(limit, int) else ""
    return (
        f"{head}[… truncated to fit the context budget after {shown} lines — continue with "
        f"read_file path={read.path or '?'} offset={offset + shown}{rest}]"
    )


def _head(text: str, chars: int) -> str:
    """The first `chars` characters, ending at a line break when one is near."""
    chunk = text[:chars]
    cut = chunk.rfind("\n")
    return chunk[: cut + 1] if cut >= len(chunk) // 2 else chunk


def _tail(text: str, chars: int) -> str:
    """The last `chars` characters, starting after a line break when one is near."""
    if chars <= 0:
        return ""
    chunk = text[-chars:]
    cut = chunk.find("\n")
    return chunk[cut + 1 :] if 0 <= cut < len(chunk) // 2 else chunk
