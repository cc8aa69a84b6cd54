"""What a session costs: the running total of reported usage, priced by `core.prices`."""

from __future__ import annotations

from dataclasses import dataclass

from core.prices import Prices


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
