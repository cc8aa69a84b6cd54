"""What a session costs: per-model prices and the running total of reported usage.

Prices are USD per 1M tokens and split three ways because that is how DeepSeek bills: input that
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


@dataclass
class UsageTotals:
    """Reported usage summed over a session, with its cost when the model's prices are known."""

    prices: Prices | None = None
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0

    def add(
        self, input_tokens: int, cached_tokens: int, output_tokens: int, reasoning_tokens: int = 0
    ) -> float:
        """Count one response; returns its cost (0.0 when prices are unknown)."""
        self.input_tokens += input_tokens
        self.cached_tokens += cached_tokens
        self.output_tokens += output_tokens
        self.reasoning_tokens += reasoning_tokens
        cost = self.prices.cost(input_tokens, cached_tokens, output_tokens) if self.prices else 0.0
        self.cost_usd += cost
        return cost

    @property
    def cache_hit_share(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0
