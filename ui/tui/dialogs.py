"""The approval modal: what the tool wants to do, why it needs a yes, and the four decisions with
the same numbers as everywhere else (1 once, 2 always for this session, 3 deny, 4 deny with a
reason; y/a/n too). Esc denies. With 4, a line for the reason opens; Enter sends it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import ConditionalContainer, HSplit, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.widgets import Frame, TextArea

from core import protocol as ev
from core.agent.approvals import compact_action, label, offered, parse_decision
from ui.tui.render import safe

Answer = Callable[[str, str, str], Any]  # (request id, decision, reason)


class ApprovalDialog:
    def __init__(self, answer: Answer, focus: Callable[[Any], None]) -> None:
        self.request: ev.ApprovalRequested | None = None
        self.asking_reason = False
        self._answer = answer
        self._focus = focus
        self.reason = TextArea(height=1, multiline=False, prompt=" why (Enter sends): ",
                               accept_handler=self._send_reason)
        self.body = Window(FormattedTextControl(self._text, focusable=True, key_bindings=self._keys()),
                           wrap_lines=True, dont_extend_height=True)
        self.container = Frame(HSplit([self.body, ConditionalContainer(
            self.reason, filter=Condition(lambda: self.asking_reason))]), title="Approval needed",
            style="class:dialog")
        self.visible = Condition(lambda: self.request is not None)

    def open(self, request: ev.ApprovalRequested | None) -> None:
        """Show a request (None closes the dialog: it was answered or the turn ended)."""
        self.request, self.asking_reason = request, False
        self.reason.text = ""
        if request is not None:
            self._focus(self.body)

    def _text(self) -> list[tuple[str, str]]:
        r = self.request
        if r is None:
            return []
        what = r.command or r.path or r.action
        # The dialog's margins and frame take 6 columns. A long action is compacted so the risky line
        # and the decisions stay on screen (the same compaction as the plain prompt), after its indent.
        inner = max(24, get_app().output.get_size().columns - 6)
        action = compact_action(safe(what), r.command, r.cwd, line_chars=inner - 3)
        # Why it needs a yes comes first: however long the action, the risk is on screen.
        lines: list[tuple[str, str]] = [
            ("ansiyellow bold", f" {safe(r.reason)}\n"),
            ("bold", f" {safe(r.tool)} wants to {'run' if r.command else 'change'}:\n"),
            *[("class:dialog.what", f"   {row}\n") for row in action.split("\n")],
            ("", f" in {_tail(safe(r.cwd), inner - 4)}\n"),
        ]
        for d in offered(r):
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


def _tail(path: str, limit: int) -> str:
    """A folder's path cut from the left to one line: its last parts name the project."""
    return path if len(path) <= limit else "…" + path[len(path) - limit + 1:]
