"""Fold runs of near-identical context lines: `processing 1/500` … `processing 500/500`.

Only KEPT lines fold (pinned lines are never touched). Two lines are similar when they start the
same once digits are masked and a leading timestamp or counter is skipped; the first and the last
line of a run stay so the model sees where the pattern starts and ends.
"""

from __future__ import annotations

import re

from core.prune.selection import Selection

MIN_RUN = 6
SIMILAR = "similar lines"
_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")  # bytes.translate: ten times str.translate's speed
_STAMP_CHARS = b"0-:T.,/ +Z[]()"
_KEPT_RUNS_RE = re.compile(rb"\x01{%d,}" % MIN_RUN)
KEY_CHARS = 20


def similarity_key(line: str) -> bytes | None:
    """What a line starts with, ignoring digits and a leading timestamp; None for short lines."""
    head = line[:64].encode("utf-8", errors="replace").translate(_DIGITS).lstrip(_STAMP_CHARS)
    return head[:KEY_CHARS] if len(head) >= KEY_CHARS // 2 else None


def fold_similar(sel: Selection) -> None:
    if not sel.collapsible:
        return
    lines = sel.lines
    for m in _KEPT_RUNS_RE.finditer(bytes(sel.level)):
        start, stop = m.span()
        run_start, run_key = start, similarity_key(lines[start])
        for i in range(start + 1, stop + 1):
            key = similarity_key(lines[i]) if i < stop else None
            if key is None or key != run_key:
                if run_key is not None and i - run_start >= MIN_RUN:
                    sel.hide_range(run_start + 1, i - 1, SIMILAR)
                run_start, run_key = i, key
