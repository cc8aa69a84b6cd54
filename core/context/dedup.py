"""Layer (b): an older read of a file range is superseded by a later identical read.

Lossless: the same bytes are still in the request, further down. "Identical" is strict: same
path, same offset and limit, the same sha256 of the file, and no write or edit to that path in
between (the index records which reads qualify as they arrive).
"""

from __future__ import annotations

from ..i18n import _
from ..session.items import FunctionCallOutput
from .placeholders import superseded
from .plan import Action, Pass


def supersede_rereads(p: Pass) -> Action | None:
    """Replace every qualifying older read outside the protected window; returns the action."""
    count = saved = 0
    for old in sorted(p.index.superseded):
        if old < p.plan.boundary or old >= p.protected or old in p.plan.replaced:
            continue
        item = p.items[old]
        assert isinstance(item, FunctionCallOutput)
        saved += p.replace(old, FunctionCallOutput(item.call_id, superseded(item.outcome), item.outcome))
        count += 1
    if not count:
        return None
    return Action(_("replaced {count} re-read file results with pointers").format(count=count), saved)
