"""Bulk listings: find, ls, tree, tar -t/-v, du, fd, git ls-files, rg --files, unzip -l.

Thousands of paths say little one by one. Kept: the first lines, counts by folder and by
extension, the last lines (where a listing's total sits), and any error (`Permission denied`).

Understands find, fd, ls -l/-R, tree, du, tar -t/-tv, unzip -l, git ls-files, rg --files. `ls` of one
folder within the budget is a view and kept whole.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

from core.prune.families.base import COMMAND, Family
from core.prune.output import Output
from core.prune.selection import Selection

_LISTERS = ("find", "ls", "tree", "du", "fd", "fdfind", "locate", "tar", "unzip", "zipinfo", "bsdtar", "exa", "eza",
            "lsd", "dir")
SHORT = 40
HEAD, TAIL = 5, 5
TOP_FOLDERS, TOP_EXTENSIONS = 5, 5


def detect(out: Output) -> int:
    cmd = out.command
    if cmd.runs(*_LISTERS) or (cmd.runs("git") and cmd.subcommand("git") == "ls-files") or (
            cmd.runs("rg") and "--files" in (cmd.args("rg") or ())):
        return COMMAND
    return 0


def select(out: Output) -> Selection:
    lines = out.lines
    sel = Selection(lines, reason="listed entries")
    n = len(lines)
    if n <= SHORT:
        sel.keep_range(0, n)
        return sel
    sel.keep_range(0, HEAD)
    sel.keep_range(n - TAIL, n)
    for i in out.error_lines:
        if _is_tool_message(lines[i]):  # not a path that merely contains "error"
            sel.pin(i)
    sel.note(HEAD, summary(lines))
    return sel


def summary(lines: list[str]) -> str:
    """`[2,997 entries; folders: node_modules/caniuse-lite 839, ...; extensions: .js 2,997]`."""
    entries = list(_paths(lines))
    root = _common_folder(entries[:1000] + entries[-1000:])
    folders = Counter(_folder(e[len(root):]) for e in entries)
    extensions = Counter(_extension(e) for e in entries)
    parts = [f"{len(entries):,} entries"]
    if len(folders) > 1:
        parts.append(f"folders{f' in {root}' if root else ''}: " + _top(folders, TOP_FOLDERS))
    if extensions:
        parts.append("extensions: " + _top(extensions, TOP_EXTENSIONS))
    return f"[{'; '.join(parts)}]"


def _paths(lines: list[str]) -> Iterator[str]:
    """The listed paths; `ls -R` names its folders in `dir:` lines and its entries relative to them."""
    folder = ""
    for line in lines:
        line = line.strip()
        if not line or line.startswith("total "):
            continue
        if line.endswith(":") and " " not in line:
            folder = line[:-1].rstrip("/") + "/"
            continue
        entry = _entry(line)
        yield entry if "/" in entry or not folder else folder + entry


def _top(counts: Counter, k: int) -> str:
    shown = ", ".join(f"{key} {n:,}" for key, n in counts.most_common(k))
    return shown + (f", {len(counts) - k:,} more" if len(counts) > k else "")


def _is_tool_message(line: str) -> bool:
    """`find: './x': Permission denied`, `tar: Exiting with failure status...`."""
    program = line.split(":", 1)[0]
    return (program in _LISTERS or program.endswith(_LISTERS)) and ": " in line


def _entry(line: str) -> str:
    """The path of a listing line: the whole line for find, the last field for ls -l and tar -tv."""
    line = line.strip()
    if " " in line and line[:1] in "-dlcbps" and line[1:4].strip("rwxsStT-") == "":
        return line.rsplit(" ", 1)[-1]
    return line.removeprefix("./")


def _common_folder(paths: list[str]) -> str:
    """The folder every path is in (`/usr/lib/python3/` for an `ls -R` there), with its slash."""
    try:
        common = os.path.commonpath(paths) if paths else ""
    except ValueError:  # absolute and relative paths mixed
        return ""
    return common + "/" if common and common != "/" and all(p.startswith(common + "/") for p in paths) else ""


def _folder(path: str) -> str:
    parts = path.split("/")
    if len(parts) <= 1:
        return "."
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else "(none)"


def confirm(out: Output, errors: frozenset[int]) -> bool:
    """A listing lists: errors other than the lister's own (`find: './x': Permission denied`) say
    the command ran something else, such as a compiler fed the list through `$(find ...)`."""
    return all(_is_tool_message(out.lines[i]) for i in errors)


FAMILY = Family("listing", detect, select, errors_first=False, confirm=confirm)
