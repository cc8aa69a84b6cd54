"""Regex search over the workspace: ripgrep when it is installed, else a Python walk; one behaviour.

Both branches search the same files and answer the same way, so a model (and a test) cannot tell
them apart: every file under the path, hidden and git-ignored ones included, except the SKIP_DIRS
folders (.git, node_modules, virtualenvs, caches), binary files, files over 5 MB and symlinks
(never followed, so nothing outside the workspace is read). Each hit is `path:line:text` with the
workspace-relative POSIX path (also for a single file), the text cut at MAX_MATCH_CHARS, in path
then line order. Patterns use RE2 syntax (`core.pattern`), which is ripgrep's, and run in linear
time on both branches: ripgrep's hits are checked again with RE2, where the engines' Unicode rules
differ. An interrupt stops either branch at once.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from core.cancel import Cancel
from core.pattern import Matcher, PatternError, compile_pattern
from core.tools import helpers
from core.tools.base import ToolContext, ToolError, ToolResult
from core.tools.files import resolve
from core.tools.reading import SKIP_DIRS, SNIFF_BYTES, looks_binary

MAX_RESULTS = 200
MAX_MATCH_CHARS = 300
MAX_FILE_BYTES = 5 * 1024 * 1024
RG_TIMEOUT_SECONDS = 60


def search(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern: str = args["pattern"]
    try:
        matcher = compile_pattern(pattern, bool(args.get("ignore_case")))
    except PatternError as exc:
        raise ToolError(str(exc)) from None
    root = resolve(ctx, args.get("path") or ".")
    if not root.exists():
        raise ToolError(f"{args.get('path')!r} does not exist")
    glob = args.get("glob")
    rg = helpers.find("rg", [ctx.workspace.root])  # never one a command planted in the workspace
    hits = _ripgrep(rg, matcher, bool(args.get("ignore_case")), root, glob, ctx) if rg else None
    if hits is None:
        hits = list(_python_search(matcher, root, glob, ctx))
    if ctx.cancel.cancelled:
        raise ToolError("the search was interrupted")
    if not hits:
        return ToolResult(f"no matches for {pattern!r} in {ctx.workspace.rel(root)}")
    text = "\n".join(hits[:MAX_RESULTS])
    if len(hits) > MAX_RESULTS:
        text += f"\n[… more than {MAX_RESULTS} matches; narrow the pattern, path or glob]"
    return ToolResult(text)


def _ripgrep(rg: str, matcher: Matcher, ignore_case: bool, root: Path, glob: str | None,
             ctx: ToolContext) -> list[str] | None:
    """Hits from ripgrep, or None when it cannot run (then the Python walk answers)."""
    argv = [rg, "--line-number", "--with-filename", "--no-heading", "--color=never", "--hidden", "--no-ignore",
            "--sort=path", "--no-messages", "--path-separator=/", f"--max-filesize={MAX_FILE_BYTES}"]
    argv += ["--ignore-case"] if ignore_case else []
    argv += ["--glob", glob] if glob else []
    argv += [f"--glob=!{d}" for d in SKIP_DIRS]
    relative = ctx.workspace.rel(root)
    argv += ["-e", matcher.pattern, "--", *([] if relative == "." else [relative])]
    lines = _run_collecting(argv, ctx.workspace.root, ctx.cancel)
    if lines is None:
        return None
    hits: list[str] = []
    text_files: dict[str, bool] = {}
    for line in lines:
        path, _, rest = line.partition(":")
        number, _, text = rest.partition(":")
        if not number.isdigit():
            continue  # "binary file matches" and the like
        if path not in text_files:  # the walk's test for binary files, which is stricter than ripgrep's
            text_files[path] = _is_text(ctx.workspace.root / path)
        if not text_files[path]:
            continue
        text = text.rstrip("\r")
        if matcher.search(text):  # ripgrep's Unicode \w and \b match more than RE2's
            hits.append(f"{PurePosixPath(path)}:{number}:{text[:MAX_MATCH_CHARS]}")
            if len(hits) > MAX_RESULTS:
                break
    return sorted(hits, key=_by_path_and_line)


def _run_collecting(argv: list[str], cwd: Path, cancel: Cancel) -> list[str] | None:
    """Run ripgrep, reading its lines as they come; stops (killing it) after enough, on an
    interrupt or on the time limit. None when it failed (a pattern it rejects, no such binary)."""
    try:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
    except OSError:
        return None
    lines: list[str] = []
    with cancel.on_cancel(proc.kill):
        timer = threading.Timer(RG_TIMEOUT_SECONDS, proc.kill)
        timer.daemon = True
        timer.start()
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
                if len(lines) > 20 * MAX_RESULTS:  # plenty for MAX_RESULTS after the RE2 check
                    proc.kill()
                    break
        finally:
            timer.cancel()
            proc.stdout.close()  # type: ignore[union-attr]
            proc.wait()
    if proc.returncode not in (0, 1) and not lines:
        return None
    return lines


def _by_path_and_line(hit: str) -> tuple[tuple[str, ...], int]:
    """`a.py:9` before `a.py:10`, and paths in the order ripgrep's --sort=path walks them."""
    path, _, rest = hit.partition(":")
    number = rest.partition(":")[0]
    return PurePosixPath(path).parts, int(number) if number.isdigit() else 0


def _python_search(matcher: Matcher, root: Path, glob: str | None, ctx: ToolContext) -> Iterator[str]:
    files = [root] if root.is_file() else _walk(root, ctx.cancel)
    found = 0
    for path in files:
        rel = ctx.workspace.rel(path) if path == root else path.relative_to(ctx.workspace.root).as_posix()
        if glob and not _glob_matches(rel, glob):
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            with path.open("rb") as handle:
                if looks_binary(handle.read(SNIFF_BYTES)):
                    continue
                handle.seek(0)
                for number, raw in enumerate(handle, 1):
                    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if matcher.search(line):
                        yield f"{rel}:{number}:{line[:MAX_MATCH_CHARS]}"
                        found += 1
                        if found > MAX_RESULTS:
                            return
                    if number % 4096 == 0 and ctx.cancel.cancelled:
                        return
        except OSError:
            continue


def _glob_matches(rel: str, glob: str) -> bool:
    """ripgrep's rule: a glob without `/` matches a name at any depth, one with `/` the whole path."""
    path = PurePosixPath(rel)
    return path.match(glob) if "/" in glob.strip("/") else any(PurePosixPath(p).match(glob) for p in path.parts[-1:])


def _walk(root: Path, cancel: Cancel) -> Iterator[Path]:
    """Files under `root` in ripgrep's --sort=path order; symlinks are not followed or searched."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if cancel.cancelled:
            return
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIP_DIRS:
                yield from _walk(Path(entry.path), cancel)
        elif entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


def _is_text(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return not looks_binary(handle.read(SNIFF_BYTES))
    except OSError:
        return False
