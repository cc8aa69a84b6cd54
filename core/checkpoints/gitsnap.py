"""Snapshots of a git work tree that the user never sees: a private index and a private ref.

Each snapshot is a commit of the work tree as it is (tracked files with their changes, untracked
files, deletions; ignored files and files over `MAX_FILE_BYTES` left out) made with plumbing only:
a temporary index file (`GIT_INDEX_FILE`), `hash-object`, `update-index`, `write-tree`,
`commit-tree`, then `update-ref` of `refs/deepseek-agent/<session>`, which keeps the objects alive.
The user's index, HEAD, branches and stash list are never touched, and no hook runs.

Changed files are hashed without filters (`--no-filters`), so a snapshot holds their bytes exactly;
entries inherited unchanged from the user's index hold the normalised blob git keeps for them, and
`blob()` gives those back as a checkout would (`cat-file --filters`).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from core.secrets import scrub_env

MAX_FILE_BYTES = 20 * 1024 * 1024  # bigger untracked or changed files are not snapshotted
_IDENTITY = {"GIT_AUTHOR_NAME": "deepseek-agent", "GIT_AUTHOR_EMAIL": "agent@localhost",
             "GIT_COMMITTER_NAME": "deepseek-agent", "GIT_COMMITTER_EMAIL": "agent@localhost"}


class GitError(Exception):
    """A git command failed; the message has git's own words."""


@dataclass
class Snapshot:
    commit: str
    skipped: list[str] = field(default_factory=list)  # workspace-relative paths left out (too big)


class GitSnapshots:
    """Snapshots of the work tree under `workspace` (which may be a sub-folder of the repository)."""

    def __init__(self, workspace: Path, top: Path, prefix: str, index: Path, ref: str) -> None:
        self.workspace = workspace
        self.top = top
        self.prefix = prefix  # the workspace's path inside the repository, "" or ending with "/"
        self.index = index
        self.ref = ref

    @classmethod
    def detect(cls, workspace: Path, scratch: Path, session_id: str) -> GitSnapshots | None:
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
        return cls(workspace, Path(lines[1]), lines[2], scratch / "git-index", f"refs/deepseek-agent/{session_id}")

    # -- taking a snapshot -------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """Commit the work tree's current state onto the private ref; the user's state is untouched."""
        self._prepare_index()
        env = {"GIT_INDEX_FILE": str(self.index)}
        listed = _git(self.top, "ls-files", "-z", "-m", "-d", "-o", "--exclude-standard", "--full-name", "--",
                      self._pathspec(), env=env)
        hashed: list[str] = []
        gone: list[str] = []
        skipped: list[str] = []
        for path in dict.fromkeys(p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p):
            if path.endswith("/"):  # an embedded repository: not ours to snapshot
                continue
            try:
                info = os.lstat(self.top / path)
            except OSError:
                gone.append(path)
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
                skipped.append(path[len(self.prefix):])
                gone.append(path)  # not in the snapshot: an earlier version must not pass for it
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                hashed.append(path)
        if gone:
            _git(self.top, "update-index", "-z", "--force-remove", "--stdin", env=env, stdin=_nul(gone))
        if hashed:
            self._add(hashed, env)
        tree = _git(self.top, "write-tree", env=env).decode().strip()
        parent = self.head()
        args = ["commit-tree", "--no-gpg-sign", tree, "-m", "deepseek-agent snapshot"]
        commit = _git(self.top, *args, *(["-p", parent] if parent else []), env={**env, **_IDENTITY}).decode().strip()
        _git(self.top, "update-ref", self.ref, commit)
        return Snapshot(commit, skipped)

    def head(self) -> str | None:
        try:
            return _git(self.top, "rev-parse", "--verify", "-q", self.ref).decode().strip() or None
        except GitError:
            return None

    def _prepare_index(self) -> None:
        """The private index starts as a copy of the user's (its stat cache makes `ls-files -m` cheap)
        and is kept between snapshots, so files already hashed are not hashed again."""
        if self.index.exists():
            return
        self.index.parent.mkdir(parents=True, exist_ok=True)
        user_index = self.top / _git(self.top, "rev-parse", "--git-path", "index").decode(
            "utf-8", "surrogateescape").strip()  # relative to `top` unless git says an absolute path
        if user_index.is_file():
            shutil.copyfile(user_index, self.index)

    def _add(self, paths: list[str], env: dict[str, str]) -> None:
        files = [p for p in paths if not os.path.islink(self.top / p)]
        links = [p for p in paths if os.path.islink(self.top / p)]
        entries: list[str] = []
        if files:
            shas = _git(self.top, "hash-object", "-w", "--no-filters", "--stdin-paths",
                        stdin="\n".join(files).encode("utf-8", "surrogateescape") + b"\n").decode().split()
            for path, sha in zip(files, shas, strict=True):
                mode = "100755" if os.access(self.top / path, os.X_OK) and os.name != "nt" else "100644"
                entries.append(f"{mode} {sha}\t{path}")
            _git(self.top, "update-index", "-z", "--index-info", env=env, stdin=_nul(entries))
            # Record the files' stat data where their content allows it, so the next snapshot skips them.
            _git(self.top, "update-index", "-q", "--refresh", env=env, check=False)
        if links:
            _git(self.top, "update-index", "-z", "--add", "--stdin", env=env, stdin=_nul(links))

    def _pathspec(self) -> str:
        return f":(top,literal){self.prefix}" if self.prefix else ":(top)"

    # -- reading snapshots -------------------------------------------------------------------
    def changed(self, before: str, after: str) -> list[str]:
        """Workspace-relative paths whose content or presence differs between two snapshots."""
        out = _git(self.top, "diff-tree", "-r", "-z", "--no-renames", "--name-only", before, after, "--",
                   self._pathspec())
        return [p[len(self.prefix):] for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def blob(self, commit: str, rel: str) -> bytes | None:
        """A file's bytes in a snapshot (None: it was not there). Blobs the user's index holds too are
        given back as a checkout writes them; the ones a snapshot hashed, exactly as they were."""
        path = self.prefix + rel
        try:
            sha = _git(self.top, "rev-parse", "--verify", "-q", f"{commit}:{path}").decode().strip()
        except GitError:
            return None
        try:
            staged = _git(self.top, "ls-files", "-s", "-z", "--", f":(top,literal){path}").decode().split()
        except GitError:
            staged = []
        if len(staged) > 1 and staged[1] == sha:
            return _git(self.top, "cat-file", "--filters", f"--path={path}", sha)
        return _git(self.top, "cat-file", "blob", sha)


def _nul(items: list[str]) -> bytes:
    return b"".join(item.encode("utf-8", "surrogateescape") + b"\0" for item in items)


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
         check: bool = True) -> bytes:
    """Run git quietly: no pager, no prompts, no optional locks on the user's index."""
    full_env = {**scrub_env(os.environ), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=cwd, input=stdin,
                              capture_output=True, env=full_env, check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from exc
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout
