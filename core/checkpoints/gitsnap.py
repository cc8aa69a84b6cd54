"""Snapshots of a git work tree that the user never sees: a private index, trees, no refs.

A snapshot is the tree of the work tree as it is (tracked files with their changes, untracked
files, deletions; ignored files and files over `MAX_FILE_BYTES` left out), written with plumbing
only: a private index file (`GIT_INDEX_FILE`, kept in the session folder), `hash-object` (or
`fast-import` for many files, one pack instead of thousands of loose objects), `update-index`,
`write-tree`. The user's index, HEAD, branches and stash list are never touched, no hook runs, and
no ref is made: the agent copies the previous bytes of what a command changed into the session's
own store at once, so the snapshot objects are only needed for a moment (git prunes them after
two weeks like any unreachable object) and nothing is left in the repository when the session
folder is deleted.

Files the snapshot hashes itself are hashed without filters (`--no-filters`), so their bytes come
back exactly; entries inherited unchanged from the user's index hold the normalised blob git keeps,
and are given back as a checkout writes them (`cat-file --filters`).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from core.secrets import scrub_env
from core.tools.safety import is_credential_path

MAX_FILE_BYTES = 20 * 1024 * 1024  # bigger untracked or changed files are not snapshotted (nor credentials)
FAST_IMPORT_FROM = 200  # files to hash at once from which one pack beats loose objects


class GitError(Exception):
    """A git command failed; the message has git's own words."""


@dataclass
class Snapshot:
    tree: str
    # Files left out because they are too big: workspace-relative path -> (size, mtime_ns).
    skipped: dict[str, tuple[int, int]] = field(default_factory=dict)


class GitSnapshots:
    """Snapshots of the work tree under `workspace` (which may be a sub-folder of the repository)."""

    def __init__(self, top: Path, prefix: str, index: Path) -> None:
        self.top = top
        self.prefix = prefix  # the workspace's path inside the repository, "" or ending with "/"
        self.index = index
        self._env = {"GIT_INDEX_FILE": str(index)}
        self._raw: set[str] = set()  # repository paths this process hashed itself (exact bytes)
        self._fresh = False  # the private index has been started from the user's in this process

    @classmethod
    def detect(cls, workspace: Path, scratch: Path) -> GitSnapshots | None:
        """Snapshots for `workspace` when it is inside a git work tree and git runs; else None."""
        if shutil.which("git") is None:
            return None
        try:
            out = _git(workspace, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix")
        except GitError:
            return None
        lines = out.decode("utf-8", "surrogateescape").split("\n")
        if len(lines) < 3 or lines[0] != "true":
            return None
        return cls(Path(lines[1]), lines[2], scratch / "git-index")

    # -- taking a snapshot -------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The tree of the work tree's current state; the user's state is untouched."""
        self._start_index()
        # Two listings run side by side: changed or deleted tracked files, and untracked ones (one call
        # with all three options is several times slower than both together).
        listed = b"".join(_git_parallel(self.top, [
            ["ls-files", "-z", *options, "--full-name", "--", self._pathspec()]
            for options in (["-m", "-d"], ["-o", "--exclude-standard"])], env=self._env))
        files: list[str] = []
        links: list[str] = []
        gone: list[str] = []
        skipped: dict[str, tuple[int, int]] = {}
        for path in dict.fromkeys(p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p):
            if path.endswith("/"):  # an embedded repository: not ours to snapshot
                continue
            try:
                info = os.lstat(self.top / path)
            except OSError:
                gone.append(path)
                continue
            if stat.S_ISLNK(info.st_mode):
                links.append(path)
            elif not stat.S_ISREG(info.st_mode):
                continue
            elif info.st_size > MAX_FILE_BYTES or is_credential_path(path):
                skipped[path[len(self.prefix):]] = (info.st_size, info.st_mtime_ns)
                gone.append(path)  # not in the snapshot: an earlier version must not pass for it
            else:
                files.append(path)
        if gone:
            _git(self.top, "update-index", "-z", "--force-remove", "--stdin", env=self._env, stdin=_nul(gone))
        if files:
            entries = [f"{_mode(self.top / p)} {sha}\t{p}" for p, sha in zip(files, self._hash(files), strict=True)]
            _git(self.top, "update-index", "-z", "--index-info", env=self._env, stdin=_nul(entries))
            # Record the files' stat data where their content allows it, so the next snapshot skips them.
            _git(self.top, "update-index", "-q", "--refresh", env=self._env, check=False)
            self._raw.update(files)
        if links:
            _git(self.top, "update-index", "-z", "--add", "--stdin", env=self._env, stdin=_nul(links))
        return Snapshot(_git(self.top, "write-tree", env=self._env).decode().strip(), skipped)

    def _start_index(self) -> None:
        """The private index starts as a copy of the user's (its stat cache makes `ls-files -m` cheap)
        and is kept between snapshots, so files already hashed are not hashed again."""
        if self._fresh:
            return
        self.index.parent.mkdir(parents=True, exist_ok=True)
        self.index.unlink(missing_ok=True)
        user_index = self.top / _git(self.top, "rev-parse", "--git-path", "index").decode(
            "utf-8", "surrogateescape").strip()  # relative to `top` unless git says an absolute path
        if user_index.is_file():
            shutil.copyfile(user_index, self.index)
            # Fresh stat data in the private index: entries the user's index holds as "racily clean"
            # would otherwise be hashed again by every `ls-files -m`.
            _git(self.top, "update-index", "-q", "--refresh", env=self._env, check=False)
        self._fresh = True

    def _hash(self, paths: list[str]) -> list[str]:
        """Blob ids of the files' exact bytes, written to the object store."""
        if len(paths) < FAST_IMPORT_FROM:
            out = _git(self.top, "hash-object", "-w", "--no-filters", "--stdin-paths",
                       stdin="\n".join(paths).encode("utf-8", "surrogateescape") + b"\n")
            return out.decode().split()
        marks = self.index.with_name("git-marks")
        command = ["git", "fast-import", "--quiet", f"--export-marks={marks}"]
        with subprocess.Popen(command, cwd=self.top, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=_env()) as child:
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

    def _pathspec(self) -> str:
        return f":(top,literal){self.prefix}" if self.prefix else ":(top)"

    # -- reading snapshots -------------------------------------------------------------------
    def changed(self, before: str, after: str) -> list[str]:
        """Workspace-relative paths whose content or presence differs between two snapshots."""
        if before == after:
            return []
        out = _git(self.top, "diff-tree", "-r", "-z", "--no-renames", "--name-only", before, after, "--",
                   self._pathspec())
        return [p[len(self.prefix):] for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def blobs(self, tree: str, rels: list[str]) -> dict[str, bytes | None]:
        """The files' bytes in a snapshot (None: not there), as they were in the work tree."""
        wanted = {self.prefix + rel: rel for rel in rels}
        found: dict[str, bytes | None] = dict.fromkeys(rels)
        listing = _git(self.top, "ls-tree", "-r", "-z", tree).decode("utf-8", "surrogateescape")
        raw: list[tuple[str, str]] = []
        filtered: list[tuple[str, str]] = []
        for entry in listing.split("\0"):
            meta, _, path = entry.partition("\t")
            if path in wanted and "\n" not in path:
                sha = meta.split()[2]
                (raw if path in self._raw or meta.startswith("120000") else filtered).append((path, sha))
        for batch, options in ((raw, []), (filtered, ["--filters"])):
            if not batch:
                continue
            lines = [f"{sha} {path}" if options else sha for path, sha in batch]
            out = _git(self.top, "cat-file", "--batch", *options, stdin="\n".join(lines).encode(
                "utf-8", "surrogateescape") + b"\n")
            for (path, _), data in zip(batch, _batch_contents(out), strict=True):
                found[wanted[path]] = data
        return found


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


def _mode(path: Path) -> str:
    return "100755" if os.name != "nt" and os.access(path, os.X_OK) else "100644"


def _nul(items: list[str]) -> bytes:
    return b"".join(item.encode("utf-8", "surrogateescape") + b"\0" for item in items)


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
         check: bool = True) -> bytes:
    """Run git quietly: no pager, no prompts, no optional locks, no secrets in its environment."""
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=cwd, input=stdin,
                              capture_output=True, env=_env(env), check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def _git_parallel(cwd: Path, commands: list[list[str]], env: dict[str, str]) -> list[bytes]:
    """Several read-only git commands at once; their outputs in order."""
    try:
        children = [subprocess.Popen(["git", "-c", "core.quotepath=false", *args], cwd=cwd, env=_env(env),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) for args in commands]
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    outputs = [child.communicate() for child in children]
    for args, child, (_, error) in zip(commands, children, outputs, strict=True):
        if child.returncode != 0:
            lines = error.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed: {lines[-1] if lines else f'exit {child.returncode}'}")
    return [out for out, _ in outputs]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**scrub_env(os.environ), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
            **(extra or {})}
