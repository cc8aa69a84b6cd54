"""git diff / git show / git stash show -p.

Every file header, hunk header and changed line stays. A generated or data file whose hunks are
large (a lock file, a regenerated JSON fixture, a minified bundle) keeps its headers and a count of
its changes instead of the changes. Context lines are the first thing the budget may take.

Understands git diff/show/stash/format-patch (git 2.x, any -U), `diff -u`, and formatters' --diff.
Falls through: word diffs (--word-diff), --color-moved, combined merge diffs (`diff --cc`) keep all lines.
"""

from __future__ import annotations

import re

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import HIDDEN, KEPT, Selection

_GENERATED_RE = re.compile(
    r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|"
    r"Pipfile\.lock|composer\.lock|Gemfile\.lock|go\.sum|uv\.lock|pdm\.lock|bun\.lockb?|flake\.lock)$"
    r"|\.(?:min\.js|min\.css|map|snap|lock|pb\.go|svg)$|_pb2\.py$|(?:^|/)(?:dist|build|vendor|node_modules|"
    r"__snapshots__|generated|gen)/|\.generated\."
)
_DATA_RE = re.compile(r"\.(?:json|jsonl|ndjson|geojson|csv|tsv|xml|yaml|yml|txt|dat|sql|html|ipynb)$")
_STAT_RE = re.compile(r"^ \S.* \| +(?:\d+ [+-]*|Bin )")
GENERATED_MIN_LINES = 20  # a lock file changed by a few lines is shown
DATA_MIN_LINES = 100
MAX_STAT_LINES = 50
CONTEXT = 1  # unchanged lines kept around each change (git prints 3)
UNCHANGED, GENERATED, INDEX = "unchanged lines", "generated-file diff lines", "index lines"


def detect(out: Output) -> int:
    if out.command.runs("git") and out.command.subcommand("git") in ("diff", "show", "stash", "format-patch"):
        return COMMAND
    if out.command.runs("diff") or out.text.startswith(("diff --git ", "--- ")) or out.has("\ndiff --git "):
        return STRONG_CONTENT + 10
    return 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    sel.collapsible = False  # diff lines must stay applicable
    # The `@@` lines say where each change is, and a collapsed file has its own note: a marker for
    # every run of unchanged lines, or under the note, would cost more than it tells.
    sel.quiet.update((UNCHANGED, GENERATED, INDEX))
    files = [i for i, line in enumerate(lines) if line.startswith("diff --git ")] or _plain_diff_starts(lines)
    stats = 0
    for i, line in enumerate(lines[:files[0]] if files else lines):  # git show's commit, or a --stat
        if line.startswith("commit "):
            sel.pin(i)
        elif _STAT_RE.match(line):
            stats += 1
            if stats <= MAX_STAT_LINES:
                sel.pin(i)
            else:
                sel.hide(i, "diffstat lines")
    for k, start in enumerate(files):
        stop = files[k + 1] if k + 1 < len(files) else len(lines)
        _file(sel, start, stop)
    sel.vital = [set(files), _messages(sel, files[0] if files else len(lines))]
    return sel


def _messages(sel: Selection, first: int) -> set[int]:
    """A tool's own lines among the hunks (`would reformat x.py`, `6 files would be reformatted`):
    pinned, and kept before the hunks when the budget cuts."""
    lines = sel.lines
    in_hunk = False
    found: set[int] = set()
    for i in range(first, len(lines)):
        line = lines[i]
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith(("diff ", "--- ", "+++ ", "index ", "new file", "deleted file", "similarity",
                              "rename ", "old mode", "new mode", "Binary files")):
            in_hunk = False
        elif not line.strip() or (in_hunk and line[:1] in " +-\\"):
            continue
        else:
            in_hunk = False
            sel.pin(i)
            found.add(i)
    return found


def _plain_diff_starts(lines: list[str]) -> list[int]:
    """File starts of a `diff -u` (no `diff --git` lines): each `--- a` followed by `+++ b`."""
    return [i for i in range(len(lines) - 1) if lines[i].startswith("--- ") and lines[i + 1].startswith("+++ ")]


def _file(sel: Selection, start: int, stop: int) -> None:
    lines = sel.lines
    hunk = next((j for j in range(start, stop) if lines[j].startswith("@@")), stop)
    sel.pin_range(start, hunk)  # diff --git, mode, rename, ---, +++ and "Binary files ... differ"
    git = lines[start].startswith("diff --git ")
    for j in range(start + 1, hunk):
        # blob hashes say nothing to act on, and `--- a/x`/`+++ b/x` repeat the `diff --git` line
        if git and (lines[j].startswith("index ") or (lines[j].startswith(("--- a/", "+++ b/")) and hunk < stop)):
            sel.level[j] = HIDDEN
            sel.reasons[j] = INDEX
    path = _path(lines[start])
    added = removed = 0
    minified = False
    changed: list[int] = []
    for j in range(hunk, stop):
        first = lines[j][:1]
        if first == "+":
            added += 1
            changed.append(j)
        elif first == "-":
            removed += 1
            changed.append(j)
        elif lines[j].startswith("@@"):
            changed.append(j)
        minified = minified or (first in "+-" and lines[j].endswith(" chars]") and "… [line cut: " in lines[j])
    if minified or _collapse(path, added + removed):
        sel.hide_range(hunk, stop, GENERATED)
        what = "minified" if minified else "generated or data file"
        sel.note(hunk, f"[{path}: +{added:,} −{removed:,} lines, not shown: {what}]")
        return
    for j in changed:
        sel.pin(j)
    _trim_context(sel, hunk, stop)


def _trim_context(sel: Selection, start: int, stop: int) -> None:
    """Keep CONTEXT unchanged lines on each side of a change; `@@` lines already say where it is."""
    lines = sel.lines
    far = CONTEXT + 1
    distance = [far] * (stop - start)  # to the nearest changed line
    last = -far
    for k in range(stop - start):
        if lines[start + k][:1] in "+-":
            last = k
        distance[k] = k - last
    last = stop - start + far
    for k in range(stop - start - 1, -1, -1):
        if lines[start + k][:1] in "+-":
            last = k
        distance[k] = min(distance[k], last - k)
    for k, d in enumerate(distance):
        line = lines[start + k]
        if d > CONTEXT and (not line or line[0] == " "):
            sel.hide(start + k, UNCHANGED)


def _path(header: str) -> str:
    """`diff --git a/x b/x` -> "x" (also for a plain `--- a/x` header)."""
    if header.startswith("diff --git "):
        rest = header[len("diff --git "):]
        half = rest.rfind(" b/")
        return rest[half + 3:] if half >= 0 else rest
    return header[4:].split("\t")[0].removeprefix("a/")


def _collapse(path: str, changed: int) -> bool:
    if _GENERATED_RE.search(path):
        return changed >= GENERATED_MIN_LINES
    return _DATA_RE.search(path) is not None and changed >= DATA_MIN_LINES


FAMILY = Family("git-diff", detect, select, errors_first=False)
