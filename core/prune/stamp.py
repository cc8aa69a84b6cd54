"""The two lines that make a pruned result never silent: the exit code and what was removed."""

from __future__ import annotations

import re
from collections.abc import Mapping

from core.prune.selection import noun

MAX_KINDS = 1  # the markers in the text say the rest
_HEADER_RE = re.compile(r"exit code (-?\d+|unknown)")
_STAMP_RE = re.compile(r"\[pruned [\d,]+ → [\d,]+ chars.*\]")


def header(exit_code: int | None) -> str:
    return f"exit code {'unknown' if exit_code is None else exit_code}"


def stamp(original: int, final: int, hidden: Mapping[str, int], archive_id: str | None,
          budget: int | None, cut_diagnostics: int = 0) -> str:
    """`[pruned 18,460 → 356 chars; 412 passing tests, 3 progress redraws hidden; full output: out-7]`.

    `cut_diagnostics` diagnostic lines (errors, warnings, locations, summaries) were among what the
    budget cut: the stamp says so, since only there the model may find them."""
    parts = [f"pruned {original:,} → {final:,} chars"]
    kinds = sorted(hidden.items(), key=lambda kv: (-kv[1], kv[0]))
    if kinds:
        shown = ", ".join(f"{n:,} {noun(kind, n)}" for kind, n in kinds[:MAX_KINDS])
        rest = sum(n for _, n in kinds[MAX_KINDS:])
        others = f", {rest:,} {noun('other lines', rest)}" if rest else ""
        parts.append(f"{shown}{others} hidden")
    if budget is not None:
        pages = f", read_output {archive_id} pages the rest" if archive_id else ""
        among = f", {cut_diagnostics:,} {noun('diagnostic lines', cut_diagnostics)} among it" if cut_diagnostics else ""
        parts.append(f"cut to the {budget:,}-char budget{pages}{among}")
    if archive_id:
        parts.append(f"full output: {archive_id}")
    return f"[{'; '.join(parts)}]"


def split_own_header(text: str, exit_code: int | None) -> tuple[str, int | None]:
    """Take our own header (and stamp) off a result that is pruned again.

    Only a header followed by a stamp, or any header when the caller knows no exit code, counts as
    ours: a program that happens to print "exit code 0" first keeps its line. Returns the rest of
    the text and the exit code to use.
    """
    first, sep, rest = text.partition("\n")
    m = _HEADER_RE.fullmatch(first)
    if m is None:
        return text, exit_code
    second, sep2, after = rest.partition("\n")
    if _STAMP_RE.fullmatch(second):
        rest = after if sep2 else ""
    elif exit_code is not None:
        return text, exit_code
    stated = None if m.group(1) == "unknown" else int(m.group(1))
    return (rest if sep else ""), (exit_code if exit_code is not None else stated)
