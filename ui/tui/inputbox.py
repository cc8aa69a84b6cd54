"""The input box: completion of slash commands and workspace paths, large-paste placeholders,
and the persisted history (Up/Down walk it, Ctrl-R searches it)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, ThreadedCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from core.i18n import _

PASTE_CHARS = 1000
PASTE_LINES = 15
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache",
             "dist", "build", ".tox", ".idea", ".vscode", "target"}
MAX_FILES = 20_000


class SlashCompleter(Completer):
    """`/` at the start of the input: every command with its one-line description."""

    def __init__(self, commands: dict[str, str]) -> None:
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text or "\n" in text:
            return
        for name, doc in self.commands.items():
            if name.startswith(text.lower()):
                yield Completion(name, start_position=-len(text), display_meta=_(doc))


class PathCompleter(Completer):
    """`@part` anywhere: workspace files whose path contains `part`, best matches first. The file
    list is cached for a few seconds (large trees are walked once, in the completer's thread)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[str] = []
        self._when = 0.0

    def files(self) -> list[str]:
        if time.monotonic() - self._when > 5 or not self._files:
            found: list[str] = []
            for folder, dirs, names in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                rel = Path(folder).relative_to(self.root)
                found += [(rel / d).as_posix() + "/" for d in dirs]
                found += [(rel / n).as_posix() for n in sorted(names)]
                if len(found) > MAX_FILES:
                    break
            self._files = [f[2:] if f.startswith("./") else f for f in found]
            self._when = time.monotonic()
        return self._files

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        match = re.search(r"@([^\s@]*)$", document.text_before_cursor)
        if match is None:
            return
        part = match.group(1).lower()
        hits = [f for f in self.files() if part in f.lower()]
        hits.sort(key=lambda f: (not f.lower().startswith(part), f.count("/"), len(f)))
        for path in hits[:50]:
            yield Completion("@" + path, start_position=-len(match.group(0)), display=path)


class InputCompleter(Completer):
    def __init__(self, slash: SlashCompleter, paths: PathCompleter) -> None:
        self.slash, self.paths = slash, paths

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        if document.text_before_cursor.startswith("/"):
            yield from self.slash.get_completions(document, complete_event)
        else:
            yield from self.paths.get_completions(document, complete_event)


def completer(commands: dict[str, str], root: Path) -> Completer:
    return ThreadedCompleter(InputCompleter(SlashCompleter(commands), PathCompleter(root)))


class Pastes:
    """Large pastes shown as one-line placeholders; `expand` restores every byte before sending."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def placeholder(self, text: str) -> str | None:
        """The placeholder for a paste large enough to need one, else None."""
        lines = text.count("\n") + 1
        if len(text) < PASTE_CHARS and lines < PASTE_LINES:
            return None
        tag = "[" + _("pasted {chars:,} chars, {lines:,} lines").format(chars=len(text), lines=lines) + \
            f" #{len(self._texts) + 1}]"
        self._texts[tag] = text
        return tag

    def expand(self, text: str) -> str:
        for tag, pasted in self._texts.items():
            text = text.replace(tag, pasted)
        return text

    def clear(self) -> None:
        self._texts.clear()


def history(path: Path | None) -> History:
    """The input history in the app's data folder; in memory when that cannot be written."""
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        if os.name != "nt":
            os.chmod(path, 0o600)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))
