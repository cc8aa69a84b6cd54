"""Token estimates: a fast local guess, scaled by what the provider reports.

The agent must size a request before sending it and ships no DeepSeek tokenizer, so it guesses:
ASCII ≈ 4 characters a token, CJK ≈ 1, other scripts ≈ 2, plus a fixed cost per item for the JSON
and role markers around it. `Calibration` then scales every estimate by the provider's own count
of the last request.
"""

from __future__ import annotations

from ..session.items import FunctionCall, FunctionCallOutput, Item, Reasoning

ITEM_OVERHEAD = 8  # JSON keys, role and type markers around one input item
_MIN_RATIO, _MAX_RATIO = 0.25, 4.0


def text_tokens(text: str) -> int:
    """Estimated tokens of a string, in C-speed steps only (no per-character Python loop).

    Non-ASCII characters are weighed by their UTF-8 length, (bytes − 1) / 2 each: a CJK character
    (3 bytes) counts 1 token, Cyrillic, Greek or accented Latin (2 bytes) half a token.
    """
    if text.isascii():
        return (len(text) + 3) // 4
    ascii_chars = len(text.encode("ascii", "ignore"))
    other_bytes = len(text.encode("utf-8", "surrogatepass")) - ascii_chars
    other_chars = len(text) - ascii_chars
    return (ascii_chars + 3) // 4 + (other_bytes - other_chars + 1) // 2


def item_tokens(item: Item) -> int:
    """Estimated tokens of one input item as `to_input()` sends it (its outcome is never sent)."""
    if isinstance(item, FunctionCall):
        body = text_tokens(item.arguments) + text_tokens(item.call_id) + text_tokens(item.name)
    elif isinstance(item, FunctionCallOutput):
        body = text_tokens(item.output) + text_tokens(item.call_id)
    elif isinstance(item, Reasoning):
        body = (
            text_tokens(item.id + item.summary)
            + text_tokens(item.text)
            + text_tokens(item.encrypted_content or "")
        )
    else:
        body = text_tokens(item.text)
    return body + ITEM_OVERHEAD


class Calibration:
    """The ratio between the provider's token count and the local estimate.

    Spreading the error of one request over its items in proportion to their estimates gives every
    item the same factor, reported / estimated, so one ratio is the whole calibration; items that
    are new since then are scaled by it too.
    """

    def __init__(self) -> None:
        self.ratio = 1.0

    def update(self, estimated_raw: int, reported: int) -> None:
        if estimated_raw > 0 and reported > 0:
            self.ratio = min(max(reported / estimated_raw, _MIN_RATIO), _MAX_RATIO)

    def scale(self, raw: int) -> int:
        return round(raw * self.ratio)

    def unscale(self, tokens: int) -> int:
        """The raw estimate that calibrates to `tokens` (to compare thresholds in raw units)."""
        return int(tokens / self.ratio)
