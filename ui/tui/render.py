"""Rich renderables → prompt_toolkit fragments, rendered off-screen at a given width.

Rich draws into a reusable StringIO console; its Segments become `(style, text)` fragments through
a cached Style → prompt_toolkit style-string map. That is faster than an ANSI round trip and never
leaks control sequences (OSC 8 links and the like) into the screen.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

from rich.color import ColorType
from rich.console import Console
from rich.style import Style

from core.runtime.display import defuse

Fragments = list[tuple[str, str]]

_STANDARD = ("ansiblack", "ansired", "ansigreen", "ansiyellow", "ansiblue", "ansimagenta", "ansicyan", "ansigray",
             "ansibrightblack", "ansibrightred", "ansibrightgreen", "ansibrightyellow", "ansibrightblue",
             "ansibrightmagenta", "ansibrightcyan", "ansiwhite")


def safe(text: str, *, output: bool = False) -> str:
    """Text fit to show, through the project's one sanitiser (core.runtime.display): control characters
    made visible; for command output (`output=True`) colours dropped and \\r redraws resolved."""
    return defuse(text.replace("\r\n", "\n"), output=output)


def _color(color: Any, background: bool) -> str:
    if color is None or color.type == ColorType.DEFAULT:
        return ""
    if color.type in (ColorType.STANDARD, ColorType.WINDOWS) and color.number is not None and color.number < 16:
        name = _STANDARD[color.number]
    else:
        name = color.get_truecolor().hex
    return f"bg:{name}" if background else name


@lru_cache(maxsize=4096)
def pt_style(style: Style | None) -> str:
    """A Rich Style as a prompt_toolkit style string."""
    if style is None:
        return ""
    parts = [_color(style.color, False), _color(style.bgcolor, True)]
    for flag in ("bold", "italic", "underline", "strike", "reverse", "dim"):
        if getattr(style, flag):
            parts.append(flag)
    return " ".join(p for p in parts if p)


class Renderer:
    """One off-screen console reused for every render (they happen on the UI thread only)."""

    def __init__(self) -> None:
        self.ascii = False
        self.console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor",
                               legacy_windows=False, highlight=False, emoji=False, width=80,
                               soft_wrap=False, no_color=False)

    def lines(self, renderable: Any, width: int) -> list[Fragments]:
        """The renderable as lines of fragments, wrapped to `width` cells."""
        width = max(10, width)
        options = self.console.options.update_width(width)
        if self.ascii:
            options = options.copy()
            options.encoding = "ascii"  # Rich then substitutes ASCII boxes
        out: list[Fragments] = []
        for line in self.console.render_lines(renderable, options, pad=False, new_lines=False):
            out.append([(pt_style(seg.style), seg.text) for seg in line if not seg.control and seg.text])
        return out


RENDERER = Renderer()


def plain(line: Fragments) -> str:
    return "".join(text for _, text in line)
