"""The instructions sent with every request: who the agent is, where it runs, and the project's AGENTS.md."""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

from core.tools.shell import detect_shell

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
    path = root / AGENTS_FILE
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff").strip()
    except OSError:
        return ""
    if len(text) > MAX_AGENTS_CHARS:
        text = text[:MAX_AGENTS_CHARS] + f"\n[… {AGENTS_FILE} cut at {MAX_AGENTS_CHARS:,} characters]"
    return text
