"""prune(): clean, pick the family, apply its rules, fit the budget, stamp."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from core.prune import glued, guard, stacks
from core.prune.budget import fit
from core.prune.clean import clean, decode
from core.prune.command import parse_command
from core.prune.families import generic, pick
from core.prune.output import Output
from core.prune.selection import PINNED, Selection
from core.prune.similar import fold_similar
from core.prune.stamp import header, split_own_header, stamp
from core.prune.views import is_view

# Below this many characters (after cleaning) an output is shown whole: pruning would save little
# and could only lose something.
SMALL_CHARS = 800
STAMP_ROOM = 400  # characters the stamp line may need, reserved out of the budget
EMPTY = "(no output)"
# Pruning that saves less than this (a share of the cleaned output) is not worth a stamp or a risk:
# the cleaned output is shown whole instead.
MIN_SAVING = 0.1
VIEW = "view"


@dataclass
class Pruned:
    text: str  # what the model sees
    original_chars: int
    pruned_chars: int
    family: str
    hidden: dict[str, int]  # e.g. {"passing tests": 412, "progress redraws": 3}


def prune(output: str | bytes, command: str = "", exit_code: int | None = None, archive_id: str | None = None,
          budget_chars: int = 12_000) -> Pruned:
    """Prune one command's output for the model: aggressive on success, faithful on failure.

    The first line states the exit code; when anything was removed, the second says what and how
    much (and where the full output is, given `archive_id`). The result never exceeds `budget_chars`.
    """
    raw = decode(output)
    original = len(raw)
    raw, exit_code = split_own_header(raw, exit_code)  # pruning a pruned result again
    cleaned = clean(raw)
    lines, glued_lines = glued.split(cleaned.text, cleaned.lines)
    text = "\n".join(lines) if glued_lines else cleaned.text
    out = Output(text, lines, parse_command(command), exit_code, glued_lines)
    view = is_view(out.command)
    head = header(exit_code)
    whole = f"{head}\n{cleaned.text or EMPTY}"
    fits = len(whole) <= budget_chars
    if fits and view:
        return Pruned(whole, original, len(whole), VIEW, {})
    family = pick(out)
    if fits and len(cleaned.text) < SMALL_CHARS:
        return Pruned(whole, original, len(whole), VIEW if view else family.name, {})
    hidden = Counter(cleaned.hidden)
    room = max(budget_chars - len(head) - STAMP_ROOM, 0)
    if view:  # the answer itself: cut by the budget only
        name, guarded = VIEW, guard.Guard(frozenset(), frozenset(), frozenset())
        sel = Selection(lines, default=PINNED)
        sel.glued = glued_lines
        fitted = fit(sel, out, room, by_errors=False)
    else:
        guarded = guard.find(out, data=not family.errors_first)
        if not family.confirm(out, guarded.errors):  # the text contradicts the family
            family = generic.FAMILY
        name = family.name
        sel = family.select(out)
        sel.glued = glued_lines
        generic_levels = bytes(sel.level) if family is generic.FAMILY else None  # what the budget keeps longest
        if family.errors_first:  # stack traces look alike in every tool's output
            stacks.apply(sel, out, force=True)
        fold_similar(sel)
        sel.tidy_blanks()
        guard.protect(sel, guarded)
        glued.join_levels(sel)
        fitted = fit(sel, out, room, family.errors_first, guarded, generic_levels)
    hidden.update(fitted.hidden)
    cut_markers = guard.missing(out.lines, guarded.markers, fitted.lines) if fitted.cut else 0
    text = _assemble(head, fitted.lines, hidden, original, archive_id, budget_chars if fitted.cut else None,
                     cut_markers)
    if fits and len(text) > len(whole) * (1 - MIN_SAVING):  # saves too little to be worth a stamp
        return Pruned(whole, original, len(whole), name, {})
    if len(text) > budget_chars:  # only a budget smaller than the stamp itself gets here
        text = text[:budget_chars]
    return Pruned(text, original, len(text), name, dict(hidden))


def _assemble(head: str, body: list[str], hidden: Counter, original: int, archive_id: str | None,
              budget: int | None, cut_markers: int) -> str:
    body_text = "\n".join(body) if body else EMPTY
    if not hidden and budget is None:
        return f"{head}\n{body_text}"
    final, text = 0, ""
    for _ in range(4):  # the stamp states the final size, which includes the stamp
        text = f"{head}\n{stamp(original, final, hidden, archive_id, budget, cut_markers)}\n{body_text}"
        if len(text) == final:
            break
        final = len(text)
    return text
