"""Formatter checks: black/ruff format/isort --check --diff, gofmt -d, rustfmt --check, prettier
--check, clang-format --dry-run.

They answer "which files would change, and how". A diff-style check is a diff (headers and changed
lines stay, unchanged lines go, as for git diff) plus the tool's verdict per file and its summary,
which are pinned. clang-format reports each violation as a compiler-style finding with the source
line and a caret under it: the finding line names the place, the quoted source repeats the file,
so the findings stay and their source lines are hidden without a marker each.

Understands the default output of the tools above. Falls through: a formatter that rewrites files
in place prints only what it changed, which the generic rules keep.
"""

from __future__ import annotations

import re

from core.prune.families import git_diff
from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import HIDDEN, PINNED, Selection

_FORMATTERS = {"black", "isort", "yapf", "autopep8", "gofmt", "goimports", "rustfmt", "prettier", "clang-format",
               "shfmt", "stylua", "dprint", "biome", "ktlint", "swiftformat", "php-cs-fixer", "rubocop"}
_CHECK_ARGS = {"--check", "--diff", "-d", "-l", "--dry-run", "--list-different", "--verify", "check"}
_FINDING_RE = re.compile(r"^\S+:\d+:\d+: (?:error|warning): ")
_VERDICT_RE = re.compile(
    r"^(?:would reformat |would be reformatted|reformatted |Diff in |ERROR: \S+ Imports are incorrectly sorted"
    r"|\[warn\] |Code style issues|Checking formatting|All done!|Oh no!|\d+ files? would be|\d+ files? (?:left|reformatted)"
    r"|\S+ needs formatting)"
    r"|would be reformatted|would be left unchanged"
)
FRAME = "source lines under findings"


def detect(out: Output) -> int:
    for seg in out.command.segments:
        if seg and seg[0] in _FORMATTERS and _CHECK_ARGS & set(seg[1:]):
            return COMMAND
        if seg[:2] in (("ruff", "format"), ("cargo", "fmt"), ("go", "fmt")) and _CHECK_ARGS & set(seg[2:]):
            return COMMAND
    if out.has("would reformat ", "code should be clang-formatted", "\nDiff in ", "Code style issues found"):
        return STRONG_CONTENT + 15  # above the diff and compiler families, which see a diff or `error:` lines
    return 0


def select(out: Output) -> Selection:
    is_diff = out.text.startswith(("--- ", "diff ")) or out.has("\n--- ", "\ndiff ")
    sel = git_diff.select(out) if is_diff else Selection(out.lines)
    sel.quiet.add(FRAME)
    in_finding = False
    for i, line in enumerate(out.lines):
        if _FINDING_RE.match(line):
            sel.pin(i)
            in_finding = True
        elif _VERDICT_RE.search(line):
            sel.pin(i)
            in_finding = False
        elif in_finding and sel.level[i] != PINNED:
            sel.level[i], sel.reasons[i] = HIDDEN, FRAME
        elif not is_diff and line.strip():
            sel.keep(i)
    return sel


FAMILY = Family("formatter", detect, select, errors_first=False)
