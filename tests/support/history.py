"""Checks on the input items of a request, as the model receives them."""

from __future__ import annotations


def pairs_valid(items: list[dict]) -> bool:
    """Whether every function call has its output and every output its call."""
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    return sorted(calls) == sorted(outputs)
