"""Token estimates, budgets from the model's window, overflow errors and usage cost."""

from __future__ import annotations

import pytest

from core.context import (
    DEFAULT_PRICES,
    ContextSettings,
    Prices,
    UsageTotals,
    item_tokens,
    parse_prices,
    text_tokens,
)
from core.context.tokens import ITEM_OVERHEAD
from core.provider.overflow import is_context_overflow
from core.session.items import FunctionCall, FunctionCallOutput, UserMessage


def test_ascii_is_about_four_characters_a_token() -> None:
    assert text_tokens("") == 0
    assert text_tokens("abcd" * 250) == 250


def test_a_chinese_heavy_session_is_counted_about_one_token_a_character() -> None:
    chinese = "请把解析器移植到Rust，并且不要修改公共接口。" * 100  # 23 characters, 3 of them ASCII
    assert text_tokens(chinese) == pytest.approx(2_000 + 3 * 100 / 4, rel=0.02)
    session = [UserMessage(chinese), FunctionCallOutput("c1", "文件内容：" * 400)]
    assert sum(map(item_tokens, session)) == pytest.approx(2_075 + 2_000 + 2 * ITEM_OVERHEAD + 1, rel=0.02)
    assert text_tokens(chinese) > 3 * text_tokens("x" * len(chinese))  # far denser than ASCII


def test_other_scripts_count_half_a_token_a_character() -> None:
    assert text_tokens("привет" * 100) == 300


def test_every_item_pays_its_json_overhead() -> None:
    assert item_tokens(FunctionCall("c", "f", "")) == ITEM_OVERHEAD + 2
    assert item_tokens(UserMessage("")) == ITEM_OVERHEAD


def test_the_default_budget_is_the_working_budget() -> None:
    settings = ContextSettings()
    assert settings.budget == 128_000
    assert settings.share(settings.trigger) == 102_400 and settings.share(settings.target) == 64_000


def test_without_a_working_budget_the_window_sets_the_budget() -> None:
    settings = ContextSettings(context_window=200_000, max_output_tokens=32_000, working_budget=None)
    assert settings.budget == int(168_000 * 0.9)


def test_a_small_window_reserves_less_output() -> None:
    settings = ContextSettings(context_window=16_384, max_output_tokens=32_768)
    assert settings.budget == int((16_384 - 4_096) * 0.9)
    assert settings.share(settings.protect) < 2_500


@pytest.mark.parametrize("bad", [{"trigger": 0.5, "target": 0.6}, {"target": 0.0}, {"context_window": 0}])
def test_nonsense_settings_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        ContextSettings(**bad)


@pytest.mark.parametrize(
    ("code", "kind", "message"),
    [
        (
            "invalid_request_error",
            "invalid_request_error",
            "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens "
            "(122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
        ),
        (
            "context_length_exceeded",
            "invalid_request_error",
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
        ),
        (
            None,
            "exceed_context_size_error",
            "the request exceeds the available context size, try increasing it",
        ),
        ("400", None, "request (9000 tokens) exceeds the available context size (8192 tokens)"),
    ],
)
def test_context_overflow_errors_are_recognised(code: str | None, kind: str | None, message: str) -> None:
    assert is_context_overflow(code, kind, message)


@pytest.mark.parametrize(
    ("code", "kind", "message"),
    [
        ("rate_limit_exceeded", "rate_limit_error", "Rate limit reached"),
        ("invalid_request_error", "invalid_request_error", "No tool output found for tool call call-a."),
        (None, None, ""),
    ],
)
def test_other_errors_are_not_overflow(code: str | None, kind: str | None, message: str) -> None:
    assert not is_context_overflow(code, kind, message)


def test_cost_splits_cache_hits_misses_and_output() -> None:
    flash = DEFAULT_PRICES["deepseek-flash"]
    assert flash.cost(input_tokens=1_000_000, cached_tokens=900_000, output_tokens=10_000) == pytest.approx(
        0.9 * 0.006 + 0.1 * 0.30 + 0.01 * 1.20
    )
    assert DEFAULT_PRICES["deepseek-v4-flash"] == flash
    assert DEFAULT_PRICES["deepseek-v4-pro"] == Prices(0.044, 1.32, 3.96)


def test_prices_are_read_from_the_env_form() -> None:
    table = parse_prices(" deepseek-flash=0.003/0.15/0.60 ; local=0/0/0;")
    assert table == {"deepseek-flash": Prices(0.003, 0.15, 0.60), "local": Prices(0, 0, 0)}
    with pytest.raises(ValueError):
        parse_prices("deepseek-flash=0.3/1.2")


def test_usage_totals_add_up() -> None:
    totals = UsageTotals(DEFAULT_PRICES["deepseek-v4-pro"])
    first = totals.add(input_tokens=100_000, cached_tokens=0, output_tokens=1_000, reasoning_tokens=600)
    totals.add(input_tokens=110_000, cached_tokens=100_000, output_tokens=1_000)
    assert first == pytest.approx(0.1 * 1.32 + 0.001 * 3.96)
    assert totals.cost_usd == pytest.approx(first + 0.1 * 0.044 + 0.01 * 1.32 + 0.001 * 3.96)
    assert totals.cache_hit_share == pytest.approx(100_000 / 210_000)
    assert UsageTotals().add(10, 0, 10) == 0.0  # unknown prices
