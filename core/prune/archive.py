"""The raw output archive: every byte a command printed, kept so a pruned result can be paged.

One file per command (`out-7.log` in the session's folder), written while the command runs.
Reading streams line by line, so a 1 GB archive is paged or searched without loading it, and shows
the lines cleaned the way the pruner saw them (escapes and progress redraws resolved). When the
folder grows past its cap the oldest archives go, and the caller gets a notice saying so (in English
for the model, translated where a person is shown it).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from core.i18n import N_, Deferred
from core.pattern import Matcher, compile_pattern
from core.private import make_folder, open_file
from core.prune.clean import clean_line

MiB = 1024 * 1024
_NAME_RE = re.compile(r"^out-(\d+)\.log$")
_ID_RE = re.compile(r"^out-(\d+)$")
READ_CAP = 64 * 1024  # bytes of one line read at a time; the rest of a longer line is skipped
COUNT_CHUNK = 4 * MiB


class ArchiveWriter:
    """A binary append-only file a running command streams into, under the archive's cap.

    What lands on disk is redacted like everything else the session keeps: whole lines at a time,
    so a secret split across two reads is still found (a line longer than HOLD_BYTES is written in
    pieces, keeping back a tail long enough to hold any secret).

    The cap holds while the command runs: before the file passes what the folder has room for, the
    oldest archives go; when this file alone fills the cap, the rest of the output is counted, not
    kept. A write that fails (a full disk) stops the archive, never the command: the writer runs in
    the thread that drains the command's output."""

    HOLD_BYTES = 1 * MiB
    TAIL_BYTES = 4096
    CHECK_EVERY = 4 * MiB  # bytes written between two looks at the folder's size

    def __init__(self, archive: OutputArchive, archive_id: str) -> None:
        self.archive = archive
        self.archive_id = archive_id
        self.notice: Deferred | None = None  # set when older archives had to go, or the archive stopped
        self.skipped = 0  # bytes of output not kept: over the cap, or after a write failed
        self._pending = b""
        self._written = 0
        self._allowed = 0  # bytes this file may reach before the folder is looked at again
        self._stopped = False
        self._file: BinaryIO | None = None
        try:
            make_folder(archive.folder)
            self._file = open_file(archive.path(archive_id), "ab")
        except OSError as exc:
            self._stop(Deferred(N_("{id} could not be created ({problem}); this output is not kept"),
                                id=archive_id, problem=exc.strerror or str(exc)))

    def write(self, data: bytes | str) -> int:
        chunk = data.encode("utf-8", errors="replace") if isinstance(data, str) else data
        if self.archive.redact is None:
            self._put(chunk)
            return len(chunk)
        held = self._pending + chunk
        cut = held.rfind(b"\n") + 1
        if not cut and len(held) > self.HOLD_BYTES:
            cut = len(held) - self.TAIL_BYTES
        ready, self._pending = held[:cut], held[cut:]
        if ready:
            self._put(self._redacted(ready))
        return len(chunk)

    def flush(self) -> None:
        """Write out everything, the unfinished last line included (the command has ended)."""
        if self._pending:
            self._put(self._redacted(self._pending))
            self._pending = b""
        if self._file is not None:
            self._guarded(self._file.flush)

    def _put(self, data: bytes) -> None:
        if self._stopped or self._file is None:
            self.skipped += len(data)
            return
        if self._written + len(data) > self._allowed:
            self._make_room(len(data))
        room = self._allowed - self._written
        if len(data) > room:  # the cap is reached: keep what fits with the closing line, then only count
            kept = max(0, room - len(_STOPPED))
            self._guarded(self._file.write, data[:kept])
            self.skipped += len(data) - kept
            self._stop(Deferred(N_("{id} reached the {cap} archive cap; the rest of its output is not kept"),
                                id=self.archive_id, cap=_mb(self.archive.max_total_bytes)))
            return
        if self._guarded(self._file.write, data):
            self._written += len(data)

    def _make_room(self, need: int) -> None:
        room, notice = self.archive.make_room(self.archive_id, self._written + need)
        self._allowed = min(room, self._written + max(need, self.CHECK_EVERY))
        if notice:
            self._say(notice)

    def _guarded(self, action: Callable[..., object], *args: object) -> bool:
        try:
            action(*args)
            return True
        except OSError as exc:
            self._stop(Deferred(N_("{id} could not be written ({problem}); the rest of its output is not "
                                   "kept"), id=self.archive_id, problem=exc.strerror or str(exc)))
            return False

    def _stop(self, why: Deferred) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._say(why)
        try:
            if self._file is not None:
                self._file.write(_STOPPED)
                self._file.flush()
        except OSError:
            pass

    def _say(self, notice: Deferred) -> None:
        self.notice = (Deferred(N_("{earlier}; {later}"), earlier=self.notice, later=notice) if self.notice
                       else notice)

    def _redacted(self, data: bytes) -> bytes:
        assert self.archive.redact is not None
        # surrogateescape: bytes that are not UTF-8 (and characters cut by a read) stay exactly as they were
        return self.archive.redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    @property
    def closed(self) -> bool:
        return self._file is None or self._file.closed

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self.flush()
            try:
                self._file.close()
            except OSError as exc:
                self._stop(Deferred(N_("{id} could not be written ({problem})"), id=self.archive_id,
                                    problem=exc.strerror or str(exc)))
            notice = self.archive.enforce_cap(keep=self.archive_id)
            if notice:
                self._say(notice)

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


_STOPPED = b"\n[the archive stops here: see the session's notice]\n"


class OutputArchive:
    def __init__(self, folder: Path, max_total_bytes: int = 200 * MiB,
                 redact: Callable[[str], str] | None = None) -> None:
        self.folder = Path(folder)
        self.max_total_bytes = max_total_bytes
        self.redact = redact  # the session's redactor: the archive is on disk like the journal
        self.notices: list[Deferred] = []  # every cap notice so far, oldest first
        self._dropped: dict[str, Deferred] = {}  # archive id -> the notice that dropped it
        self._lock = threading.Lock()

    # --- writing -------------------------------------------------------------------------------

    def new_id(self) -> str:
        """The next free id ("out-1", "out-2"...), after any archive already in the folder.

        The file is created at once, so two sessions sharing a folder never get the same id. When
        it cannot be (a full disk), the id is still given: its writer says why nothing is kept.
        """
        with self._lock:
            try:
                make_folder(self.folder)
            except OSError:
                pass  # the writer reports it
            number = max(self._numbers(), default=0) + 1
            while True:
                try:
                    open_file(self.path(f"out-{number}"), exclusive=True).close()
                except FileExistsError:
                    number += 1
                    continue
                except OSError:
                    pass
                return f"out-{number}"

    def path(self, archive_id: str) -> Path:
        if not _ID_RE.match(archive_id):
            raise ValueError(f"{archive_id!r} is not an output id; ids look like 'out-7'")
        return self.folder / f"{archive_id}.log"

    def writer(self, archive_id: str) -> ArchiveWriter:
        return ArchiveWriter(self, archive_id)

    def write(self, archive_id: str, data: bytes | str) -> Deferred | None:
        """Append a whole output at once; returns the cap notice, if archives had to go."""
        with self.writer(archive_id) as w:
            w.write(data)
        return w.notice

    def make_room(self, archive_id: str, size: int) -> tuple[int, Deferred | None]:
        """Drop the oldest archives until `archive_id` can grow to `size` bytes under the cap (or no
        other is left); returns the size it may reach, and the notice when archives went."""
        notice = self.enforce_cap(keep=archive_id, extra=max(0, size - self._size(archive_id)))
        with self._lock:
            others = sum(self._size(f"out-{n}") for n in self._numbers() if f"out-{n}" != archive_id)
        return max(0, self.max_total_bytes - others), notice

    def _size(self, archive_id: str) -> int:
        try:
            return self.path(archive_id).stat().st_size
        except OSError:
            return 0

    def enforce_cap(self, keep: str | None = None, extra: int = 0) -> Deferred | None:
        """Drop the oldest archives until the folder, plus `extra` bytes to come, is under the cap;
        `keep` always stays."""
        with self._lock:
            files = sorted(((n, self.folder / f"out-{n}.log") for n in self._numbers()), key=lambda x: x[0])
            sizes = {n: p.stat().st_size for n, p in files if p.exists()}
            total = sum(sizes.values())
            dropped: list[int] = []
            freed = 0
            for n, p in files:
                if total + extra - freed <= self.max_total_bytes:
                    break
                if f"out-{n}" == keep or n not in sizes:
                    continue
                p.unlink(missing_ok=True)
                dropped.append(n)
                freed += sizes[n]
            if not dropped:
                return None
            span = f"out-{dropped[0]}" if len(dropped) == 1 else f"out-{dropped[0]}..out-{dropped[-1]}"
            notice = Deferred(N_("dropped {span} ({size}) to stay under the {cap} archive cap"), span=span,
                              size=_mb(freed), cap=_mb(self.max_total_bytes))
            for n in dropped:
                self._dropped[f"out-{n}"] = notice
            self.notices.append(notice)
            return notice

    # --- reading -------------------------------------------------------------------------------

    def read(self, archive_id: str, offset: int = 1, limit: int = 200, grep: str | None = None) -> str:
        """Numbered lines `offset`..`offset+limit-1` (1-based), or with `grep` the matching lines.

        Raises ValueError with a message meant for the model: unknown or dropped id, bad range,
        invalid regex.
        """
        path = self._existing(archive_id)
        if offset < 1 or limit < 1:
            raise ValueError(f"offset and limit count lines from 1 (got offset={offset}, limit={limit})")
        if grep is not None:
            pattern = compile_pattern(grep)  # linear time: a model's regex cannot hang the agent
            return self._grep(archive_id, path, pattern, offset, limit)
        return self._page(archive_id, path, offset, limit)

    def ids(self) -> list[str]:
        return [f"out-{n}" for n in sorted(self._numbers())]

    def _existing(self, archive_id: str) -> Path:
        path = self.path(archive_id)
        if path.exists():
            return path
        if archive_id in self._dropped:
            raise ValueError(f"{archive_id} is gone: {self._dropped[archive_id]}")
        known = self.ids()
        have = f"the archive holds {known[0]}..{known[-1]}" if known else "the archive is empty"
        raise ValueError(f"unknown output id {archive_id!r}; {have}")

    def _page(self, archive_id: str, path: Path, offset: int, limit: int) -> str:
        out: list[str] = []
        last = offset + limit - 1
        with path.open("rb") as f:
            number = 0
            for number, line in _numbered(f):
                if number >= offset:
                    out.append(_format(number, line))
                    if number == last:
                        break
            total = number + _count_rest(f) if number == last else number
        if not out:
            return f"{archive_id} has {total:,} lines; offset {offset:,} is past the end"
        shown_to = offset + len(out) - 1
        head = f"{archive_id}: lines {offset:,}-{shown_to:,} of {total:,}"
        tail = (f"\n… {total - shown_to:,} more lines; read_output id={archive_id} offset={shown_to + 1}"
                if total > shown_to else "")
        return head + "\n" + "\n".join(out) + tail

    def _grep(self, archive_id: str, path: Path, pattern: Matcher, offset: int, limit: int) -> str:
        out: list[str] = []
        matches = 0
        with path.open("rb") as f:
            for number, line in _numbered(f):
                if number >= offset and pattern.search(line):
                    matches += 1
                    if len(out) < limit:
                        out.append(_format(number, line))
        where = f" from line {offset:,}" if offset > 1 else ""
        if not matches:
            return f"{archive_id}: no line matches /{pattern.pattern}/{where}"
        head = f"{archive_id}: {matches:,} lines match /{pattern.pattern}/{where}"
        tail = (f"\n… showing the first {limit:,}; narrow the regex, or pass offset={_number(out[-1]) + 1}"
                if matches > limit else "")
        return head + "\n" + "\n".join(out) + tail

    def _numbers(self) -> list[int]:
        if not self.folder.is_dir():
            return []
        return [int(m.group(1)) for p in self.folder.iterdir() if (m := _NAME_RE.match(p.name))]


def _numbered(f: BinaryIO) -> Iterator[tuple[int, str]]:
    """(1-based number, cleaned text) for each line, reading at most READ_CAP bytes of any line."""
    number = 0
    while chunk := f.readline(READ_CAP):
        number += 1
        rest = 0
        if len(chunk) == READ_CAP and not chunk.endswith(b"\n"):
            while True:  # skip the rest of a giant line, counting it (without its newline)
                more = f.readline(READ_CAP)
                rest += len(more.rstrip(b"\n"))
                if not more or more.endswith(b"\n"):
                    break
        text = chunk.rstrip(b"\n").decode("utf-8", errors="replace")
        yield number, clean_line(text, len(chunk) + rest if rest else None)


def _count_rest(f: BinaryIO) -> int:
    """Lines left after the current position, counted in chunks (fast, bounded memory)."""
    count = 0
    last = b"\n"
    while chunk := f.read(COUNT_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _format(number: int, text: str) -> str:
    return f"{number:>6}\t{text}"


def _number(formatted: str) -> int:
    return int(formatted.split("\t", 1)[0])


def _mb(n: int) -> str:
    if n >= 10 * MiB:
        return f"{n / MiB:.0f} MB"
    return f"{n / MiB:.1f} MB" if n >= MiB else f"{n / 1024:.0f} KB"
