"""Incremental Markdown for a streaming answer.

The text is split into finished top-level blocks and an open tail. A block is finished once the
parser (markdown-it, configured as Rich configures it) sees another top-level block start after
it; finished blocks are rendered once per width and cached, so a delta costs a re-render of the
tail only, and at most `TAIL_INTERVAL` apart. The boundary is looked for only when a delta brings
a newline, and only the tail is parsed.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from ui.tui.render import RENDERER, Fragments

TAIL_INTERVAL = 0.05  # seconds between re-renders of the open tail (≤ 20 a second)


@lru_cache(maxsize=1)
def _parser() -> Any:
    """markdown-it as Rich configures it; imported on the first answer, not before the first frame."""
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


def split_finished(text: str) -> tuple[str, str]:
    """(finished blocks, open tail): everything before the start of the last top-level block."""
    starts = [token.map[0] for token in _parser().parse(text)
              if token.level == 0 and token.nesting >= 0 and token.map is not None]
    if len(starts) < 2:
        return "", text
    lines = text.splitlines(keepends=True)
    cut = max(starts)
    return "".join(lines[:cut]), "".join(lines[cut:])


def render_markdown(source: str, width: int) -> list[Fragments]:
    from rich.markdown import Markdown

    if not source.strip():
        return []
    lines = RENDERER.lines(Markdown(source, code_theme="monokai", hyperlinks=False), width)
    while lines and _blank(lines[-1]):
        lines.pop()
    while lines and _blank(lines[0]):
        lines.pop(0)
    return lines


def _blank(line: Fragments) -> bool:
    """An empty line (a code block's padding has a background: that one is kept)."""
    return all(not text.strip() and "bg:" not in style for style, text in line)


class MarkdownStream:
    """One answer as it streams: `feed()` deltas, `lines(width)` to draw, `finish()` at the end."""

    def __init__(self, text: str = "") -> None:
        self.chunks: list[str] = []  # finished blocks, in order
        self.tail = ""
        self.done = False
        self._chunk_cache: dict[int, list[list[Fragments]]] = {}  # width → rendered chunks so far
        self._tail_cache: tuple[int, str, list[Fragments]] | None = None
        self._tail_time = 0.0
        if text:
            self.feed(text)

    @property
    def text(self) -> str:
        return "".join(self.chunks) + self.tail

    def feed(self, delta: str) -> None:
        self.tail += delta
        if "\n" in delta:
            self._commit()

    def finish(self) -> None:
        self._commit()
        self.done = True

    def _commit(self) -> None:
        finished, tail = split_finished(self.tail)
        if finished:
            self.chunks.append(finished)
            self.tail = tail

    def lines(self, width: int) -> list[Fragments]:
        rendered = self._chunk_cache.setdefault(width, [])
        if len(self._chunk_cache) > 2:  # keep the current width and one other
            for stale in [w for w in self._chunk_cache if w != width][:-1]:
                del self._chunk_cache[stale]
        while len(rendered) < len(self.chunks):
            rendered.append(render_markdown(self.chunks[len(rendered)], width))
        out: list[Fragments] = []
        for chunk in rendered:
            if chunk:
                if out:
                    out.append([])
                out.extend(chunk)
        tail = self._tail_lines(width)
        if tail:
            if out:
                out.append([])
            out.extend(tail)
        return out

    def _tail_lines(self, width: int) -> list[Fragments]:
        cached = self._tail_cache
        if cached is not None and cached[0] == width and cached[1] == self.tail:
            return cached[2]
        now = time.monotonic()
        if cached is not None and cached[0] == width and not self.done and now - self._tail_time < TAIL_INTERVAL:
            return cached[2]  # a newer tail is drawn at the next frame
        lines = render_markdown(self.tail, width)
        self._tail_cache = (width, self.tail, lines)
        self._tail_time = now
        return lines
