"""The approval modal: what the tool wants to do, why it needs a yes, and the four decisions with
the same numbers as everywhere else (1 once, 2 always for this session, 3 deny, 4 deny with a
reason; y/a/n too). Esc denies. With 4, a line for the reason opens; Enter sends it. The action is
shown whole, never cut: one taller than the screen scrolls (↑ ↓ PgUp PgDn), opening at its first
risky part, with the rows above and below counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import ConditionalContainer, HSplit, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.utils import get_cwidth
from prompt_toolkit.widgets import Frame, TextArea

from core import protocol as ev
from core.i18n import _, ngettext
from ui.approval_text import first_risky, label, offered, parse_decision, wrap
from ui.tui.render import safe

Answer = Callable[[str, str, str], Any]  # (request id, decision, reason)


class ApprovalDialog:
    def __init__(self, answer: Answer, focus: Callable[[Any], None]) -> None:
        self.request: ev.ApprovalRequested | None = None
        self.asking_reason = False
        self._top: int | None = None  # the first row of the action in view; None: its first risky part
        self._shown_top = 0
        self._room = 1  # the rows the action's view had at the last render
        self._answer = answer
        self._focus = focus
        self.reason = TextArea(height=1, multiline=False, prompt=_(" why (Enter sends): "),
                               accept_handler=self._send_reason)
        self.body = Window(FormattedTextControl(self._text, focusable=True, key_bindings=self._keys()),
                           wrap_lines=True, dont_extend_height=True)
        self.container = Frame(HSplit([self.body, ConditionalContainer(
            self.reason, filter=Condition(lambda: self.asking_reason))]), title=_("Approval needed"),
            style="class:dialog")
        self.visible = Condition(lambda: self.request is not None)

    def open(self, request: ev.ApprovalRequested | None) -> None:
        """Show a request (None closes the dialog: it was answered or the turn ended)."""
        self.request, self.asking_reason = request, False
        self.reason.text = ""
        self._top = None  # opens at the first risky part of the action
        if request is not None:
            self._focus(self.body)

    def scroll(self, rows: int) -> None:
        """Move the action's view by `rows` (negative: up); the render keeps it in range."""
        self._top = self._shown_top + rows

    def _text(self) -> list[tuple[str, str]]:
        r = self.request
        if r is None:
            return []
        what = safe(r.command or r.path or r.action)
        size = get_app().output.get_size()
        # The dialog's margins and frame take 6 columns, the action's indent 3 more.
        inner = max(24, size.columns - 6)
        rows, starts = _rows(what, inner - 3)
        choices = offered(r)
        # A gate's fixed reason has its translation; wrapped here so every row keeps the one-column indent.
        reason = [" " + row for row in wrap(safe(_(r.reason)), inner - 1)]
        # The whole action, every character of it, in a view that scrolls (↑ ↓ PgUp PgDn) when it is
        # taller than the room left by the reason, the decisions, the frame and the float's margins.
        room = max(3, size.rows - 9 - len(choices) - len(reason) - 2)
        if self._top is None:
            at = first_risky(what, r.cwd) if r.command else None
            row = next((i for i, start in enumerate(starts) if start > at), len(rows)) - 1 if at else 0
            self._top = max(0, row - 1)
        self._room = room
        top = self._shown_top = max(0, min(self._top, len(rows) - room))
        shown = rows[top:top + room]
        # Why it needs a yes comes first: however long the action, the risk is on screen.
        lines: list[tuple[str, str]] = [
            ("ansiyellow bold", "\n".join(reason) + "\n"),
            ("bold", " " + (_("{tool} wants to run:") if r.command else _("{tool} wants to change:")).format(
                tool=safe(r.tool)) + "\n"),
        ]
        if top:
            lines.append(("class:dialog.more", "   ▲ " + ngettext("{count} more row above (↑, PgUp)",
                                                            "{count} more rows above (↑, PgUp)", top).format(count=top) + "\n"))
        lines += [("class:dialog.what", f"   {row}\n") for row in shown]
        below = len(rows) - top - len(shown)
        if below:
            lines.append(("class:dialog.more", "   ▼ " + ngettext("{count} more row below (↓, PgDn)",
                                                            "{count} more rows below (↓, PgDn)", below).format(count=below) + "\n"))
        where = _("in {folder}")
        room_for_path = inner - 1 - get_cwidth(where.format(folder=""))
        lines.append(("", " " + where.format(folder=_tail(safe(r.cwd), room_for_path)) + "\n"))
        for d in choices:
            alias = f" ({d.alias}{', Esc' if d.id == 'deny' else ''})" if d.alias else ""
            lines.append(("bold" if d.id == "once" else "", f"  {d.key}  {safe(label(d, r))}{alias}\n"))
        lines[-1] = (lines[-1][0], lines[-1][1].rstrip("\n"))
        return lines

    def _keys(self) -> KeyBindings:
        kb = KeyBindings()
        for name in ["1", "2", "3", "4", "5", "y", "a", "n", "w", "Y", "A", "N", "W"]:
            kb.add(name)(lambda event, name=name: self.decide(name))
        kb.add("escape", eager=True)(lambda event: self.decide("3"))
        kb.add("enter")(lambda event: None)
        for key, rows in (("up", -1), ("down", 1)):
            kb.add(key)(lambda event, rows=rows: self.scroll(rows))
        for key, pages in (("pageup", -1), ("pagedown", 1)):  # a page keeps one row of the last in view
            kb.add(key)(lambda event, pages=pages: self.scroll(pages * max(1, self._room - 1)))
        return kb

    def decide(self, key: str) -> None:
        decision = parse_decision(key, offered(self.request)) if self.request is not None else None
        if self.request is None or decision is None:
            return
        if decision == "deny_reason":
            self.asking_reason = True
            self._focus(self.reason)
            return
        self._answer(self.request.id, decision, "")

    def _send_reason(self, buffer: Any) -> bool:
        if self.request is not None:
            self._answer(self.request.id, "deny_reason", buffer.text.strip())
        return False


def _rows(text: str, width: int) -> tuple[list[str], list[int]]:
    """`text` wrapped to `width` columns: the rows, and where in `text` each row starts."""
    rows: list[str] = []
    starts: list[int] = []
    offset = 0
    for line in text.rstrip("\n").split("\n"):
        for row in wrap(line, width):
            rows.append(row)
            starts.append(offset)
            offset += len(row)
        offset += 1  # the line break
    return rows, starts


def _tail(path: str, limit: int) -> str:
    """A folder's path cut from the left to one line of `limit` columns: its last parts name the project."""
    if get_cwidth(path) <= limit:
        return path
    kept, used = [], 1
    for char in reversed(path):
        used += get_cwidth(char)
        if used > limit:
            break
        kept.append(char)
    return "…" + "".join(reversed(kept))
