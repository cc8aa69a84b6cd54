"""What a checkpoint costs around one shell command, on a repository of ~10k files.

    python -m bench.checkpoints [--files 10000]

Builds a git repository of N small source files in a temporary folder (committed, plus a few
untracked and modified files), then measures `Checkpoints.command()` around real commands: a
no-op, one that changes 10 files, and the user's own everyday commands as the baseline
(`git status`, `python -c pass`, `ls -R`, byte-compiling 100 files). Also: the first snapshot of a
session (it takes the blob ids of clean tracked files from the user's index after checking their
sizes), a repository whose files are all untracked (the first snapshot hashes them all: so does
one whose line endings git converts), and the same workspace without git (the size/mtime scan).
The repositories are left to settle first (files changed in the last seconds are hashed, not
trusted). Every figure is the median of 5 runs, printed with its ratio to the baseline commands
measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/checkpoints.py` and as `python3 -m bench.checkpoints`

from bench.measurements import recorded
from core.checkpoints import Checkpoints
from core.checkpoints.gitsnap import RACY_NS
from core.protocol import discard

RUNS = 5


def build(root: Path, files: int, git: bool, commit: bool = True) -> None:
    for i in range(files):
        path = root / f"pkg{i // 100:03d}" / f"mod{i % 100:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\n" + f"def f(x):\n    return x + {i}\n" * 8)
    (root / ".gitignore").write_text("*.log\nbuild/\n__pycache__/\n")
    if not git:
        return
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    if commit:
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"], cwd=root,
                       check=True)
        for i in range(5):  # a work tree in use: some modified and untracked files
            (root / f"pkg000/mod{i:02d}.py").write_text("changed\n")
            (root / f"notes{i}.txt").write_text("untracked\n")


def median(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def shell(command: str, cwd: Path) -> Callable[[], object]:
    return lambda: subprocess.run(command, shell=True, cwd=cwd, capture_output=True, check=False)


def around(checkpoints: Checkpoints, command: str, cwd: Path) -> Callable[[], object]:
    def run() -> None:
        with checkpoints.command(command):
            subprocess.run(command, shell=True, cwd=cwd, capture_output=True, check=False)
    return run


def session(root: Path, scratch: Path, name: str) -> Checkpoints:
    folder = scratch / name
    folder.mkdir()
    return Checkpoints(folder, root, lambda record: None, discard)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo, plain, fresh, scratch = base / "repo", base / "plain", base / "fresh", base / "sessions"
        for folder in (repo, plain, fresh, scratch):
            folder.mkdir()
        build(repo, args.files, git=True)
        build(plain, args.files, git=False)
        build(fresh, args.files, git=True, commit=False)
        time.sleep(RACY_NS / 1e9)  # a work tree at rest, as a session usually finds it
        py = f'"{sys.executable}"'
        baseline = {"git status": median(shell("git status --porcelain", repo)),
                    "python -c pass": median(shell(f"{py} -c pass", repo)),
                    "ls -R": median(shell("ls -R > /dev/null", repo)),
                    "compileall of 100 files": median(shell(f"{py} -m compileall -q -f pkg000", repo))}
        first = session(repo, scratch, "first")
        start = time.perf_counter()
        around(first, "true", repo)()
        cold = time.perf_counter() - start
        warm = session(repo, scratch, "warm")
        around(warm, "true", repo)()  # the session's first command
        touch = ("for i in 10 11 12 13 14 15 16 17 18 19; do echo x >> pkg001/mod$i.py; done")
        figures = {
            "first command of a session (no-op)": cold,
            "no-op command (`true`), own run time included": median(around(warm, "true", repo)),
            "command changing 10 files, own run time included": median(around(warm, touch, repo)),
            "`true` alone": median(shell("true", repo)),
        }
        untracked = session(fresh, scratch, "fresh")
        start = time.perf_counter()
        around(untracked, "true", fresh)()
        figures["first command, all files untracked (hashes them all)"] = time.perf_counter() - start
        figures["next command there"] = median(around(untracked, "true", fresh))
        noscan = session(plain, scratch, "plain")
        figures["no git: scan before and after a no-op"] = median(around(noscan, "true", plain))
        objects = sum(f.stat().st_size for f in (repo / ".git" / "objects").rglob("*") if f.is_file())
    overhead = figures["no-op command (`true`), own run time included"] - figures["`true` alone"]
    print(f"Checkpoint cost around one command, {args.files:,} files, median of {RUNS} (os: {os.name}, "
          f"{os.cpu_count()} cpus)")
    for name, seconds in baseline.items():
        print(f"  baseline {name:<52} {seconds * 1000:8.1f} ms")
    for name, seconds in figures.items():
        print(f"  {name:<61} {seconds * 1000:8.1f} ms")
    print(f"  overhead of the two snapshots (no-op minus `true`)            {overhead * 1000:8.1f} ms")
    for name, seconds in baseline.items():
        print(f"  ratio overhead / {name:<44} {overhead / seconds:8.2f}")
    print(f"  .git/objects after all snapshots: {objects / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    with recorded("checkpoints", "Checkpoints: the cost of the snapshots around one command"):
        sys.exit(main())
