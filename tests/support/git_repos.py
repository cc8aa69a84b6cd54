"""Git repositories for the checkpoint tests: a skip where git is missing, and repositories whose
filters make the index hold other bytes than the work tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not on PATH: no snapshots to test")

CRLF = b"one\r\ntwo\r\n"
CONVERTED = {"crlf.txt": CRLF, "mixed.txt": b"crlf\r\nlf\nend", "lf.txt": b"plain\n"}
SETUPS = ["autocrlf", "attributes", "autocrlf-turned-off", "filter-driver"]


def run_git(ws: Path, *args: str) -> bytes:
    """git in `ws` as a known user, without optional locks (a `git status` must not touch the index)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=ws, capture_output=True,
                          check=True, env=env).stdout


def converting_repository(ws: Path, setup: str) -> None:
    """A repository whose index holds other bytes than the work tree (CONVERTED) and calls them clean."""
    if setup == "attributes":
        (ws / ".gitattributes").write_bytes(b"*.txt text eol=crlf\n")
    elif setup == "filter-driver":  # one that keeps the size: only the attribute tells
        run_git(ws, "config", "filter.upper.clean", "tr a-z A-Z")
        run_git(ws, "config", "filter.upper.smudge", "cat")
        (ws / ".gitattributes").write_bytes(b"*.txt filter=upper\n")
    else:
        run_git(ws, "config", "core.autocrlf", "true")
    for name, data in CONVERTED.items():
        (ws / name).write_bytes(data)
        os.utime(ws / name, (1_600_000_000, 1_600_000_000))  # not "racily clean": git trusts their stat data
    run_git(ws, "add", ".")
    run_git(ws, "commit", "-qm", "c")  # the repository holds LF (or capitals); the work tree keeps its bytes
    if setup == "autocrlf-turned-off":
        run_git(ws, "config", "core.autocrlf", "false")
        run_git(ws, "status")  # the index still calls the CRLF files clean
