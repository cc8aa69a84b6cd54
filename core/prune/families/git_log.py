"""git log (full, --oneline, --graph, --stat, -p).

The most recent commits matter: their `commit` and subject lines stay, with author and date for
the first few; bodies shrink, older commits go. With -p only the newest commit keeps its patch.

Understands git 2.x default, --oneline, --graph, --stat and -p formats. Falls through: --format= with
no `commit` line is kept as oneline; `git log -p -N` of a few commits is a view (kept whole).
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, CONTENT, Family
from core.prune.output import Output
from core.prune.selection import Selection

_COMMIT_RE = re.compile(r"^[*|\\/ ]*commit [0-9a-f]{7,64}\b")
_ONELINE_RE = re.compile(r"^[*|\\/ ]*[0-9a-f]{7,64} \S")
_META_RE = re.compile(r"^[*|\\/ ]*(?:Author|AuthorDate|Commit|CommitDate|Date|Merge|Reflog):")
SHOWN = 5  # commits that keep their commit and subject lines
DETAILED = 2  # commits that also keep their author, date and the start of their message body
BODY_LINES = 6
PATCH_LINES = 120  # of the newest commit's --stat or -p output
ONELINE_SHOWN = 40


def detect(out: Output) -> int:
    if out.command.runs("git") and out.command.subcommand("git") in ("log", "reflog", "whatchanged", "shortlog"):
        return COMMAND
    return CONTENT if _COMMIT_RE.match(out.text) and out.has("\nAuthor: ") else 0


def select(out: Output) -> Selection:
    lines = out.lines
    commits = [i for i, line in enumerate(lines) if line[:1] in "c*|\\/ " and _COMMIT_RE.match(line)]
    if not commits:
        return _oneline(lines)
    sel = Selection(lines, reason="older commit lines")
    sel.keep_range(0, commits[0])
    for k, start in enumerate(commits[:SHOWN]):
        stop = commits[k + 1] if k + 1 < len(commits) else len(lines)
        _commit(sel, start, stop, detailed=k < DETAILED, newest=k == 0)
    return sel


def _commit(sel: Selection, start: int, stop: int, detailed: bool, newest: bool) -> None:
    lines = sel.lines
    sel.pin(start)
    message = [j for j in range(start + 1, stop) if lines[j].lstrip("*|\\/ ").strip() and
               lines[j].lstrip("*|\\/").startswith("    ")]
    for j in range(start + 1, stop):
        if _META_RE.match(lines[j]) and detailed:
            sel.keep(j)
    if message:
        sel.pin(message[0])
        body = message[1:BODY_LINES + 1] if detailed else []
        for j in body:
            sel.keep(j)
        sel.hide_all(message[1 + len(body):], "commit body lines")
    rest_from = (message[-1] + 1) if message else start + 1
    patch = [j for j in range(rest_from, stop) if lines[j].strip()]
    if newest:
        for j in patch[:PATCH_LINES]:
            sel.keep(j)
        sel.hide_all(patch[PATCH_LINES:], "patch lines")
    else:
        sel.hide_all(patch, "patch lines")


def _oneline(lines: list[str]) -> Selection:
    sel = Selection(lines, reason="older commit lines")
    shown = 0
    for i, line in enumerate(lines):
        if _ONELINE_RE.match(line):
            shown += 1
            if shown <= ONELINE_SHOWN:
                sel.pin(i)
        elif shown < ONELINE_SHOWN:
            sel.keep(i)
    return sel


FAMILY = Family("git-log", detect, select, errors_first=False)
