"""Where the tokens of a request go, by source, for the /context command."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ..session.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    Summary,
    UserMessage,
)
from .placeholders import LEDGER_MARK
from .tokens import item_tokens, text_tokens


def breakdown(
    items: list[Item], instructions: str, tools_json: str = "", scale: Callable[[int], int] = int
) -> dict[str, int]:
    """Tokens by source: instructions, tools, user messages, ledger, summaries, assistant text,
    reasoning, tool calls, and tool results per tool ("tool results: read_file"). `scale` turns
    local estimates into calibrated tokens."""
    raw: Counter[str] = Counter(instructions=text_tokens(instructions))
    if tools_json:
        raw["tools"] = text_tokens(tools_json)
    names = {item.call_id: item.name for item in items if isinstance(item, FunctionCall)}
    for item in items:
        raw[_source(item, names)] += item_tokens(item)
    return {source: scale(tokens) for source, tokens in raw.items()}


def _source(item: Item, names: dict[str, str]) -> str:
    if isinstance(item, UserMessage):
        return "ledger" if item.text.startswith(LEDGER_MARK) else "user messages"
    if isinstance(item, Summary):
        return "summaries"
    if isinstance(item, AssistantMessage):
        return "assistant text"
    if isinstance(item, Reasoning):
        return "reasoning"
    if isinstance(item, FunctionCall):
        return "tool calls"
    assert isinstance(item, FunctionCallOutput)
    return f"tool results: {item.outcome.tool or names.get(item.call_id, 'unknown')}"
