"""Layer (f): compaction, the model's own summary standing in for the turns that are dropped.

The summariser is injected (the loop passes a function that asks the model with SUMMARY_PROMPT),
so this module needs no network. A summary is cached by the span it covers, so a span is never
summarised twice; after three failures automatic compaction stops trying for the session (a
failing summariser would otherwise add a slow, billed call to every rewrite). A summariser that was
cancelled by the user raises CompactionCancelled: that says nothing about the summariser, so it is
not counted as a failure.
"""

from __future__ import annotations

from collections.abc import Callable

from ..i18n import _
from ..session.items import Item, Summary
from .cap import cut_middle
from .placeholders import SUMMARY_MARK

Summarizer = Callable[[list[Item]], str]

SUMMARY_PROMPT = (
    "The turns above are about to be removed from your context to save space; write the summary that "
    "will stand in for them. Keep: the user's intent and every instruction or constraint they gave, in "
    "their words; decisions made and why; errors met and whether they were solved; files created or "
    "changed and how; what is still open; the exact next step. Be factual and brief, no preamble."
)
MAX_FAILURES = 3


class CompactionCancelled(Exception):
    """Raised by a summariser when the user cancelled it: not a failure, and nothing is dropped."""


class Compactor:
    """Runs the summariser: cached by span, counting failures."""

    def __init__(self, summarize: Summarizer) -> None:
        self._summarize = summarize
        self._cache: dict[tuple[int, int], Summary] = {}
        self.failures = 0

    @property
    def exhausted(self) -> bool:
        return self.failures >= MAX_FAILURES

    def forget(self) -> None:
        """Drop cached summaries (their spans index a journal that is no longer the one shaped)."""
        self._cache.clear()

    def summarize(
        self, span: tuple[int, int], items: list[Item], max_tokens: int
    ) -> tuple[Summary | None, str]:
        """The summary of `items` (the journal span `span`), or None and why it failed.

        Raises CompactionCancelled, uncounted, when the summariser does."""
        cached = self._cache.get(span)
        if cached is not None:
            return cached, ""
        try:
            text = self._summarize(items).strip()
            if not text:
                raise ValueError(_("the summary came back empty"))
        except CompactionCancelled:
            raise
        except Exception as exc:  # the summariser talks to a model: anything may go wrong
            self.failures = min(self.failures + 1, MAX_FAILURES)  # /compact may try on after that
            return None, _("compaction failed ({count}/{most}): {problem}").format(
                count=self.failures, most=MAX_FAILURES, problem=exc)
        summary = Summary(
            f"{SUMMARY_MARK}\n{cut_middle(text, max_tokens, 'summary cut to fit')}"
        )
        self._cache[span] = summary
        return summary, ""
