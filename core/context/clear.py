"""Layer (d): clear the content of old tool results, oldest first, down to the target.

Only results that can be got back are cleared (the placeholder names the call that shows them
again); write and edit results are kept, as they are the record of what the agent changed, and
so are results too small to be worth a placeholder.
"""

from __future__ import annotations

from bisect import bisect_left

from ..i18n import _
from ..session.items import FunctionCall, FunctionCallOutput
from .calls import arguments
from .placeholders import cleared
from .plan import Action, Pass


def results_can_reach_goal(p: Pass) -> bool:
    """Whether replacing every result in [boundary, protected) could get under the goal at all.

    When it cannot, the drop layer will remove all of them anyway, so pointers and clearing would
    be wasted work (and misleading notices); the bound counts each result's whole size.
    """
    outputs = p.index.outputs
    bound = sum(
        p.index.raw[i]
        for i in outputs[bisect_left(outputs, p.plan.boundary) : bisect_left(outputs, p.protected)]
        if i not in p.plan.replaced
    )
    return p.total - bound <= p.goal


def clear_old_results(p: Pass, min_tokens: int) -> Action | None:
    """Clear results in [boundary, protected) until the request is under the goal; returns the action."""
    outputs = p.index.outputs
    count = saved = 0
    for i in outputs[bisect_left(outputs, p.plan.boundary) :]:
        if not p.over() or i >= p.protected:
            break
        if i in p.plan.replaced or p.index.raw[i] < min_tokens:
            continue
        item = p.items[i]
        assert isinstance(item, FunctionCallOutput)
        call = p.items[p.index.call_at[item.call_id]]
        args = arguments(call) if isinstance(call, FunctionCall) else {}
        text = cleared(p.index.tools[i], item.outcome, args)
        if text is not None:
            saved += p.replace(i, FunctionCallOutput(item.call_id, text, item.outcome))
            count += 1
    return Action(_("cleared {count} old tool results").format(count=count), saved) if count else None
