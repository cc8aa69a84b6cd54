"""What the model is shown of the workspace when a session starts: the files there are and, for a
workspace small enough, what they hold. A model that has seen the code edits what is there; one
that has not tends to guess (small models rarely read before they write), and its first calls
are spent listing and reading what fits in a few thousand characters."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from core.agent.agents_seen import AGENTS_FILE
from core.credentials import is_credential_path
from core.tools.reading import SKIP_DIRS, looks_binary, read_regular

MAX_CHARS = 16_000  # the overview's size at most: a third for names, the rest for contents
MAX_WALKED = 5_000  # entries looked at, so a huge tree costs little at every start
WHOLE_FILES = 20  # a workspace of at most this many files whose text fits the rest is shown whole


def overview_budget(context_window: int) -> int:
    """The overview's characters for a model's window: about an eighth of it (four characters a
    token), so a small local model keeps room to work; MAX_CHARS for a large one."""
    return max(0, min(MAX_CHARS, context_window // 2))


@dataclass(frozen=True)
class Overview:
    """The overview's text for the instructions, and the files whose content it carries."""

    text: str
    shown: tuple[str, ...] = ()


def workspace_overview(root: Path, budget: int = MAX_CHARS) -> Overview:
    """The workspace's files as the session starts, in at most about `budget` characters: the
    shallowest paths in a third of it, and a small workspace's text files in full in the rest.

    Never shown: what a folder the file tools skip holds, symlinks' targets, credential files
    (`core.credentials`), binary and non-UTF-8 files, and AGENTS.md (the instructions carry it)."""
    found, complete = _walk(root)
    if not found:
        return Overview("The workspace is empty." if complete else "")
    listed = sorted(_fitting(sorted(found, key=lambda rel: (rel.count("/"), rel)), budget // 3))
    more = len(found) - len(listed)
    count = f"{len(found):,}{'+' if not complete else ''} files"
    lines = [f"Workspace files when the session started ({count}; read a file again after it changes):",
             *map(_named, listed)]
    if more or not complete:
        lines.append(f"[… {more:,} more not named{'' if complete else ', and the walk stopped early'}; "
                     "use list_files]")
    room = budget - sum(len(line) + 1 for line in lines)
    texts = _whole(root, found, room) if not more and complete and len(found) <= WHOLE_FILES else None
    if not texts:
        return Overview("\n".join(lines))
    lines += ["", "The workspace is small, so here is each text file as it was then:"]
    for rel, text in texts.items():
        lines += ["", f"--- {_named(rel)} ---", text.rstrip("\n"), f"--- end of {_named(rel)} ---"]
    return Overview("\n".join(lines), tuple(texts))


def _named(rel: str) -> str:
    """A path as one line: control characters in a name (a newline is legal on Linux) escaped."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", rel)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _walk(root: Path) -> tuple[list[str], bool]:
    """Workspace-relative POSIX paths of the files, and whether the walk saw everything before its
    bound. A folder that is a link is not entered (`_plain_folder`)."""
    found: list[str] = []
    walked = 0
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and _plain_folder(os.path.join(current, d)))
        walked += len(dirs) + len(files)
        here = Path(current).relative_to(root).as_posix()
        found += [name if here == "." else f"{here}/{name}" for name in sorted(files)]
        if walked > MAX_WALKED:
            return found, False
    return found, True


def _plain_folder(path: str) -> bool:
    """Whether `path` is a folder of its own, not a link to one: a symlink, or a Windows junction or
    other reparse point, which os.walk takes for a folder and which may lead outside or back up."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return not stat.S_ISLNK(info.st_mode) and not getattr(info, "st_file_attributes", 0) & stat.FILE_ATTRIBUTE_REPARSE_POINT


def _fitting(paths: list[str], chars: int) -> list[str]:
    """The first of `paths` whose lines fit in `chars`."""
    kept: list[str] = []
    for path in paths:
        chars -= len(path) + 1
        if chars < 0:
            break
        kept.append(path)
    return kept


def _whole(root: Path, found: list[str], room: int) -> dict[str, str] | None:
    """Each readable text file's content, or None when they do not fit in `room` characters with
    their headings."""
    texts: dict[str, str] = {}
    total = 0
    for rel in sorted(found):
        path = root / rel
        if rel == AGENTS_FILE or is_credential_path(rel) or path.is_symlink():
            continue
        try:
            read = read_regular(path, room + 1)
        except OSError:
            continue
        if read is None:
            continue
        raw = read[0]
        total += len(raw) + 2 * len(rel) + 24  # the file, its two delimiter lines
        if total > room:
            return None
        if looks_binary(raw):
            continue
        try:
            text = raw.decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError:
            continue
        texts[rel] = text.replace("\r\n", "\n")
    return texts
