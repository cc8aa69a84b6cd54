"""Layer (e), with (f): drop the old turns outside the protected window, all at once.

Turns go as whole groups (reasoning, text, calls and their outputs together), so no call is ever
sent without its output. Dropping from the front changes everything after the pinned head, so the
prompt cache cannot survive a drop whatever its size; a drop therefore takes every turn outside
the protected window in one step, which buys the longest quiet stretch before the next one.
What stands in for the dropped turns is rebuilt here: the pinned user messages, the summary of
the span when a summariser is available, and the task ledger.

A drop is replayed on every later turn, so dropping without a summary loses the span for good:
when the summary fails (or the user cancels it) the turns are kept and the earlier layers' result
stands, and the next rewrite tries again. Only overflow recovery (a request that does not fit at
all is worse than a lost span) and a compactor that gave up drop without one.
"""

from __future__ import annotations

from bisect import bisect_left

from ..i18n import _
from ..session.items import Item
from .compact import MAX_FAILURES, CompactionCancelled, Compactor
from .ledger import build_ledger
from .pinned import pin_users
from .plan import Action, Head, Pass
from .tokens import item_tokens


def drop_old_turns(
    p: Pass,
    user_cap: int,
    summary_cap: int,
    compactor: Compactor | None,
    *,
    forced: bool = False,
    manual: bool = False,
) -> Action | None:
    """Move the boundary to the protected window; None when no turn lies before it.

    With a compactor the span goes only with its summary, except when `forced` or when this
    failure exhausted the compactor; an exhausted one is not asked again. `manual` (/compact)
    asks even an exhausted compactor and never drops without a summary.
    """
    old, boundary, starts = p.plan.boundary, p.protected, p.index.starts
    turns = bisect_left(starts, boundary) - bisect_left(starts, old)
    if turns <= 0:
        return None
    kept = _("{problem}; nothing changed") if manual else _("{problem}; kept the turns")
    summary, dropped, note = p.plan.head.summary, _("dropped {turns} old turns"), ""
    if compactor is None:
        if manual:
            return Action(_("nothing compacted: no summariser"), 0)
    elif compactor.exhausted and not manual:
        dropped = _("dropped {turns} old turns (no summary: compaction gave up after {most} failures)")
    else:
        try:
            made, note = compactor.summarize((old, boundary), _span(p, boundary), summary_cap)
        except CompactionCancelled:
            return Action(kept.format(problem=_("compaction cancelled")), 0)
        if made:
            summary, dropped = (made, item_tokens(made)), _("dropped {turns} old turns, summarised")
        elif manual or not (forced or compactor.exhausted):
            return Action(kept.format(problem=note), 0)
        else:
            dropped = _("dropped {turns} old turns (no summary: {problem})")
    ledger = build_ledger(p.items, p.index)
    before = p.total
    p.plan.advance(
        p.index, boundary, Head(pin_users(p, boundary, user_cap), summary, (ledger, item_tokens(ledger)))
    )
    p.recount()
    return Action(dropped.format(turns=turns, most=MAX_FAILURES, problem=note), before - p.total)


def _span(p: Pass, boundary: int) -> list[Item]:
    """What the summariser reads: the last request up to the end of the dropped turns (pinned user
    messages, previous summary and ledger, then the turns). Being a prefix of the request just
    sent, it is served from the provider's prompt cache when the summariser sends it the same way."""
    head = [item for item, _ in p.plan.head.parts()]
    return head + p.plan.span(p.items, p.index, p.plan.boundary, boundary)
