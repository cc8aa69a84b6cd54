"""Regex search over the workspace: ripgrep when it is installed, else a Python walk."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from core.tools.base import ToolContext, ToolError, ToolResult
from core.tools.files import SKIP_DIRS, SNIFF_BYTES, looks_binary, resolve

MAX_RESULTS = 200
MAX_MATCH_CHARS = 300
MAX_FILE_BYTES = 5 * 1024 * 1024


def search(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern: str = args["pattern"]
    flags = re.IGNORECASE if args.get("ignore_case") else 0
    try:
        regex = re.compile(pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    root = resolve(ctx, args.get("path") or ".")
    if not root.exists():
        raise ToolError(f"{args.get('path')!r} does not exist")
    glob = args.get("glob")
    rg = shutil.which("rg")
    hits = _ripgrep(rg, pattern, root, glob, flags, ctx) if rg else None
    if hits is None:
        hits = list(_python_search(regex, root, glob, ctx))
    if not hits:
        return ToolResult(f"no matches for {pattern!r} in {ctx.workspace.rel(root)}")
    text = "\n".join(hits[:MAX_RESULTS])
    if len(hits) > MAX_RESULTS:
        text += f"\n[… more than {MAX_RESULTS} matches; narrow the pattern, path or glob]"
    return ToolResult(text)


def _ripgrep(rg: str, pattern: str, root: Path, glob: str | None, flags: int, ctx: ToolContext) -> list[str] | None:
    argv = [rg, "--line-number", "--no-heading", "--color=never", f"--max-columns={MAX_MATCH_CHARS}",
            "--max-columns-preview", "--max-filesize=5M"]
    argv += ["-i"] if flags & re.IGNORECASE else []
    argv += ["--glob", glob] if glob else []
    argv += [f"--glob=!{d}" for d in SKIP_DIRS]
    argv += ["-e", pattern, "--", str(root)]
    try:
        done = subprocess.run(argv, capture_output=True, cwd=ctx.workspace.root, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode not in (0, 1):  # 2: rg could not parse the (Python-valid) pattern; fall back
        return None
    lines = done.stdout.decode("utf-8", errors="replace").splitlines()
    prefix = str(ctx.workspace.root) + os.sep
    hits = [line[len(prefix):] if line.startswith(prefix) else line for line in lines[: MAX_RESULTS + 1]]
    return sorted(hits, key=_by_path_and_line)


def _by_path_and_line(hit: str) -> tuple[str, int]:
    """`a.py:9` before `a.py:10`: ripgrep's order depends on its threads, so results are sorted."""
    path, _, rest = hit.partition(":")
    number = rest.partition(":")[0]
    return path, int(number) if number.isdigit() else 0


def _python_search(regex: re.Pattern[str], root: Path, glob: str | None, ctx: ToolContext):
    files = [root] if root.is_file() else _walk(root)
    found = 0
    for path in files:
        if glob and not (fnmatch.fnmatch(path.name, glob) or fnmatch.fnmatch(ctx.workspace.rel(path), glob)):
            continue
        if path.is_symlink() and ctx.workspace.root not in path.resolve().parents:
            continue  # a link pointing out of the workspace: its content is not ours to show
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            with path.open("rb") as handle:
                if looks_binary(handle.read(SNIFF_BYTES)):
                    continue
                handle.seek(0)
                for number, raw in enumerate(handle, 1):
                    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if regex.search(line):
                        yield f"{ctx.workspace.rel(path)}:{number}:{line[:MAX_MATCH_CHARS]}"
                        found += 1
                        if found > MAX_RESULTS:
                            return
        except OSError:
            continue


def _walk(root: Path):
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            yield Path(current) / name
