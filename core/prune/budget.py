"""The hard cap on a result's size, reached in steps that lose the least first.

1. context lines (KEPT) that the generic rules would not keep either go: what is left is near an
   error, in a traceback, or at the head or tail;
2. if anything is pinned, the rest of the context goes;
3. if the pinned lines alone are too long, only the family's vital lines and the guarded ones stay (a
   diff's file headers, the tool's messages, every diagnostic and its context), then only the
   error-looking ones (with the last lines, where summaries are), unless the family says its pins are
   not about errors, then only the guard's marker lines;
4. a head and tail cut over what is left, by characters, with a marker for the middle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from core.prune.families import generic
from core.prune.guard import Guard
from core.prune.output import Output
from core.prune.selection import BLANK, HIDDEN, KEPT, PINNED, Rendered, Selection, is_marker

CONTEXT = "context lines (over budget)"
PINNED_OVERFLOW = "lines past the budget"
HEAD_SHARE = 0.6
TAIL_LINES = 5


@dataclass
class Fitted:
    lines: list[str]
    hidden: Counter
    cut: bool  # whether the budget (not the family rules) removed anything


def size(lines: list[str]) -> int:
    return sum(map(len, lines)) + len(lines)


def fit(sel: Selection, out: Output, budget: int, by_errors: bool = True, guard: Guard | None = None,
        generic_levels: bytes | None = None) -> Fitted:
    """`generic_levels`: what the generic rules marked, when the caller has them already."""
    rendered = sel.render()
    if size(rendered.lines) <= budget:
        return Fitted(rendered.lines, rendered.hidden, False)
    anchored = generic_levels if generic_levels is not None else generic.select(out).level
    _drop_context(sel, lambda i: anchored[i] not in (KEPT, PINNED))
    rendered = sel.render()
    if size(rendered.lines) > budget and PINNED in sel.level:
        _drop_context(sel, lambda i: True)
        rendered = sel.render()
    guarded = guard.lines if guard else frozenset()
    errors = (out.error_set if by_errors else frozenset()) | guarded
    for k in range(len(sel.vital)):
        if size(rendered.lines) > budget:
            rendered = _only(sel, set().union(*sel.vital[k:]) | errors)
    if size(rendered.lines) > budget and by_errors:
        rendered = _errors_only(sel, out.error_set | guarded)
    if size(rendered.lines) > budget and guard:
        rendered = _only(sel, guard.markers)
    if size(rendered.lines) > budget:
        rendered = _head_tail(rendered, budget)
    return Fitted(rendered.lines, rendered.hidden, True)


def _drop_context(sel: Selection, where: Callable[[int], bool]) -> None:
    level, lines = sel.level, sel.lines
    for i in range(len(level)):
        if level[i] == KEPT and where(i):
            sel.hide(i, CONTEXT if lines[i].strip() else BLANK)


def _only(sel: Selection, keep: set[int] | frozenset[int]) -> Rendered:
    """Only the pinned lines in `keep` stay (a diff's file headers and the tool's own messages)."""
    for i in range(len(sel.level)):
        if sel.level[i] == PINNED and i not in keep:
            sel.level[i] = HIDDEN
            sel.reasons[i] = PINNED_OVERFLOW
    return sel.render()


def _errors_only(sel: Selection, errors: frozenset[int]) -> Rendered:
    pinned = [i for i in range(len(sel.level)) if sel.level[i] == PINNED]
    keep = {i for i in pinned if i in errors}
    if not keep:
        return sel.render()
    keep.update(pinned[-TAIL_LINES:])
    for i in pinned:
        if i not in keep:
            sel.level[i] = HIDDEN
            sel.reasons[i] = PINNED_OVERFLOW
    return sel.render()


def _head_tail(rendered: Rendered, budget: int) -> Rendered:
    """First lines up to 60% of the budget, last lines in the rest, one marker between."""
    lines = rendered.lines
    room = budget - 60  # the marker line
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room * HEAD_SHARE:
            break
        head.append(line)
        used += len(line) + 1
    tail: list[str] = []
    for line in reversed(lines[len(head):]):
        if used + len(line) + 1 > room:
            break
        tail.append(line)
        used += len(line) + 1
    tail.reverse()
    middle = lines[len(head):len(lines) - len(tail)]
    hidden = Counter(rendered.hidden)
    dropped = sum(1 for line in middle if not is_marker(line))
    hidden[PINNED_OVERFLOW] += dropped
    return Rendered([*head, f"… {len(middle):,} lines cut to fit the budget", *tail], hidden)
