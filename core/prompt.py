"""The instructions sent with every request: who the agent is, where it runs, and the project's AGENTS.md."""

from __future__ import annotations

import datetime
import os
import platform
import stat
from pathlib import Path

from core.tools.shell import detect_shell
from core.tools.workspace import OutsideWorkspace, Workspace

AGENTS_FILE = "AGENTS.md"
MAX_AGENTS_CHARS = 40_000

_BASE = """You are deepseek-agent, a coding agent working in the user's project through tools.

Environment: {os}; workspace root {root}; shell for run_shell: {shell}. Today is {date}.

How to work:
- Look before you change: list, search and read the relevant files first. Paths are relative to the
  workspace root; the file tools cannot reach outside it.
- Make focused changes: edit_file for changes to existing files (old_text must match exactly once),
  write_file for new files or full rewrites.
- Verify: run the project's tests, linters or build after changing code, and fix what fails.
- run_shell output is pruned to what matters (errors, failures, summaries) and stamped with what was
  hidden; page through the full output with read_output when you need more.
- Commands have no stdin and must not prompt. Destructive commands need the user's approval and may be refused.
- Commands do not inherit secret-looking environment variables (names with KEY, TOKEN, SECRET, PASS, AUTH...,
  URLs with credentials); if a command needs one, tell the user to allow it with AGENT_ENV_KEEP.
- Do not repeat a call that just failed in the same way: change the command or the approach.
- When the task is done, answer with a short summary of what you changed and anything left open.
- Answer in the language the user writes in."""


def build_instructions(root: Path, shell_dialect: str | None = None) -> str:
    system = f"{platform.system() or 'unknown OS'} {platform.release()}".strip()
    text = _BASE.format(os=system, root=root, shell=shell_dialect or detect_shell().dialect,
                        date=datetime.date.today().isoformat())
    agents = load_agents_md(root)
    if agents:
        text += f"\n\nProject instructions from {AGENTS_FILE} (follow them):\n{agents}"
    return text


def load_agents_md(root: Path) -> str:
    """The project's AGENTS.md, read through the file tools' workspace guard.

    It is read on the agent's own initiative, before any approval, so a cloned repository must not
    be able to point it elsewhere: the resolved path stays inside the workspace, it is a regular
    file (a FIFO or `/dev/zero` would hang the start), and only a bounded number of bytes is read."""
    try:
        path = Workspace(root).resolve(AGENTS_FILE)
    except OutsideWorkspace:
        return f"[{AGENTS_FILE} was not read: it points outside the workspace]"
    if not path.exists():
        return ""
    try:
        raw = _read_regular(path, MAX_AGENTS_CHARS * 4)
    except OSError:
        return ""
    if raw is None:
        return f"[{AGENTS_FILE} was not read: it is not a regular file]"
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
    if len(text) > MAX_AGENTS_CHARS:
        text = text[:MAX_AGENTS_CHARS] + f"\n[… {AGENTS_FILE} cut at {MAX_AGENTS_CHARS:,} characters]"
    return text


def _read_regular(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of `path`, or None when it is not a regular file. Opened without
    blocking, so a FIFO swapped in after the check cannot hang the start either."""
    if not path.is_file():
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(limit)
