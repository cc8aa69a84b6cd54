"""File tools: read (numbered, paged), write, search/replace edits (one or several), and listing.

Every path goes through the workspace guard. Results carry typed facts (path, range, content
hash) that the context shaper uses to replace stale duplicate reads.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from core.agent.agents_seen import AGENTS_FILE, AgentsSeen
from core.checkpoints.diff import unified
from core.credentials import is_credential_path
from core.secrets import REDACTED
from core.session.items import ToolOutcome
from core.tools.atomic import WriteFailed, write_atomically
from core.tools.base import ToolContext, ToolError, ToolResult
from core.tools.edit_match import SHOWN_LINES, EditMismatch, Placement, locate, locate_all, numbered
from core.tools.reading import SKIP_DIRS, SNIFF_BYTES, looks_binary
from core.tools.syntax import broken_note
from core.tools.workspace import OutsideWorkspace, resolve_path

DEFAULT_READ_LINES = 2000
MAX_READ_CHARS = 60_000
MAX_LINE_CHARS = 2000
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS  # enough bytes for MAX_LINE_CHARS characters of any script
MAX_LIST_ENTRIES = 1000


def resolve(ctx: ToolContext, path: str) -> Path:
    try:
        return ctx.workspace.resolve(path)
    except OutsideWorkspace as exc:
        raise ToolError(str(exc)) from None


def _missing(ctx: ToolContext, target: Path, path: str) -> ToolError:
    """Say the path does not exist, with similar names from its folder; never from outside the
    workspace (the root's own parent is not the model's business)."""
    if target.is_dir():
        return ToolError(f"{ctx.workspace.rel(target)!r} is a directory, not a file; "
                         "use list_files to see what it holds")
    parent = target.parent
    hint = ""
    if parent.is_dir() and parent.is_relative_to(ctx.workspace.root):
        close = difflib.get_close_matches(target.name, os.listdir(parent), n=3, cutoff=0.6)
        if close:
            hint = "; similar: " + ", ".join(ctx.workspace.rel(parent / c) for c in close)
    elsewhere = _same_name(ctx, target)
    if elsewhere:
        hint += "; a file of that name is at " + ", ".join(elsewhere)
    return ToolError(f"{path!r} does not exist{hint}")


def _same_name(ctx: ToolContext, target: Path, most: int = 3) -> list[str]:
    """Files named like `target` elsewhere in the workspace (a model that guessed the folder wrong
    finds the file), from a walk bounded in entries so a huge tree costs little."""
    found: list[str] = []
    budget = 20_000
    for current, dirs, files in os.walk(ctx.workspace.root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        budget -= len(dirs) + len(files)
        if target.name in files and Path(current) / target.name != target:
            found.append(ctx.workspace.rel(Path(current) / target.name))
        if len(found) >= most or budget <= 0:
            break
    return found


def read_file(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = args["path"]
    target = resolve(ctx, path)
    if target.is_dir():
        raise ToolError(f"{path!r} is a directory; use list_files to see what it holds")
    if not target.is_file():
        raise _missing(ctx, target, path)
    offset = max(1, args.get("offset", 1))
    limit = args.get("limit", DEFAULT_READ_LINES)
    if limit < 1:
        raise ToolError("limit must be at least 1")
    rel = ctx.workspace.rel(target)
    digest = hashlib.sha256()
    lines: list[str] = []
    chars = 0
    total = 0
    last_shown = offset - 1
    capped = False
    with target.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
        if looks_binary(head):
            size = target.stat().st_size
            raise ToolError(f"{rel} looks like a binary file ({size:,} bytes); read_file only shows text. "
                            "Inspect it with run_shell (for example `file`, `xxd | head`) if you must")
        handle.seek(0)
        for raw, size in _capped_lines(handle, digest):
            total += 1
            if total < offset or capped or total >= offset + limit:
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if len(line) > MAX_LINE_CHARS or size > len(raw):
                line = line[:MAX_LINE_CHARS] + f" … [line cut: {size:,} bytes]"
            entry = f"{total:>6}\t{line}"
            if lines and chars + len(entry) > MAX_READ_CHARS:
                capped = True
                continue
            lines.append(entry)
            chars += len(entry) + 1
            last_shown = total
    outcome = ToolOutcome(path=rel, offset=offset, limit=limit, sha=digest.hexdigest(), total_lines=total)
    if total == 0:
        return ToolResult(f"{rel} is empty (0 lines)", outcome=outcome)
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {rel} ({total} lines)")
    text = "\n".join(lines)
    if last_shown < total:
        why = f"{MAX_READ_CHARS:,}-character cap" if capped else f"limit {limit}"
        text += (f"\n[showing lines {offset}-{last_shown} of {total} ({why}); "
                 f"continue with read_file offset={last_shown + 1}]")
    return ToolResult(text, outcome=outcome)


def _capped_lines(handle: BinaryIO, digest: Any) -> Iterator[tuple[bytes, int]]:
    """Each line as (its first MAX_LINE_BYTES, its size without the line ending), hashing every
    byte on the way: memory stays bounded however long a line is (a minified bundle, a dump)."""
    while part := handle.readline(MAX_LINE_BYTES):
        digest.update(part)
        head, size = part, len(part)
        while not part.endswith(b"\n"):
            more = handle.readline(MAX_LINE_BYTES)
            if not more:
                break
            part = more
            digest.update(part)
            size += len(part)
        yield head, size - (len(part) - len(part.rstrip(b"\r\n")))


def _guard_credentials(ctx: ToolContext, rel: str, action: str) -> None:
    if is_credential_path(rel):
        refusal = ctx.approve(f"{action} {rel}", "it looks like a credential file")
        if refusal is not None:
            raise ToolError(f"refused: {rel} looks like a credential file and writing it needs approval ({refusal})")


def _store(ctx: ToolContext, target: Path, data: bytes, make_parents: bool = False,
           previous: bytes | None = None) -> None:
    _guard_placeholder(ctx.workspace.rel(target), data, previous)
    agents_md = target.parent == ctx.workspace.root and target.name.lower() == AGENTS_FILE.lower()
    if agents_md:
        _ask_for_agents_md(ctx, previous, data)
    try:
        write_atomically(ctx.workspace.root, target, data, make_parents)
    except WriteFailed as exc:
        raise ToolError(str(exc)) from None
    if agents_md:  # the user approved it: the next session follows it as confirmed
        from core.agent.prompt import read_agents_md  # it imports the tools: not at the top

        AgentsSeen.for_settings(ctx.settings, ctx.workspace.root).record(read_agents_md(ctx.workspace.root).text)


def _guard_placeholder(rel: str, data: bytes, previous: bytes | None) -> None:
    """The model sees [REDACTED] where a file holds a credential; writing that back would replace the
    real value with the placeholder. A write that adds the placeholder is refused; one that keeps
    those the file already had (a file about redaction) is not."""
    marker = REDACTED.encode()
    added = data.count(marker) - (previous or b"").count(marker)
    if added > 0:
        raise ToolError(f"refused: the new text of {rel} holds {REDACTED} {added} more time(s) than the file does. "
                        f"{REDACTED} is what you were shown in place of a credential; writing it would replace the "
                        "real value. Change only the lines around it (an edit whose old_text and new_text leave "
                        "that line out), or ask the user to make this change.")


def _ask_for_agents_md(ctx: ToolContext, previous: bytes | None, data: bytes) -> None:
    """AGENTS.md is what every later session follows: the model's change to it is shown whole (as a
    diff) and asked in every mode that asks, auto included."""
    change = unified(AGENTS_FILE, previous, data) or "(no change)"
    refusal = ctx.approve(f"change {AGENTS_FILE}:\n{change}", f"{AGENTS_FILE} holds the instructions every later "
                          "session in this workspace follows")
    if refusal is not None:
        raise ToolError(f"refused: a change to {AGENTS_FILE} needs the user's yes ({refusal}); tell the user what "
                        "you would change and why")


def write_file(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    target = resolve(ctx, args["path"])
    content: str = args["content"]
    rel = ctx.workspace.rel(target)
    if target.is_dir():
        raise ToolError(f"{rel} is a directory")
    _guard_credentials(ctx, rel, "write")
    previous = target.read_bytes() if target.is_file() else None
    if previous and not ctx.seen(rel):
        return _unseen(rel, previous)
    new_folder = not target.parent.exists()
    data = content.encode("utf-8")
    if previous is not None and data == previous:
        raise ToolError(f"the content is exactly what {rel} already holds: {rel} is unchanged", path=rel)
    _store(ctx, target, data, make_parents=True, previous=previous)
    if ctx.checkpoints is not None:
        ctx.checkpoints.file_changed("write_file", rel, previous, data)
    lines = len(content.splitlines())
    what = f"overwrote {rel} (was {len(previous.splitlines())} lines)" if previous is not None else f"created {rel}"
    elsewhere = _same_name(ctx, target) if new_folder else []
    note = f"; note: its folder is new, and a file of that name is at {', '.join(elsewhere)}" if elsewhere else ""
    note += _compared(previous, content) if previous else ""
    broken = broken_note(rel, previous, data)
    note += f"; note: {broken}" if broken else ""
    return ToolResult(f"{what}: {lines} lines, {len(data):,} bytes{note}",
                      outcome=ToolOutcome(path=rel, sha=hashlib.sha256(data).hexdigest()))


def _compared(previous: bytes, content: str, most: int = 3) -> str:
    """What a whole-file write did to the text it replaced, when the model may not have meant it: the
    lines it left out (a model that wrote only its new function), the count and the first few; or
    that only whitespace changed (line ends, blank lines, the final newline)."""
    if looks_binary(previous[:SNIFF_BYTES]):
        return ""
    old = [line.rstrip() for line in previous.decode("utf-8", errors="replace").splitlines() if line.strip()]
    new = [line.rstrip() for line in content.splitlines() if line.strip()]
    if old == new:
        return "; note: only whitespace changed (line ends, blank lines or the final newline); the text is as it was"
    kept = {line.strip() for line in new}
    gone = [line.strip() for line in old if line.strip() not in kept]
    if not gone:
        return ""
    shown = ", ".join(f"`{line[:80]}`" for line in gone[:most]) + (" …" if len(gone) > most else "")
    return (f"; {len(gone)} line(s) of the old file are not in the new one: {shown}. If they should "
            "have stayed, put them back (edit_file adds without rewriting)")


def _unseen(rel: str, previous: bytes) -> ToolResult:
    """A write over a file the model never saw, refused once with its content: a guess at a file's
    content would replace it whole. The refusal carries the path, so the next write goes through."""
    if looks_binary(previous[:SNIFF_BYTES]):
        shown = f"it is a binary file ({len(previous):,} bytes)"
    else:
        lines = previous.decode("utf-8", errors="replace").split("\n")
        if lines[-1] == "":
            lines.pop()
        more = f"\n[… {len(lines) - SHOWN_LINES:,} more lines: read_file to see them]" if len(lines) > SHOWN_LINES else ""
        shown = f"its {len(lines)} lines are:\n{numbered(lines[:SHOWN_LINES])}{more}"
    return ToolResult(f"error: {rel} exists and was not read in this session, so write_file did not replace it; "
                      f"{shown}\nTo change part of it, use edit_file; to replace it whole, call write_file again.",
                      status="error", outcome=ToolOutcome(path=rel))


def edit_file(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    edit = {"old_text": args["old_text"], "new_text": args["new_text"], "replace_all": args.get("replace_all")}
    return _apply_edits(args["path"], [edit], ctx, "edit_file")


def multi_edit(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    edits = args["edits"]
    if not isinstance(edits, list) or not edits:
        raise ToolError("edits must be a non-empty list of {old_text, new_text} objects")
    for number, edit in enumerate(edits, 1):
        if not isinstance(edit, dict) or not isinstance(edit.get("old_text"), str) \
                or not isinstance(edit.get("new_text"), str):
            raise ToolError(f"edit {number} must be an object with string old_text and new_text")
    return _apply_edits(args["path"], edits, ctx, "multi_edit")


def _apply_edits(path: str, edits: list[dict[str, Any]], ctx: ToolContext, tool: str) -> ToolResult:
    """Apply each edit in turn to the text in memory, then write once: all of them land or none."""
    target = resolve(ctx, path)
    if not target.is_file():
        raise _missing(ctx, target, path)
    rel = ctx.workspace.rel(target)
    _guard_credentials(ctx, rel, "edit")
    raw = target.read_bytes()
    if looks_binary(raw[:SNIFF_BYTES]):
        raise ToolError(f"{rel} looks like a binary file; {tool} only edits text")
    text = raw.decode("utf-8", errors="surrogateescape")
    reports = []
    for number, edit in enumerate(edits, 1):
        label = f"edit {number} of {len(edits)}: " if len(edits) > 1 else ""
        undone = "; no edit was applied" if len(edits) > 1 else ""
        old, new = edit["old_text"], edit["new_text"]
        if not old:
            raise ToolError(f"{label}old_text is empty; to create or replace a whole file use write_file{undone}")
        try:
            places = locate_all(text, old, new) if edit.get("replace_all") else [locate(text, old, new)]
        except EditMismatch as exc:
            raise ToolError(f"{label}in {rel}: {exc}{undone}", path=rel) from None  # the model saw a passage
        for place in reversed(places):
            text = text[:place.start] + place.replacement + text[place.end:]
        reports.append(_report(text, places, label))
    data = text.encode("utf-8", errors="surrogateescape")
    if data == raw:
        raise ToolError(f"new_text is the same as old_text: {rel} is unchanged")
    _store(ctx, target, data, previous=raw)
    if ctx.checkpoints is not None:
        ctx.checkpoints.file_changed(tool, rel, raw, data)
    broken = broken_note(rel, raw, data)
    reports += [f"note: {broken}"] if broken else []
    return ToolResult(f"edited {rel}: " + "\n".join(reports), outcome=ToolOutcome(path=rel, sha=hashlib.sha256(data).hexdigest()))


def _report(text: str, places: list[Placement], label: str) -> str:
    """What was replaced where (and what was forgiven), with the new lines around the first place."""
    first = places[0]
    note = f" ({first.note})" if first.note else ""
    span = first.replacement.count("\n") + 1
    shown = text.split("\n")[max(0, first.line - 3): first.line - 1 + span + 2]
    excerpt = "\n".join(f"{max(1, first.line - 2) + i:>6}\t{line.rstrip(chr(13))}"
                        for i, line in enumerate(shown[:40]))
    return f"{label}replaced {len(places)} occurrence(s) at line {first.line}{note}\n{excerpt}"


def list_files(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = args.get("path") or "."
    root = resolve(ctx, path)
    if not root.is_dir():
        if root.exists():
            raise ToolError(f"{path!r} is a file, not a directory; use read_file")
        raise _missing(ctx, root, path)
    max_depth = max(1, args.get("max_depth", 3))
    entries: list[str] = []
    skipped: list[str] = []
    base_depth = len(root.parts)
    for current, dirs, files in os.walk(root):  # symlinked folders are listed, not entered
        here = Path(current)
        kept = []
        for name in sorted(dirs):
            if name in SKIP_DIRS:
                skipped.append(_entry(ctx, here / name, "/"))
            else:
                entries.append(_entry(ctx, here / name, "/"))
                kept.append(name)
        dirs[:] = kept if len(here.parts) - base_depth + 1 < max_depth else []
        entries += [_entry(ctx, here / name) for name in files]
        if len(entries) > 20 * MAX_LIST_ENTRIES:
            break
    entries.sort()
    more = max(0, len(entries) - MAX_LIST_ENTRIES)
    entries = entries[:MAX_LIST_ENTRIES]
    if not entries and not skipped:
        return ToolResult(f"{ctx.workspace.rel(root)} is empty")
    text = "\n".join(entries)
    if more:
        text += f"\n[… {more:,} more entries; list a subdirectory or lower max_depth]"
    if skipped:
        text += "\n[not listed: " + ", ".join(skipped[:20]) + (" …" if len(skipped) > 20 else "") + "]"
    return ToolResult(text)


def _entry(ctx: ToolContext, path: Path, suffix: str = "") -> str:
    """A listing line: the entry's own workspace-relative name (a symlink is not resolved to its
    target's name, which would list the target twice and hide the link), and where a link points."""
    name = path.relative_to(ctx.workspace.root).as_posix() + suffix
    if not path.is_symlink():
        return name
    target = resolve_path(path)
    if target is None:
        return f"{name} -> (a symlink loop)"
    inside = target == ctx.workspace.root or target.is_relative_to(ctx.workspace.root)
    shown = ctx.workspace.rel(target) if inside else "(outside the workspace)"
    return f"{name} -> {shown}{suffix if inside and target.is_dir() else ''}"
