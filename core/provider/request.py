"""Building the request body, with the history in the order every server accepts.

DeepSeek maps Responses items onto chat messages and rejects assistant text between function
calls and their outputs. So each model turn is replayed as: its reasoning items, its text, all
its function calls, then all their outputs (in call order).
"""

from __future__ import annotations

from typing import Any

from core.config import Settings
from core.session.items import AssistantMessage, FunctionCall, FunctionCallOutput, Item, Reasoning

_MODEL_SIDE = (Reasoning, AssistantMessage, FunctionCall)


def replay_order(items: list[Item]) -> list[Item]:
    """Regroup each model turn (see the module docstring); other items keep their places."""
    ordered: list[Item] = []
    turn: list[Item] = []
    outputs: list[FunctionCallOutput] = []

    def close_turn() -> None:
        rank = {Reasoning: 0, AssistantMessage: 1, FunctionCall: 2}
        ordered.extend(sorted(turn, key=lambda item: rank[type(item)]))
        position = {item.call_id: i for i, item in enumerate(turn) if isinstance(item, FunctionCall)}
        ordered.extend(sorted(outputs, key=lambda out: position.get(out.call_id, len(position))))
        turn.clear()
        outputs.clear()

    for item in items:
        if isinstance(item, FunctionCallOutput):
            outputs.append(item)
            continue
        if outputs or not isinstance(item, _MODEL_SIDE):
            close_turn()
        if isinstance(item, _MODEL_SIDE):
            turn.append(item)
        else:
            ordered.append(item)
    close_turn()
    return ordered


def build_body(settings: Settings, instructions: str, items: list[Item], tools: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": settings.model,
        "instructions": instructions,
        "input": [item.to_input() for item in replay_order(items)],
        "tools": tools,
        "tool_choice": "auto",
        "store": False,  # DeepSeek is stateless anyway; never rely on server-side history
        "max_output_tokens": settings.max_output_tokens,
    }
    if settings.temperature:
        body["temperature"] = float(settings.temperature)
    effort = settings.reasoning_effort.strip().lower()
    if effort and effort != "default":
        body["reasoning"] = {"effort": effort}
    if "api.openai.com" in settings.base_url:
        # With store=false OpenAI only replays reasoning it can decrypt.
        body["include"] = ["reasoning.encrypted_content"]
    return body
