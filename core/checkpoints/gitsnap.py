"""Snapshots of a git work tree that the user never sees: the blob id of every file's exact bytes.

A snapshot maps each file git shows (tracked, and untracked but not ignored) to a blob holding its
bytes exactly as they are in the work tree, and each symlink to its target. Files are hashed
without filters (`hash-object --no-filters`, or `fast-import` for many: one pack instead of
thousands of loose objects), so line-ending conversions (`core.autocrlf`, `.gitattributes`
text/eol) and clean filters never change what comes back. The user's index, HEAD, branches and
stash list are never touched, no program a config names runs (`core.checkpoints.gitsafe`) and no
ref is made: the blobs are unreachable objects
(git prunes them after two weeks), and the agent copies the previous bytes of what a command
changed into the session's own store at once.

Hashing every file around every command would be slow, so a file keeps the blob id it had while
its size, times, inode and mode stay the same (unless it changed so recently that another change
could hide in the same timestamp). The first snapshot takes a tracked file's blob id from the
user's index when git calls the file clean and the blob has the file's size: a conversion that
changes bytes changes the size, except with a filter driver, whose files are hashed.

Ignored files are not kept, only their size and mtime (an ignored folder as a whole, by its
presence), and so are files over `MAX_FILE_BYTES` and credential files: a command that deletes or
changes one can name it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.checkpoints.gitsafe import BASE_OPTIONS, driver_options, git_argv, safe_env, user_excludes_file
from core.credentials import is_credential_path
from core.i18n import N_
from core.tools import helpers

MAX_FILE_BYTES = 20 * 1024 * 1024  # bigger untracked or changed files are not snapshotted (nor credentials)
FAST_IMPORT_FROM = 200  # files to hash at once from which one pack beats loose objects
MAX_IGNORED = 20_000  # ignored files named at most (beyond, changes to them go unnoticed)
RACY_NS = 3_000_000_000  # a file changed this recently may change again within its timestamp's tick
# Why a file's previous content is not kept: recorded in English, translated where it is shown.
TOO_BIG = N_("over 20 MB, so its content is not kept")
CREDENTIAL = N_("a credential file: its content is not copied into the session folder")
IGNORED = N_("ignored by git, so its content is not kept")

StatKey = tuple[int, int, int, int, int]  # size, mtime_ns, ctime_ns, inode, mode


class GitError(Exception):
    """A git command failed; the message has git's own words."""


@dataclass
class Snapshot:
    files: dict[str, str] = field(default_factory=dict)  # workspace-relative path -> blob id of its bytes
    links: dict[str, str] = field(default_factory=dict)  # path -> symlink target
    # Not kept, only named: path ("dir/" for a whole ignored folder) -> ((size, mtime_ns), why).
    left_out: dict[str, tuple[tuple[int, int], str]] = field(default_factory=dict)

    def state(self, rel: str) -> tuple[str | None, str | None]:
        return self.files.get(rel), self.links.get(rel)


class GitSnapshots:
    """Snapshots of the work tree under `workspace` (which may be a sub-folder of the repository)."""

    def __init__(self, git: str, top: Path, prefix: str, scratch: Path, excludes: str | None = None) -> None:
        self.git = git  # the absolute path of the git it runs (core.tools.helpers)
        self.top = top
        self._root = str(top)  # joined as a string: a Path per file costs more than its lstat
        self.prefix = prefix  # the workspace's path inside the repository, "" or ending with "/"
        self.scratch = scratch  # a private folder for fast-import's marks
        self._known: dict[str, tuple[StatKey, str]] = {}  # repository path -> (stat when hashed, blob id)
        self._first = True
        self._base = [*BASE_OPTIONS, *([f"core.excludesFile={excludes}"] if excludes else [])]
        self.options = list(self._base)  # git's -c options: read again before each snapshot
        self._drivers = False  # whether the repository's config has a filter driver

    @classmethod
    def detect(cls, workspace: Path, scratch: Path) -> GitSnapshots | None:
        """Snapshots for `workspace` when it is inside a git work tree and a git outside the workspace
        and temp folders runs (one planted there by a command would run with the agent's rights);
        else None."""
        git = helpers.find("git", [workspace])
        if git is None:
            return None
        try:
            out = _git(git, workspace, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix")
        except GitError:
            return None
        lines = out.decode("utf-8", "surrogateescape").split("\n")
        if len(lines) < 3 or lines[0] != "true":
            return None
        return cls(git, Path(lines[1]), lines[2], scratch, user_excludes_file(git, workspace))

    # -- taking a snapshot -------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The work tree as it is now; the user's state is untouched."""
        self._read_drivers()
        spec = ["--full-name", "--", f":(top,literal){self.prefix}" if self.prefix else ":(top)"]
        listings = _git_parallel(self.git, self.top, self.options, [["ls-files", "-z", "-s", *spec],
                                            ["ls-files", "-z", "-o", "--exclude-standard", *spec],
                                            ["ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory", *spec],
                                            *([["ls-files", "-z", "-m", "-d", *spec]] if self._first else [])])
        index: dict[str, tuple[str, str]] = {}  # path -> (mode, blob id) of the user's merged entries
        for entry in _split(listings[0]):
            meta, _, path = entry.partition("\t")
            mode, sha, stage = meta.split()
            index[path] = (mode, sha) if stage == "0" else ("", "")
        clean = set(index) - set(_split(listings[3])) if self._first else set()
        self._first = False
        now = time.time_ns()
        snap = Snapshot()
        todo: dict[str, StatKey] = {}
        seeds: dict[str, StatKey] = {}
        for path in dict.fromkeys([*index, *_split(listings[1])]):
            info = self._lstat(path)
            rel = path[len(self.prefix):]
            if info is None or path.endswith("/"):  # gone, or an embedded repository: not ours to snapshot
                continue
            if stat.S_ISLNK(info.st_mode):
                snap.links[rel] = os.readlink(self.top / path)
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
            known = self._known.get(path)
            if known is not None and known[0] == key:  # known files are neither too big nor credentials
                snap.files[rel] = known[1]
            elif info.st_size > MAX_FILE_BYTES or is_credential_path(path):
                snap.left_out[rel] = ((info.st_size, info.st_mtime_ns), TOO_BIG if info.st_size > MAX_FILE_BYTES
                                      else CREDENTIAL)
            elif path in clean and index[path][0] in ("100644", "100755") and not _racy(key, now):
                seeds[path] = key
            else:
                todo[path] = key
        for path, sha in self._verified(seeds, index).items():
            self._remember(snap, path, seeds.pop(path), sha, now)
        todo.update(seeds)  # a blob of another size: the file's bytes differ from it (a filter converts them)
        for (path, key), sha in zip(todo.items(), self._hash(list(todo)), strict=True):
            self._remember(snap, path, key, sha, now)
        for path in _split(listings[2])[:MAX_IGNORED]:
            info = self._lstat(path.rstrip("/"))
            if info is not None:
                size = (0, 0) if path.endswith("/") else (info.st_size, info.st_mtime_ns)  # a folder: its presence
                snap.left_out[path[len(self.prefix):]] = (size, IGNORED)
        return snap

    def _lstat(self, path: str) -> os.stat_result | None:
        try:
            return os.lstat(os.path.join(self._root, path))
        except OSError:
            return None

    def _remember(self, snap: Snapshot, path: str, key: StatKey, sha: str, now: int) -> None:
        snap.files[path[len(self.prefix):]] = sha
        if _racy(key, now):
            self._known.pop(path, None)
        else:
            self._known[path] = (key, sha)

    def _verified(self, seeds: dict[str, StatKey], index: dict[str, tuple[str, str]]) -> dict[str, str]:
        """The seeds whose index blob holds the file's exact bytes: same size, and no filter driver."""
        if not seeds:
            return {}
        paths = list(seeds)
        if self._has_drivers():
            out = _git(self.git, self.top, "check-attr", "-z", "--stdin", "filter", stdin=_nul(paths), options=self.options)
            fields = _split(out)
            filtered = {fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] not in ("unspecified", "unset")}
            paths = [p for p in paths if p not in filtered]
        shas = [index[p][1] for p in paths]
        out = _git(self.git, self.top, "cat-file", "--batch-check=%(objectname) %(objectsize)", stdin="".join(
            f"{sha}\n" for sha in shas).encode(), options=self.options)
        sizes = [line.split() for line in out.decode().splitlines()]
        return {path: sha for path, sha, size in zip(paths, shas, sizes, strict=True)
                if len(size) == 2 and size[1] == str(seeds[path][0])}

    def _has_drivers(self) -> bool:
        return self._drivers

    def _read_drivers(self) -> None:
        """The repository's config may have changed since the last command: switch off what it names now."""
        listing = _git(self.git, self.top, "config", "-z", "--get-regexp", r"^(filter|diff|merge)\.", check=False,
                       options=self._base)
        self.options = [*self._base, *driver_options(listing)]
        self._drivers = any(option.startswith("filter.") for option in self.options)

    def _hash(self, paths: list[str]) -> list[str]:
        """Blob ids of the files' exact bytes, written to the object store."""
        if not paths:
            return []
        if len(paths) < FAST_IMPORT_FROM:
            out = _git(self.git, self.top, "hash-object", "-w", "--no-filters", "--stdin-paths",
                       stdin=b"".join(_quoted(p) + b"\n" for p in paths), options=self.options)
            return out.decode().split()
        marks = self.scratch / "git-marks"
        command = git_argv(self.git, self.options, "fast-import", "--quiet", f"--export-marks={marks}")
        with subprocess.Popen(command, cwd=self.top, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=safe_env()) as child:
            assert child.stdin is not None
            try:
                for number, path in enumerate(paths, 1):  # one file in memory at a time
                    data = (self.top / path).read_bytes()
                    child.stdin.write(b"blob\nmark :%d\ndata %d\n%s\n" % (number, len(data), data))
                child.stdin.close()
            except OSError as exc:
                child.kill()
                raise GitError(f"git fast-import failed: {exc}") from exc
            error = child.stderr.read() if child.stderr else b""
        if child.returncode != 0:
            raise GitError(f"git fast-import failed: {error.decode('utf-8', 'replace').strip()[-300:]}")
        shas = dict(line.split() for line in marks.read_text().splitlines())
        marks.unlink()
        return [shas[f":{n}"] for n in range(1, len(paths) + 1)]

    # -- reading snapshots -------------------------------------------------------------------
    @staticmethod
    def changed(before: Snapshot, after: Snapshot) -> list[str]:
        """Workspace-relative paths whose content, target or presence differs between two snapshots."""
        paths = set(before.files) | set(after.files) | set(before.links) | set(after.links)
        return sorted(p for p in paths if before.state(p) != after.state(p))

    def blobs(self, snap: Snapshot, rels: list[str]) -> dict[str, bytes | None]:
        """The files' bytes in a snapshot (None: not a file there), exactly as they were."""
        found: dict[str, bytes | None] = dict.fromkeys(rels)
        batch = [(rel, snap.files[rel]) for rel in rels if rel in snap.files]
        if batch:
            out = _git(self.git, self.top, "cat-file", "--batch", stdin="".join(f"{sha}\n" for _, sha in batch).encode(),
                       options=self.options)
            for (rel, _), data in zip(batch, _batch_contents(out), strict=True):
                found[rel] = data
        return found


def _racy(key: StatKey, now: int) -> bool:
    return max(key[1], key[2]) >= now - RACY_NS


def _split(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _quoted(path: str) -> bytes:
    """`path` C-quoted, the way `--stdin-paths` reads a name that holds a newline or a quote."""
    out = bytearray(b'"')
    for byte in path.encode("utf-8", "surrogateescape"):
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def _batch_contents(out: bytes) -> list[bytes | None]:
    """The objects in `cat-file --batch` output: `<sha> <type> <size>\\n<bytes>\\n` or `… missing\\n`."""
    contents: list[bytes | None] = []
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            contents.append(out[end + 1:end + 1 + size])
            at = end + 1 + size + 1
        else:
            contents.append(None)
            at = end + 1
    return contents


def _nul(items: list[str]) -> bytes:
    return b"".join(item.encode("utf-8", "surrogateescape") + b"\0" for item in items)


def _git(git: str, cwd: Path, *args: str, stdin: bytes | None = None, check: bool = True,
         options: list[str] | tuple[str, ...] = BASE_OPTIONS) -> bytes:
    """Run git (the program at `git`) quietly: no program a config names, no prompts, no optional
    locks, no secrets."""
    try:
        done = subprocess.run(git_argv(git, options, *args), cwd=cwd, input=stdin, capture_output=True, env=safe_env(),
                              check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def _git_parallel(git: str, cwd: Path, options: list[str], commands: list[list[str]]) -> list[bytes]:
    """Several read-only git commands at once; their outputs in order."""
    try:
        children = [subprocess.Popen(git_argv(git, options, *args), cwd=cwd, env=safe_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) for args in commands]
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    outputs = [child.communicate() for child in children]
    for args, child, (_, error) in zip(commands, children, outputs, strict=True):
        if child.returncode != 0:
            lines = error.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed: {lines[-1] if lines else f'exit {child.returncode}'}")
    return [out for out, _ in outputs]
