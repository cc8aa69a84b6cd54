"""Checkpoints: every change the agent makes to the workspace, journaled so it can be shown and undone.

* The file tools report each write (`file_changed`): the previous bytes go to the session's blob
  store and a `checkpoint` record (turn, path, previous and new content hashes) to the journal.
* Each shell command runs inside `command()`: in a git work tree, a private snapshot before and
  after it (see `gitsnap`) gives the previous bytes of every file it touched; elsewhere, a scan of
  sizes and modification times says what it created, changed or deleted, and the previous content
  of changed and deleted files is not known (they are named as not restorable).
* `plan_undo` / `apply_undo` put files back as they were before the last turns, refusing to
  overwrite a file that changed since the agent left it unless told to; `diff` shows what changed.

Records live in the session journal (`kind` "checkpoint" and "undo"), so a resumed session keeps
them; the blobs live in `<session>/checkpoints/blobs` and go with the session folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import protocol as ev
from core.checkpoints import scan as scanning
from core.checkpoints.diff import unified
from core.checkpoints.gitsnap import CREDENTIAL, IGNORED, GitError, GitSnapshots, Snapshot
from core.checkpoints.store import BlobStore, digest
from core.credentials import is_credential_path
from core.i18n import N_, _
from core.private import make_folder
from core.protocol import Emit

UNKNOWN = "?"  # a previous content the agent does not have
# Why a previous content is not kept: recorded in English (the journal, the model), translated where shown.
CHANGED_OUTSIDE_GIT = N_("changed by a command outside git, where its previous content cannot be kept")
DELETED_OUTSIDE_GIT = N_("deleted by a command outside git, where its previous content cannot be kept")
TOO_MANY = N_("the command changed too many files or bytes for all of them to be kept")
HOLDS_KEY = N_("it holds the API key, which is never copied into the session folder")
NOT_KEPT = N_("its previous content was not kept")
COPY_MISSING = N_("its saved copy is missing from the session folder")
MAX_COMMAND_PATHS = 2000  # files one command may change and still have their previous bytes kept
MAX_COMMAND_BYTES = 200 * 1024 * 1024
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)  # binary on Windows, where links are rare
CHECKPOINT = "checkpoint"  # the journal record kind and the event name
UNDO = "undo"


@dataclass
class Change:
    path: str  # workspace-relative, POSIX
    before: str | None  # SHA-256 in the blob store; None: the file did not exist; UNKNOWN: not kept
    after: str | None  # what the agent left: a state (see `Checkpoints._state`) or "stat:<size>:<mtime_ns>"
    why: str = ""  # why the previous content was not kept, when it was not
    link: bool = False  # the path was a symlink: `before` holds its target


@dataclass
class Checkpoint:
    turn: int
    source: str  # the tool: write_file, edit_file or run_shell
    changes: list[Change]
    command: str = ""
    prompt: str = ""  # the turn's task, to name the turn in /undo
    workspace: str = ""  # the folder the paths are relative to

    def record(self) -> dict[str, Any]:
        return {"kind": CHECKPOINT, "turn": self.turn, "source": self.source, "command": self.command,
                "prompt": self.prompt, "workspace": self.workspace,
                "changes": [{**_path_fields(c.path), "before": c.before, "after": c.after,
                             **({"why": c.why} if c.why else {}), **({"link": True} if c.link else {})}
                            for c in self.changes]}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Checkpoint:
        changes = [Change(_path_from(c), c.get("before"), c.get("after"), str(c.get("why", "")), bool(c.get("link")))
                   for c in record.get("changes", [])]
        return cls(int(record["turn"]), str(record.get("source", "")), changes, str(record.get("command", "")),
                   str(record.get("prompt", "")), str(record.get("workspace", "")))


@dataclass
class Restore:
    path: str
    data: bytes | None  # None: delete the file
    conflict: bool = False  # the file changed since the agent left it
    link: bool = False  # `data` is the target of a symlink to make


@dataclass
class UndoPlan:
    turns: list[int]
    prompts: list[str]
    restores: list[Restore] = field(default_factory=list)
    cannot: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def conflicts(self) -> list[str]:
        return [r.path for r in self.restores if r.conflict]

    def describe(self) -> str:
        """The files and what will happen to each, one per line."""
        lines = ["  " + (_("delete {path}") if r.data is None else _("restore {path}")).format(path=r.path)
                 + (_(" (a symlink)") if r.link else "")
                 + (_(" (changed outside the agent since)") if r.conflict else "") for r in self.restores]
        lines += ["  " + _("cannot restore {path}: {why}").format(path=path, why=_(why))
                  for path, why in self.cannot]
        return "\n".join(lines)


class Checkpoints:
    """One session's checkpoints. `write` appends a record to the session journal."""

    def __init__(self, folder: Path, workspace: Path, write: Callable[[dict[str, Any]], None],
                 emit: Emit, secrets: Sequence[str] = ()) -> None:
        self.folder = folder
        self.workspace = workspace.resolve()
        self._write = write
        self._emit = emit
        self._secrets = [s for s in secrets if s]
        self.store = BlobStore(folder / "checkpoints" / "blobs")
        self.checkpoints: list[Checkpoint] = []
        self.elsewhere: set[str] = set()  # workspaces of a resumed session's earlier turns, when not this one
        self.undone: set[int] = set()
        self.turn = 0
        self._prompt = ""
        self._notes: list[str] = []
        self._git: GitSnapshots | bool | None = False  # False: not looked for yet
        self._said_incomplete = False
        self._load(folder / "journal.jsonl")

    def _load(self, journal: Path) -> None:
        """A resumed session's checkpoints and undos, from its journal."""
        if not journal.is_file():
            return
        with journal.open("rb") as handle:
            for raw in handle:
                if b'"checkpoint"' not in raw and b'"undo"' not in raw:
                    continue
                try:
                    record = json.loads(raw)
                    if record.get("kind") == CHECKPOINT:
                        checkpoint = Checkpoint.from_record(record)
                        if checkpoint.workspace and Path(checkpoint.workspace) != self.workspace:
                            self.elsewhere.add(checkpoint.workspace)  # its paths mean other files here
                            self.turn = max(self.turn, checkpoint.turn)
                            continue
                        self.checkpoints.append(checkpoint)
                    elif record.get("kind") == UNDO:
                        self.undone.update(int(t) for t in record.get("turns", []))
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # a damaged line: the journal loader reports those
        self.turn = max([c.turn for c in self.checkpoints] + list(self.undone) + [self.turn])

    # -- recording ---------------------------------------------------------------------------
    def begin_turn(self, prompt: str) -> list[str]:
        """A new task starts; returns what the model must be told first (files an undo reverted)."""
        self.turn += 1
        self._prompt = " ".join(prompt.split())[:200]
        notes, self._notes = self._notes, []
        return notes

    def file_changed(self, source: str, rel: str, before: bytes | None, after: bytes) -> None:
        """A file tool replaced `rel`'s content `before` (None: it did not exist) with `after`."""
        if before == after:
            return
        sha, why = self._keep(rel, before) if before is not None else (None, "")
        self._add(Checkpoint(self.turn, source, [Change(rel, sha, digest(after), why)]))

    def _keep(self, rel: str, data: bytes) -> tuple[str, str]:
        """Store a previous content; credentials and the API key never go into the session folder."""
        if is_credential_path(rel):
            return UNKNOWN, CREDENTIAL
        if any(secret.encode() in data for secret in self._secrets):
            return UNKNOWN, HOLDS_KEY
        try:
            return self.store.put(data), ""
        except OSError as exc:  # the change itself stands; only its undo is lost, and the user is told
            why = f"its previous content could not be saved ({exc.strerror or exc})"
            message = _("{path}: its previous content could not be saved ({error})").format(
                path=rel, error=exc.strerror or exc)
            self._emit(ev.Notice(kind="warning", message=message))
            return UNKNOWN, why

    @contextlib.contextmanager
    def command(self, command: str) -> Iterator[None]:
        """Around one shell command: find out what it changed and keep what can be kept (also when
        the command was interrupted: what it did before that is recorded too)."""
        git = self._snapshots()
        before: Snapshot | None = None
        if git is not None:
            try:
                before = git.snapshot()
            except Exception as exc:  # git failing must not stop the command: fall back to the scan
                message = _("no snapshot before this command ({error})").format(error=exc)
                self._emit(ev.Notice(kind="warning", message=message))
        start = scanning.scan(self.workspace) if before is None else None
        try:
            yield
        finally:
            try:
                if git is not None and before is not None:
                    self._after_snapshot(git, before, command)
                elif start is not None:
                    self._after_scan(command, start)
            except Exception as exc:  # a fault here must not cost the command's result
                self._emit(ev.Notice(kind="warning", message=_(
                    "what this command changed was not recorded ({error}); /undo cannot restore it").format(
                        error=f"{type(exc).__name__}: {exc}")))

    def _after_snapshot(self, git: GitSnapshots, before: Snapshot, command: str) -> None:
        try:
            after = git.snapshot()
            changed = git.changed(before, after)
            old = git.blobs(before, changed[:MAX_COMMAND_PATHS])
        except (GitError, OSError) as exc:
            self._emit(ev.Notice(kind="warning",
                                 message=_("no snapshot after this command ({error})").format(error=exc)))
            return
        changes, kept = [], 0
        for rel in changed:
            data = old.get(rel, UNKNOWN)
            link = rel in before.links
            if link:
                data = os.fsencode(before.links[rel])
            if isinstance(data, bytes) and kept + len(data) <= MAX_COMMAND_BYTES:
                kept += len(data)
                sha, why = self._keep(rel, data)
            elif isinstance(data, bytes) or data == UNKNOWN:
                sha, why = UNKNOWN, TOO_MANY
            elif rel in before.left_out:
                sha, why = UNKNOWN, before.left_out[rel][1]
            else:
                sha, why = None, ""  # the command created it
            changes.append(Change(rel, sha, self._state(rel), why, link))
        for rel in sorted((set(before.left_out) | set(after.left_out)) - set(changed)):  # not kept: named
            was, now = before.left_out.get(rel), after.left_out.get(rel)
            if was is not None and (now is None or now[0] != was[0]):
                changes.append(Change(rel, UNKNOWN, self._stat_state(rel), was[1]))
            elif was is None and now is not None and now[1] != IGNORED:
                changes.append(Change(rel, None, self._stat_state(rel)))  # the command created it
        if changes:
            self._add(Checkpoint(self.turn, "run_shell", changes, command))

    def _after_scan(self, command: str, start: scanning.Scan) -> None:
        found = scanning.compare(start, scanning.scan(self.workspace))
        changes = [Change(p, None, self._stat_state(p)) for p in found.created]
        changes += [Change(p, UNKNOWN, self._stat_state(p), CHANGED_OUTSIDE_GIT) for p in found.changed]
        changes += [Change(p, UNKNOWN, None, DELETED_OUTSIDE_GIT) for p in found.deleted]
        if not found.complete and not self._said_incomplete:
            self._said_incomplete = True
            self._emit(ev.Notice(kind="warning", message=_(
                "the workspace has over {count:,} files and is not a git work tree: what commands change is "
                "only partly tracked").format(count=scanning.MAX_SCAN_ENTRIES)))
        if changes:
            self._add(Checkpoint(self.turn, "run_shell", sorted(changes, key=lambda c: c.path), command))

    def _snapshots(self) -> GitSnapshots | None:
        """git snapshots when the workspace is a work tree (else None: the scan stands in for them)."""
        if self._git is False:
            found = GitSnapshots.detect(self.workspace, self.folder / "checkpoints")
            if found is not None:
                try:
                    make_folder(found.scratch)
                except OSError as exc:  # a full disk: this command is scanned instead; try again next time
                    self._emit(ev.Notice(kind="warning", message=_(
                        "no snapshot before this command ({error})").format(
                            error=f"{exc.strerror or exc}: {found.scratch}")))
                    return None
            self._git = found
        return self._git or None

    def _add(self, checkpoint: Checkpoint) -> None:
        if not checkpoint.changes:
            return
        if not any(c.turn == checkpoint.turn for c in self.checkpoints):
            checkpoint.prompt = self._prompt
        checkpoint.workspace = str(self.workspace)
        self.checkpoints.append(checkpoint)
        self._write(checkpoint.record())
        self._emit(ev.CheckpointMade(turn=checkpoint.turn, source=checkpoint.source,
                                     paths=[c.path for c in checkpoint.changes],
                                     not_restorable=[c.path for c in checkpoint.changes if c.before == UNKNOWN]))

    # -- the workspace now (a symlink is never followed) ---------------------------------------
    def _file(self, rel: str) -> Path:
        """The path of `rel`, which must name an entry inside the workspace (its folder, resolved, is)."""
        path = self.workspace / rel
        if path.name in ("", ".", "..") or not path.parent.resolve().is_relative_to(self.workspace):
            raise ValueError(f"{rel} is outside the workspace")
        return path

    def _read(self, rel: str) -> bytes | None:
        """The bytes of `rel` when it is a regular file (not a symlink to one); else None."""
        try:
            fd = os.open(self._file(rel), os.O_RDONLY | _NO_FOLLOW | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None
        with os.fdopen(fd, "rb") as handle:
            return handle.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None

    def _state(self, rel: str) -> str | None:
        """What `rel` is now: None (nothing), the SHA-256 of a file's bytes, "link:<target>", or "other"."""
        try:
            info = os.lstat(self._file(rel))
            if stat.S_ISLNK(info.st_mode):
                return "link:" + os.readlink(self._file(rel))
        except (OSError, ValueError):
            return None
        data = self._read(rel)
        return digest(data) if data is not None else "other"

    def _stat_state(self, rel: str) -> str | None:
        try:
            info = os.lstat(self._file(rel))
        except (OSError, ValueError):
            return None
        return f"stat:{info.st_size}:{info.st_mtime_ns}"

    def _matches(self, rel: str, state: str | None) -> bool:
        if state is not None and state.startswith("stat:"):
            return self._stat_state(rel) == state
        return self._state(rel) == state

    # -- undo ----------------------------------------------------------------------------------
    def undoable_turns(self) -> list[int]:
        return sorted({c.turn for c in self.checkpoints if c.turn not in self.undone and c.changes})

    def plan_undo(self, count: int = 1) -> UndoPlan:
        """What undoing the last `count` turns that changed files would do; changes nothing."""
        turns = self.undoable_turns()[-count:] if count > 0 else []
        chosen = [c for c in self.checkpoints if c.turn in turns]
        prompts = [next((c.prompt for c in chosen if c.turn == t and c.prompt), "") for t in turns]
        plan = UndoPlan(turns, prompts)
        first: dict[str, Change] = {}
        last: dict[str, Change] = {}
        for checkpoint in chosen:
            for change in checkpoint.changes:
                first.setdefault(change.path, change)
                last[change.path] = change
        for rel in sorted(first):
            target = first[rel].before
            if target == UNKNOWN:
                plan.cannot.append((rel, first[rel].why or NOT_KEPT))
                continue
            data = None if target is None else self.store.get(target)
            if target is not None and data is None:
                plan.cannot.append((rel, COPY_MISSING))
                continue
            link = first[rel].link
            was = "link:" + os.fsdecode(data) if link and data is not None else target
            if self._state(rel) == was:
                continue  # already as it was
            plan.restores.append(Restore(rel, data, not self._matches(rel, last[rel].after), link))
        return plan

    def apply_undo(self, plan: UndoPlan, overwrite: bool = False) -> tuple[list[str], list[tuple[str, str]]]:
        """Put the planned files back: the paths restored, and (path, why) for those that could not be.
        A plan with conflicts needs `overwrite` (the user's yes to losing those changes)."""
        if plan.conflicts and not overwrite:
            raise ValueError("changed outside the agent since it left them: " + ", ".join(plan.conflicts))
        restored, failed = [], []
        for item in plan.restores:
            try:
                self._put_back(item)
                restored.append(item.path)
            except (OSError, ValueError) as exc:
                failed.append((item.path, getattr(exc, "strerror", None) or str(exc)))
        cannot = plan.cannot + failed
        self.undone.update(plan.turns)
        self._write({"kind": UNDO, "turns": plan.turns, "restored": restored, "overwrote": plan.conflicts,
                     "not_restored": [{"path": p, "why": why} for p, why in cannot]})
        self._emit(ev.Undone(turns=plan.turns, restored=restored,
                             not_restored=[{"path": p, "why": why} for p, why in cannot]))
        if restored or cannot:
            self._notes.append(_note_for_model(restored, cannot))
        return restored, cannot

    def _put_back(self, item: Restore) -> None:
        """Make `item.path` what it was, replacing whatever is there now (a symlink included) without
        following it: a new file or link is made beside it and renamed over it."""
        path = self._file(item.path)
        if item.data is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path = self._file(item.path)  # the folders made must not have led outside
        temp = path.with_name(f".undo-{secrets.token_hex(8)}.tmp")
        try:
            if item.link:
                os.symlink(os.fsdecode(item.data), temp)
            else:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW
                with os.fdopen(os.open(temp, flags, 0o666), "wb") as handle:
                    handle.write(item.data)
                with contextlib.suppress(OSError):  # the mode of the file it replaces, when that is a file
                    info = os.lstat(path)
                    if stat.S_ISREG(info.st_mode):
                        os.chmod(temp, stat.S_IMODE(info.st_mode))
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    # -- diff ----------------------------------------------------------------------------------
    def diff(self, last_turn_only: bool = False) -> str:
        """A unified diff of what the session (or its last turn that changed files) changed: each
        file from before its first change to what it holds now."""
        turns = self.undoable_turns()
        if last_turn_only:
            turns = turns[-1:]
        first: dict[str, Change] = {}
        for checkpoint in self.checkpoints:
            if checkpoint.turn in turns:
                for change in checkpoint.changes:
                    first.setdefault(change.path, change)
        parts = []
        for rel in sorted(first):
            before = first[rel].before
            if before == UNKNOWN:
                parts.append(f"{rel}: {_(first[rel].why or NOT_KEPT)}")
                continue
            old = self.store.get(before) if before is not None else None
            if first[rel].link and old is not None:
                parts.append(_("{path}: was a symlink to {target}").format(path=rel, target=os.fsdecode(old)))
                old = None
            now = self._state(rel) or ""
            if now.startswith("link:"):
                parts.append(_("{path}: is now a symlink to {target}").format(path=rel, target=now[5:]))
            text = unified(rel, old, self._read(rel))
            if text:
                parts.append(text)
        return "\n".join(parts)

    def size(self) -> int:
        return self.store.size()


def _note_for_model(restored: list[str], cannot: list[tuple[str, str]]) -> str:
    text = "[The user ran /undo."
    if restored:
        text += " These files were put back as they were before the undone turn(s), so what you wrote or " \
                "ran there no longer applies to them: " + ", ".join(restored) + "."
    if cannot:
        text += " These could not be restored and keep their current content: " + ", ".join(p for p, _ in cannot) + "."
    return text + " Read files again before relying on them.]"


def _path_fields(path: str) -> dict[str, str]:
    """A path in a record: as text, and as the hex of its bytes when they are not UTF-8 (the journal
    stores text, and a name must come back exactly for /undo to find the file)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "surrogateescape")
        return {"path": raw.decode("utf-8", "replace"), "raw": raw.hex()}
    return {"path": path}


def _path_from(change: dict[str, Any]) -> str:
    raw = change.get("raw")
    return bytes.fromhex(raw).decode("utf-8", "surrogateescape") if raw else str(change["path"])


def session_checkpoints_size(folder: Path) -> int:
    """Bytes the checkpoints of the session in `folder` take (for the session listing)."""
    return BlobStore(folder / "checkpoints" / "blobs").size()

