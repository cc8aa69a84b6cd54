"""The session journal: an append-only JSONL file per session, fsynced record by record.

It is the transcript exactly as it happened; context shaping never writes to it. Loading repairs
what a crash can leave behind: a torn last line is skipped with a notice, and a function call
whose output never arrived gets a synthetic output saying it was interrupted, so the next request
is valid. Sessions live in the platform's user data folder, one folder per session, next to the
session's raw output archives.
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from core.i18n import _, ngettext
from core.private import make_folder, open_file
from core.secrets import Redactor
from core.session.items import (
    FunctionCall,
    FunctionCallOutput,
    Item,
    ToolOutcome,
    UserMessage,
    item_from_record,
    to_record,
)
from core.session.lock import FileLock, Locked

JOURNAL_NAME = "journal.jsonl"
FORMAT_VERSION = 1
INTERRUPTED_OUTPUT = "[interrupted: this call was not completed (the agent stopped); run it again if needed]"


def sessions_root(override: str | None = None) -> Path:
    """`%LOCALAPPDATA%\\deepseek-agent\\sessions` on Windows, the XDG state folder elsewhere.

    Sessions hold up to hundreds of MB of raw command output: bulk data of this machine, which the
    roaming `%APPDATA%` would copy to every machine a domain user logs on to."""
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "deepseek-agent" / "sessions"


@dataclass
class Loaded:
    items: list[Item]
    notices: list[str] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)
    usage: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    # usage and compaction records in order, each with how many items came before it: the replay
    # that restores the session's context shaping (ContextManager.restore)
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


class JournalError(Exception):
    """The journal cannot be written (disk full, folder gone); the message says where and why."""


class SessionLocked(JournalError):
    """Another agent has this session open; the message says which process."""


class Journal:
    """Appends records to `<folder>/journal.jsonl`; every record is on disk when `write` returns.

    A new session's folder and file appear with its first record (its header first), so starting
    the agent and quitting leaves no empty session behind to be listed or resumed.
    """

    def __init__(self, folder: Path, redact: Redactor | None = None, header: dict[str, Any] | None = None) -> None:
        self.folder = folder
        self.path = folder / JOURNAL_NAME
        self.id = folder.name
        self._redact = redact or Redactor()
        self._header = header
        self._file: BinaryIO | None = None
        self._torn = False  # the last write failed part-way: its bytes may end without a newline
        self._lock = FileLock(folder)
        if header is None:
            self._open()  # an existing session: fail now, not at the first write
        else:
            _check_writable(folder.parent)

    @classmethod
    def create(cls, root: Path, workspace: Path, model: str, redact: Redactor | None = None) -> Journal:
        now = time.time_ns()
        when = datetime.datetime.fromtimestamp(now / 1e9)
        stamp = when.strftime("%Y%m%d-%H%M%S")
        # "created" is for people (whole seconds); "created_ns" orders sessions started in one second.
        header = {"kind": "session", "version": FORMAT_VERSION, "workspace": str(workspace), "model": model,
                  "created": when.isoformat(timespec="seconds"), "created_ns": now}
        # 32 random bits: two agents started in the same second do not pick the same id (and if they
        # did, the session lock would stop the second at its first write instead of sharing it).
        return cls(root / f"{stamp}-{secrets.token_hex(4)}", redact, header)

    def _open(self) -> BinaryIO:
        if self._file is None:
            try:
                make_folder(self.folder.parent)
                make_folder(self.folder)
                self._lock.acquire(_("session {id}").format(id=self.id))
                # Unbuffered: a failed write leaves nothing behind in a buffer to be glued to the next one.
                self._file = open_file(self.path, "a+b", buffering=0)  # held open for the session's lifetime
                _end_torn_line(self._file)
            except Locked as exc:
                raise SessionLocked(str(exc)) from None
            except OSError as exc:
                raise JournalError(_("cannot write the session journal {path}: {problem}").format(
                    path=self.path, problem=exc.strerror or exc)) from exc
            if self._header is not None:
                header, self._header = self._header, None
                self.write(header)
        return self._file

    def append(self, item: Item) -> None:
        self.write(to_record(item))

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(self._redact.deep(record), ensure_ascii=False, separators=(",", ":")) + "\n"
        handle = self._open()
        try:
            if self._torn:  # end the failed record's bytes, so this record starts on a line of its own
                _end_torn_line(handle)
                self._torn = False
            data = memoryview(line.encode("utf-8", errors="replace"))
            while data:
                data = data[handle.write(data) or 0:]
            os.fsync(handle.fileno())
        except (OSError, ValueError) as exc:
            self._torn = True
            raise JournalError(_("cannot write the session journal {path}: {problem}").format(
                path=self.path, problem=exc)) from exc

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.close()
        self._lock.release()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_writable(root: Path) -> None:
    try:
        make_folder(root)
    except OSError as exc:
        raise JournalError(_("cannot create the sessions folder {path}: {problem}").format(
            path=root, problem=exc.strerror or exc)) from exc
    if not os.access(root, os.W_OK):
        raise JournalError(_("the sessions folder {path} is not writable").format(path=root))


def _end_torn_line(handle: BinaryIO) -> None:
    """A crash mid-write leaves a last line without its newline: end it, so the next record starts
    on a line of its own instead of being glued to the damaged one."""
    handle.seek(0, os.SEEK_END)
    if handle.tell() == 0:
        return
    handle.seek(-1, os.SEEK_END)
    if handle.read(1) != b"\n":
        handle.write(b"\n")
        handle.flush()


def load(folder: Path) -> Loaded:
    """Read a session back, repairing what a crash may have left (see the module docstring)."""
    path = folder / JOURNAL_NAME
    loaded = Loaded(items=[])
    raw_lines = path.read_bytes().split(b"\n")
    last = len(raw_lines) - 1
    for number, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            where = _("its last line was cut off (the agent stopped while writing)") if number >= last - 1 \
                else _("line {number} is damaged").format(number=number + 1)
            loaded.notices.append(_("session {name}: {where}; that record was skipped").format(
                name=folder.name, where=where))
            continue
        kind = record.get("kind") if isinstance(record, dict) else None
        if kind == "session":
            loaded.header = record
        elif kind == "usage":
            loaded.usage.append(record)
            loaded.events.append((len(loaded.items), record))
        elif kind == "compaction":
            loaded.compactions.append(record)
            loaded.events.append((len(loaded.items), record))
        elif kind in ("checkpoint", "undo"):  # workspace checkpoints: core/checkpoints reads them itself
            continue
        else:
            try:
                loaded.items.append(item_from_record(record))
            except (ValueError, TypeError) as exc:
                loaded.notices.append(_("session {name}: line {number} skipped ({error})").format(
                    name=folder.name, number=number + 1, error=exc))
    loaded.items, repaired = repair(loaded.items)
    if repaired:
        loaded.notices.append(ngettext("session {name}: {count} interrupted tool call was marked as such",
                                       "session {name}: {count} interrupted tool calls were marked as such",
                                       repaired).format(name=folder.name, count=repaired))
    return loaded


def repair(items: list[Item]) -> tuple[list[Item], int]:
    """Give every call an output (synthetic when missing) and drop outputs without a call."""
    answered = {item.call_id for item in items if isinstance(item, FunctionCallOutput)}
    called = {item.call_id for item in items if isinstance(item, FunctionCall)}
    result: list[Item] = []
    missing: list[FunctionCall] = []
    added = 0
    for item in [*items, None]:
        if missing and not isinstance(item, FunctionCall | FunctionCallOutput):
            result += [_interrupted(call) for call in missing]
            added += len(missing)
            missing = []
        if item is None or (isinstance(item, FunctionCallOutput) and item.call_id not in called):
            continue
        result.append(item)
        if isinstance(item, FunctionCall) and item.call_id not in answered:
            missing.append(item)
    return result, added


def _interrupted(call: FunctionCall) -> FunctionCallOutput:
    return FunctionCallOutput(call_id=call.call_id, output=INTERRUPTED_OUTPUT,
                              outcome=ToolOutcome(tool=call.name, status="interrupted"))


@dataclass
class SessionInfo:
    id: str
    folder: Path
    created: str
    first_prompt: str
    workspace: str
    started_ns: int = 0  # the precise creation time; journals written before it had only "created"

    def size(self) -> int:
        """Bytes on disk: the journal and the output archives."""
        return sum(f.stat().st_size for f in self.folder.rglob("*") if f.is_file())


def list_sessions(root: Path) -> list[SessionInfo]:
    """Every session under `root`, newest first."""
    if not root.is_dir():
        return []
    infos = [info for folder in root.iterdir() if (info := _info(folder)) is not None]
    return sorted(infos, key=lambda info: (info.started_ns, info.id), reverse=True)


def _info(folder: Path) -> SessionInfo | None:
    path = folder / JOURNAL_NAME
    if not path.is_file():
        return None
    header: dict[str, Any] = {}
    first = ""
    for record in _head_records(path, 200):
        if record.get("kind") == "session":
            header = record
        elif record.get("kind") == UserMessage.kind:
            first = str(record.get("text", ""))
            break
    created = str(header.get("created", ""))
    return SessionInfo(id=folder.name, folder=folder, created=created,
                       first_prompt=" ".join(first.split()), workspace=str(header.get("workspace", "")),
                       started_ns=_started_ns(header.get("created_ns"), created))


def _started_ns(precise: Any, created: str) -> int:
    """The header's precise time, else its whole-second ISO time (older journals), else 0 (sorts last)."""
    if isinstance(precise, int) and not isinstance(precise, bool):
        return precise
    try:
        return int(datetime.datetime.fromisoformat(created).timestamp()) * 1_000_000_000
    except ValueError:
        return 0


def _head_records(path: Path, limit: int) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for _, raw in zip(range(limit), handle, strict=False):
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def find_sessions(root: Path, wanted: str | None, exclude: str = "") -> list[SessionInfo]:
    """The latest session, or those whose id is (or starts with) `wanted`; one match is a hit.
    `exclude` leaves out the session asking (/resume means another one)."""
    sessions = [s for s in list_sessions(root) if s.id != exclude]
    if not wanted:
        return sessions[:1]
    exact = [s for s in sessions if s.id == wanted]
    return exact or [s for s in sessions if s.id.startswith(wanted)]
