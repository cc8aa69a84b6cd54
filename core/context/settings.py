"""How much of the model's window a request may use, and where shaping starts and stops.

Every threshold is a fraction of one number, the effective input budget, so the same settings work
for a 1M-token DeepSeek model and a 16k-token local model alike: reserves and protected windows
scale down with the window instead of being fixed token counts that a small model cannot afford.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ContextSettings:
    """Context budget knobs. Fractions are of `budget` unless said otherwise.

    `working_budget` caps the budget below the window on purpose: models answer worse long before
    their advertised 1M tokens, and on a stateless API every cache miss re-bills the whole prefix
    (128k tokens is DeepSeek's previous native window, well exercised; a miss of it costs ~$0.04
    on flash, of 1M ~$0.30). None means "the window is the only limit".
    """

    context_window: int = 1_000_000
    max_output_tokens: int = 32_768
    working_budget: int | None = 128_000
    trigger: float = 0.8  # shape only when the request grows past this...
    target: float = 0.5  # ...and then bring it down to this, so the next rewrite is many turns away
    safety_margin: float = 0.1  # of the input room: the local estimate's error before calibration
    protect: float = 0.2  # newest turns kept verbatim (at least the last two)
    user_cap: float = 0.25  # all pinned user messages together
    result_cap: float = 0.12  # one tool result at ingestion (15k tokens at 128k, like read_file's cap)
    summary_cap: float = 0.05  # one compaction summary
    clear_min_tokens: int = 64  # results smaller than a placeholder's worth are never cleared

    def __post_init__(self) -> None:
        if self.context_window <= 0 or self.max_output_tokens < 0:
            raise ValueError("context_window must be positive and max_output_tokens not negative")
        if not 0 < self.target < self.trigger <= 1:
            raise ValueError(
                f"need 0 < target < trigger <= 1, got target={self.target} trigger={self.trigger}"
            )

    @property
    def budget(self) -> int:
        """Effective input budget: window − reserved output − safety margin, capped by working_budget."""
        reserve = min(self.max_output_tokens, self.context_window // 4)  # a small window keeps room to read
        room = int((self.context_window - reserve) * (1 - self.safety_margin))
        if self.working_budget:
            room = min(room, self.working_budget)
        return max(room, 1)

    def share(self, fraction: float) -> int:
        """`fraction` of the budget in tokens."""
        return int(self.budget * fraction)

    @property
    def result_cap_tokens(self) -> int:
        """The `max_tokens` the tool runner should pass to `cap_result`."""
        return max(self.share(self.result_cap), 256)


def from_settings(settings: Any) -> ContextSettings:
    """The knobs that `core.config.Settings` exposes in `.env` (the rest keep their defaults)."""
    return ContextSettings(
        context_window=settings.context_window,
        max_output_tokens=settings.max_output_tokens,
        working_budget=settings.working_budget or None,
        trigger=settings.context_trigger,
        target=settings.context_target,
    )
