"""Context budget and read-time shaping: what of the journal each request carries.

The journal is never altered. Before every request the loop asks for a projection of it that
fits the budget, keeps calls paired with their outputs, keeps what the user said, and changes as
little as possible from the previous request so the provider's prompt cache keeps hitting.

What the loop does:

    manager = ContextManager(settings, summarize=ask_model_to_summarise, tools_json=json.dumps(tools))
    shaped = manager.shape(journal, instructions)          # before every request
    send([item.to_input() for item in shaped.items])        # show shaped.actions as "context" notices
    manager.calibrate(shaped, usage.input_tokens)           # after every response that reports usage
    # on an error where is_context_overflow(code, type, message): reshape once with force=True and
    # retry; if that overflows too, stop the turn gracefully.

    # the tool runner, on every result (after the pruner):
    output = cap_result(text, tool_name, outcome, settings.result_cap_tokens)
    # after running each call: the same output as its last run becomes one line; stuck stops the task
    repeat = judge_repeat(journal, call, output_item)

    manager.compact_now(journal, instructions)              # /compact
    manager.breakdown(journal, instructions)                # /context: tokens by source
    UsageTotals(prices).add(...)                            # session cost from reported usage

`summarize(items) -> str` is given the last request up to the end of the turns being dropped
(pinned user messages, previous summary and ledger, then those turns). It should send them with the
same instructions and tools, then a user message SUMMARY_PROMPT, and return the answer's text: being
a prefix of the request just sent, it is served from the provider's prompt cache. When the user
cancelled it, it should raise CompactionCancelled: not a failure, and nothing is dropped. Any other
exception, or an empty answer, is a failure: the turns are kept (dropping them unsummarised would
lose them for good) and the next rewrite tries again; only overflow recovery (force=True) drops
without a summary. After three failures automatic compaction stops trying and drops without one;
/compact still tries, and changes nothing when the summary fails.

`journal` must be the session's own append-only list (or a copy holding the same item objects):
decisions are keyed by position and replayed each turn; another list starts the manager over.
"""

from core.prices import DEFAULT_PRICES, Prices, parse_prices

from .cap import cap_result
from .compact import SUMMARY_PROMPT, CompactionCancelled, Summarizer
from .manager import ContextManager, Shaped
from .placeholders import LEDGER_MARK, SUMMARY_MARK
from .repeats import Repeat, judge_repeat
from .settings import ContextSettings
from .tokens import item_tokens, text_tokens
from .usage import UsageTotals

__all__ = [
    "DEFAULT_PRICES",
    "LEDGER_MARK",
    "SUMMARY_MARK",
    "SUMMARY_PROMPT",
    "CompactionCancelled",
    "ContextManager",
    "ContextSettings",
    "Prices",
    "Repeat",
    "Shaped",
    "Summarizer",
    "UsageTotals",
    "cap_result",
    "item_tokens",
    "judge_repeat",
    "parse_prices",
    "text_tokens",
]
