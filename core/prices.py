"""What DeepSeek bills: USD per 1M tokens, split three ways because that is how it bills: input that
hits the prompt cache (about 1/50 of a miss), input that misses, and output (reasoning included).
They change often (see the notes), so they live in configuration; DEFAULT_PRICES holds DeepSeek's
peak figures as a starting point, and `parse_prices` reads the .env form.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prices:
    """USD per 1M tokens."""

    cache_hit: float
    cache_miss: float
    output: float

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """USD for one response's usage (cached tokens are a part of input tokens, as reported)."""
        misses = max(input_tokens - cached_tokens, 0)
        return (cached_tokens * self.cache_hit + misses * self.cache_miss + output_tokens * self.output) / 1e6


_FLASH = Prices(cache_hit=0.006, cache_miss=0.30, output=1.20)
DEFAULT_PRICES: dict[str, Prices] = {
    "deepseek-flash": _FLASH,
    "deepseek-v4-flash": _FLASH,
    "deepseek-v4-pro": Prices(cache_hit=0.044, cache_miss=1.32, output=3.96),
}


def parse_prices(text: str) -> dict[str, Prices]:
    """Read 'model=hit/miss/output;model=...' (the proposed AGENT_PRICES form) into a table."""
    table: dict[str, Prices] = {}
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        model, _, figures = entry.partition("=")
        values = [float(v) for v in figures.split("/")]
        if not model.strip() or len(values) != 3:
            raise ValueError(f"price entry {entry!r} is not model=hit/miss/output")
        table[model.strip()] = Prices(*values)
    return table
