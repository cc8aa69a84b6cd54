"""prune(): clean, pick the family, apply its rules, fit the budget, stamp."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from core.prune.budget import fit
from core.prune.clean import clean, decode
from core.prune.command import parse_command
from core.prune.families import pick
from core.prune.output import Output
from core.prune.similar import fold_similar
from core.prune.stamp import header, split_own_header, stamp

# Below this many characters (after cleaning) an output is shown whole: pruning would save little
# and could only lose something.
SMALL_CHARS = 800
STAMP_ROOM = 400  # characters the stamp line may need, reserved out of the budget
EMPTY = "(no output)"


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
    out = Output(cleaned.text, cleaned.lines, parse_command(command), exit_code)
    family = pick(out)
    hidden = Counter(cleaned.hidden)
    head = header(exit_code)
    body = cleaned.lines
    budget_cut = False
    if len(cleaned.text) >= SMALL_CHARS or len(cleaned.text) + len(head) + 1 > budget_chars:
        sel = family.select(out)
        fold_similar(sel)
        sel.tidy_blanks()
        fitted = fit(sel, out, max(budget_chars - len(head) - STAMP_ROOM, 0), family.errors_first)
        body, budget_cut = fitted.lines, fitted.cut
        hidden.update(fitted.hidden)
    text = _assemble(head, body, hidden, original, archive_id, budget_chars if budget_cut else None)
    if len(text) > budget_chars:  # only a budget smaller than the stamp itself gets here
        text = text[:budget_chars]
    return Pruned(text, original, len(text), family.name, dict(hidden))


def _assemble(head: str, body: list[str], hidden: Counter, original: int, archive_id: str | None,
              budget: int | None) -> str:
    body_text = "\n".join(body) if body else EMPTY
    if not hidden and budget is None:
        return f"{head}\n{body_text}"
    final, text = 0, ""
    for _ in range(4):  # the stamp states the final size, which includes the stamp
        text = f"{head}\n{stamp(original, final, hidden, archive_id, budget)}\n{body_text}"
        if len(text) == final:
            break
        final = len(text)
    return text
