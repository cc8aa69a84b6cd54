"""The transcript pane: a UIControl over the list of blocks that draws only the visible lines.

The control owns its viewport (`top`, the first line shown) instead of leaving scrolling to the
Window: per frame it sums the blocks' cached heights and fetches just the lines on screen, so a
20,000-line transcript costs what a screenful does. While following it stays pinned to the end;
scrolling up stops following, and a hint says that output arrived below.
"""

from __future__ import annotations

import bisect

from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType

from core.i18n import _
from ui.tui.blocks import Block
from ui.tui.render import Fragments


class Transcript(UIControl):
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.follow = True
        self.top = 0
        self.height = 10
        self.width = 80
        self.total = 0
        self._unseen = 0
        self._starts: list[int] = []

    # -- building -----------------------------------------------------------------------------
    def add(self, block: Block) -> Block:
        self.blocks.append(block)
        return block

    def clear(self) -> None:
        self.blocks.clear()
        self.follow, self.top = True, 0

    # -- layout -------------------------------------------------------------------------------
    def _layout(self, width: int) -> None:
        starts, total = [], 0
        for block in self.blocks:
            starts.append(total)
            total += block.height(width)
        if not self.follow and total > self.total and width == self.width:
            self._unseen += total - self.total
        self._starts, self.total, self.width = starts, total, width

    def _render_visible(self, width: int) -> bool:
        """Render the blocks in (or next to) the viewport exactly; False when all already were.
        Off-screen blocks keep an estimated height after a resize and are rendered when reached."""
        first = bisect.bisect_right(self._starts, max(0, self.top - self.height)) - 1
        last = bisect.bisect_right(self._starts, self.top + 2 * self.height)
        estimated = [b for b in self.blocks[max(0, first):last] if not b.exact(width)]
        for block in estimated:
            block.lines(width)
        return bool(estimated)

    def line(self, index: int) -> Fragments:
        pos = bisect.bisect_right(self._starts, index) - 1
        if pos < 0:
            return []
        lines = self.blocks[pos].lines(self.width)
        offset = index - self._starts[pos]
        return lines[offset] if offset < len(lines) else []

    def create_content(self, width: int, height: int | None) -> UIContent:
        # The last column stays empty: consoles that wrap on writing it (wine's, older conhosts)
        # would push every following line down, and wide glyphs measured differently cannot spill.
        width = max(10, width - 1)
        self.height = max(1, height or 1)
        for _attempt in range(3):  # estimates near the viewport become exact, which may move it
            self._layout(width)
            bottom = max(0, self.total - self.height)
            if self.follow or self.top >= bottom:
                self.top, self.follow, self._unseen = bottom, True, 0
            if not self._render_visible(width):
                break
        top, rows = self.top, self.height
        hint = not self.follow

        def get_line(i: int) -> Fragments:
            if hint and i == rows - 1:
                more = " ↓ " + (_("{count:,} new lines · End").format(count=self._unseen) if self._unseen
                                else _("more below · End")) + " "
                return [("reverse", more)]
            return self.line(top + i)

        return UIContent(get_line=get_line, line_count=rows, show_cursor=False)

    def is_focusable(self) -> bool:
        return False

    # -- scrolling ----------------------------------------------------------------------------
    def scroll(self, lines: int) -> None:
        bottom = max(0, self.total - self.height)
        self.top = min(bottom, max(0, self.top + lines))
        self.follow = self.top >= bottom
        if self.follow:
            self._unseen = 0

    def page(self, direction: int) -> None:
        self.scroll(direction * max(1, self.height - 2))

    def home(self) -> None:
        self.top, self.follow = 0, self.total <= self.height

    def end(self) -> None:
        self.follow, self._unseen = True, 0

    def mouse_handler(self, mouse_event: MouseEvent) -> object:
        if mouse_event.event_type == MouseEventType.SCROLL_UP:
            self.scroll(-3)
            return None
        if mouse_event.event_type == MouseEventType.SCROLL_DOWN:
            self.scroll(3)
            return None
        return NotImplemented

    def visible_text(self) -> list[str]:
        """The plain text of the whole transcript at the current width (tests, the exit dump)."""
        return ["".join(t for _style, t in self.line(i)) for i in range(self.total)]
