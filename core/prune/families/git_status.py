"""git status (long and short formats).

Branch lines, section headers and every staged, unstaged, unmerged or deleted entry stay; the
`(use "git ...")` hints go. Among many untracked files, the noise is summarised: leftovers by
extension (`.orig`, `.pyc`...), tool folders (`__pycache__`, `node_modules`...), and large groups
of machine-named files sharing a folder and extension (`data/cache_01d89a02.json` x 262). What
remains, plausibly new source files, is listed.

Understands git 2.x long format and -s/--porcelain v1. Falls through: --porcelain=v2 lines stay as context.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import PurePosixPath

from core.prune.families.base import COMMAND, STRONG_CONTENT, Family
from core.prune.output import Output
from core.prune.selection import KEPT, Selection

_SECTION_RE = re.compile(r"^(?:Changes to be committed|Changes not staged for commit|Untracked files|Unmerged paths"
                         r"|Ignored files):$")
_HINT_RE = re.compile(r'^\s+\(use "git |^\s+\(commit or discard|^\s+\(fix conflicts|^\s+\(all conflicts')
_SHORT_RE = re.compile(r"^(?:[ MADRCUT?!]{2}) (\S.*)$")
_MACHINE_NAME_RE = re.compile(r"[0-9a-f]{6,}|\d{3,}|[-_.]\d+$")

NOISE_SUFFIXES = (".orig", ".rej", ".pyc", ".pyo", ".o", ".obj", ".class", ".log", ".tmp", ".bak", ".swp", ".swo",
                  ".DS_Store", "~", ".pid", ".cache", ".egg-info/")
NOISE_DIRS = {"__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".cache", ".tox",
              ".nox", ".venv", "venv", "htmlcov", ".coverage", ".next", ".nuxt", ".parcel-cache", ".turbo",
              "target", "dist", "build", "coverage", ".idea", ".vscode", ".gradle", "out"}
MIN_UNTRACKED = 12  # fewer untracked files are listed as they are
GROUP_MACHINE = 8  # a folder+extension group this big, with machine-made names, is noise
GROUP_ANY = 40  # a folder+extension group this big is noise whatever the names
MAX_LISTED = 100
NOISE = "untracked noise files"


def detect(out: Output) -> int:
    if out.command.runs("git") and out.command.subcommand("git") == "status":
        return COMMAND
    return STRONG_CONTENT if out.has("Changes not staged for commit:", "Untracked files:",
                                     "Changes to be committed:") and out.has("On branch", "HEAD detached") else 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, default=KEPT)
    section = ""
    untracked: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if _SECTION_RE.match(line):
            section = line
            sel.pin(i)
        elif _HINT_RE.match(line):
            sel.hide(i, "git hints")
        elif line.startswith("\t") and section:
            if section.startswith("Untracked"):
                untracked.append((i, line.strip()))
            else:
                sel.pin(i)
        elif m := _SHORT_RE.match(line):
            if line.startswith("??"):
                untracked.append((i, m.group(1)))
            else:
                sel.pin(i)
        elif line.startswith(("On branch", "HEAD detached", "Your branch", "You have unmerged", "You are currently",
                              "nothing to commit", "nothing added to commit", "no changes added", "## ")):
            sel.pin(i)
    _untracked(sel, untracked)
    return sel


def _untracked(sel: Selection, entries: list[tuple[int, str]]) -> None:
    if len(entries) < MIN_UNTRACKED:
        for i, _ in entries:
            sel.pin(i)
        return
    noise: defaultdict[str, list[int]] = defaultdict(list)
    groups: defaultdict[str, list[tuple[int, str]]] = defaultdict(list)
    for i, path in entries:
        key = _noise_key(path)
        if key is not None:
            noise[key].append(i)
        else:
            groups[_group_key(path)].append((i, PurePosixPath(path.rstrip("/")).stem))
    listed = 0
    for key, members in groups.items():
        if len(members) >= GROUP_ANY or (len(members) >= GROUP_MACHINE and _machine_named([s for _, s in members])):
            noise[key] = [i for i, _ in members]
            continue
        for i, _ in members:
            listed += 1
            if listed <= MAX_LISTED:
                sel.pin(i)
            else:
                sel.hide(i, "untracked files")
    summary = Counter({key: len(members) for key, members in noise.items()})
    for members in noise.values():
        sel.hide_all(members, NOISE)
    if summary:
        first = min(i for i, _ in entries)
        parts = ", ".join(f"{key} ×{n:,}" for key, n in summary.most_common())
        sel.note(first, f"\t[untracked noise, not listed: {parts}]")


def _noise_key(path: str) -> str | None:
    """`*.orig` for leftovers, `__pycache__/` for tool folders, None for anything else."""
    parts = path.rstrip("/").split("/")
    for part in parts[:-1] if not path.endswith("/") else parts:
        if part in NOISE_DIRS:
            return f"{part}/"
    for suffix in NOISE_SUFFIXES:
        if path.endswith(suffix):
            return f"*{suffix}"
    return None


def _group_key(path: str) -> str:
    """`data/cache_01d89a02.json` -> `data/*.json`."""
    p = PurePosixPath(path.rstrip("/"))
    folder = "" if str(p.parent) == "." else f"{p.parent}/"
    return f"{folder}*{p.suffix}" if p.suffix else f"{folder}*"


def _machine_named(stems: list[str]) -> bool:
    """Whether most names carry a hash, a long number or a counter: made by a program, not a person."""
    return sum(1 for s in stems if _MACHINE_NAME_RE.search(s)) * 2 > len(stems)


FAMILY = Family("git-status", detect, select, errors_first=False)
