"""How every front end shows an approval question and reads its answer: the decisions a question
offers (`core.protocol.DECISIONS`, numbered the same everywhere) with their labels, what a person
typed as a decision, and a long action cut to what matters, its risky parts (as the gate judges
them, `core.runtime.display.risky_alone`) kept in view."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from core import protocol as ev
from core.i18n import _
from core.runtime.display import risky_alone

# How a long action is shown (`compact_action`): its line breaks, and the lines left out between.
NEWLINE_MARK = " ⏎ "
MAX_SHOWN_LINES = 6
MAX_RISKY_SHOWN = 3


def compact_action(text: str, command: str | None = None, cwd: str = ".", line_chars: int = 200) -> str:
    """`text` (a question's action, already through the sanitiser) as the question shows it; `command`
    and `cwd` are the question's own, to find the risky lines.

    A model can put 40 harmless lines around one `rm`, and a prompt that prints them all scrolls
    the `rm` off the screen. So an action of more than MAX_SHOWN_LINES lines, or with a line longer
    than `line_chars`, becomes one line: line breaks shown as ⏎, its first and last lines and the
    lines that are risky on their own kept, what lies between replaced by a "… N more lines …"
    mark, and each kept line cut in the middle to `line_chars` with a mark saying how much; a long
    line of a command keeps each of its risky commands whole enough to read."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= MAX_SHOWN_LINES and all(len(line) <= line_chars for line in lines):
        return "\n".join(lines)
    keep = {0, len(lines) - 1, *sorted(_risky_lines(command, cwd, len(lines)))[:MAX_RISKY_SHOWN]}
    parts: list[str] = []
    left_out = 0
    for number, line in enumerate(lines):
        if number not in keep:
            left_out += 1
            continue
        if left_out:
            parts.append(f"… {left_out} more line{'s' if left_out > 1 else ''} …")
            left_out = 0
        parts.append(_cut_keeping_risky(line, line_chars, cwd) if command else _cut_middle(line, line_chars))
    return NEWLINE_MARK.join(parts)


def wrap(line: str, width: int) -> list[str]:
    """`line` in rows of at most `width` terminal columns (CJK characters take two), so a question
    can show every character of a long command, each row behind its gutter."""
    rows, row, used = [], [], 0
    for char in line:
        size = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if used + size > width:
            rows.append("".join(row))
            row, used = [], 0
        row.append(char)
        used += size
    return [*rows, "".join(row)]


def first_risky(text: str, cwd: str = ".") -> int | None:
    """Where in `text` (a command as a question shows it) the first line, or the first `;`, `&&`,
    `||` or `|` segment of a line, that is risky on its own starts: a character offset, so a
    question that scrolls can open there. None when no part is risky on its own."""
    offset = 0
    for line in text.split("\n"):
        if risky_alone(line, cwd):
            starts = [0, *(m.end() for m in _SEPARATOR.finditer(line))]
            ends = [*(m.start() for m in _SEPARATOR.finditer(line)), len(line)]
            risky = [a for a, b in zip(starts, ends, strict=True) if risky_alone(line[a:b], cwd)]
            return offset + (risky[0] if risky else 0)
        offset += len(line) + 1
    return None


def _risky_lines(command: str | None, cwd: str, count: int) -> set[int]:
    """The lines of a command that the safety rules flag on their own (numbered as in the action,
    whose first line is the command's first line)."""
    lines = command.rstrip("\n").split("\n") if isinstance(command, str) else []
    if len(lines) != count:  # not a command, or redaction joined lines: the numbers would not match
        return set()
    return {number for number, line in enumerate(lines) if risky_alone(line, cwd)}


_SEPARATOR = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")


def _cut_keeping_risky(line: str, limit: int, cwd: str) -> str:
    """A long command line cut to about `limit`: its start, then every segment between `;`, `&&`,
    `||` and `|` that is risky on its own, each cut in the middle to its share; the rest is marked."""
    if len(line) <= limit:
        return line
    segments = [s for s in _SEPARATOR.split(line) if s.strip()]
    risky = [s for s in segments[1:] if risky_alone(s, cwd)][:MAX_RISKY_SHOWN]
    if not risky:
        return _cut_middle(line, limit)
    kept = [segments[0], *risky]
    share = max(40, limit // len(kept))
    return " … ".join(_cut_middle(s, share) for s in kept)


def _cut_middle(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    mark = f" …{len(line) - limit:,} characters… "
    head = max(1, (limit - len(mark)) * 2 // 3)
    return line[:head] + mark + line[len(line) - max(1, limit - len(mark) - head):]


def parse_decision(text: str, among: Sequence[ev.Choice] = ev.DECISIONS) -> str | None:
    """'1'/'y'/'once' → 'once' …; None when the answer is none of the decisions `among`."""
    said = text.strip().lower()
    return next((d.id for d in among if said and said in (d.id, d.key, d.alias)), None)


def offered(request: ev.ApprovalRequested) -> tuple[ev.Choice, ...]:
    """The decisions a question offers (decision 5 only with a rule to keep), in their order."""
    ids = {d.get("id") for d in request.decisions}
    return tuple(d for d in ev.DECISIONS if d.id in ids)


def label(decision: ev.Choice, request: ev.ApprovalRequested) -> str:
    """A decision as a question shows it: "always, in this workspace" names the rule it keeps."""
    shown = _(decision.label)
    if decision.id == "workspace" and request.rule:
        return _("{choice}: {rule}").format(choice=shown, rule=request.rule)
    return shown
