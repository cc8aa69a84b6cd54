"""What the transcript is made of. Each block renders itself to lines of fragments at a width and
caches them by (width, version); a change bumps the version. All text is made safe first."""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text

from core.i18n import _, ngettext
from ui.reports import TOOL_STATUS
from ui.tui.markdown import MarkdownStream
from ui.tui.render import RENDERER, Fragments, safe

UNICODE_GLYPHS = {"bullet": "●", "user": "›", "gutter": "│", "fold": "▸", "unfold": "▾", "ok": "✓", "fail": "✗",
                  "warn": "!", "retry": "⟳", "more": "…"}
ASCII_GLYPHS = {"bullet": "*", "user": ">", "gutter": "|", "fold": ">", "unfold": "v", "ok": "+", "fail": "x",
                "warn": "!", "retry": "~", "more": "..."}
GLYPHS = dict(UNICODE_GLYPHS)
_BORDERS = {"HORIZONTAL": ("─", "-"), "VERTICAL": ("│", "|"), "TOP_LEFT": ("┌", "+"), "TOP_RIGHT": ("┐", "+"),
            "BOTTOM_LEFT": ("└", "+"), "BOTTOM_RIGHT": ("┘", "+")}
LIVE_TAIL = 5  # lines of a running command's output shown
FOLDED_RESULT = 4  # lines of a finished tool's result shown until expanded
INDENT = 2


def use_ascii(on: bool) -> None:
    """ASCII chrome for consoles that draw box and bullet glyphs double-width (CJK code pages)."""
    from prompt_toolkit.widgets.base import Border

    GLYPHS.update(ASCII_GLYPHS if on else UNICODE_GLYPHS)
    RENDERER.ascii = on  # Rich's tables and panels drawn with ASCII boxes
    for name, (fancy, plain_char) in _BORDERS.items():  # the approval dialog's frame
        setattr(Border, name, plain_char if on else fancy)


def _indent(lines: list[Fragments], first: Fragments | None = None, rest: str = " " * INDENT) -> list[Fragments]:
    out = []
    for i, line in enumerate(lines):
        out.append([*(first if i == 0 and first is not None else [("", rest)]), *line])
    return out


def _text_lines(text: Text, width: int) -> list[Fragments]:
    return RENDERER.lines(text, max(10, width))


class Block:
    """Cached rendering; subclasses implement `render` and say what they are as Markdown."""

    foldable = False

    def __init__(self) -> None:
        self.version = 0
        self.expanded = False
        self._cache: tuple[int, int, list[Fragments]] | None = None

    def changed(self) -> None:
        self.version += 1

    def lines(self, width: int) -> list[Fragments]:
        cache = self._cache
        if cache is not None and cache[0] == width and cache[1] == self.version:
            return cache[2]
        lines = self.render(width)
        self._cache = (width, self.version, lines)
        return lines

    def height(self, width: int) -> int:
        """Lines at `width`; after a resize, an estimate from the last render until it is drawn."""
        cache = self._cache
        if cache is not None and cache[1] == self.version:
            if cache[0] == width:
                return len(cache[2])
            return max(1, round(len(cache[2]) * cache[0] / max(1, width)))
        return len(self.lines(width))

    def exact(self, width: int) -> bool:
        cache = self._cache
        return cache is not None and cache[0] == width and cache[1] == self.version

    def render(self, width: int) -> list[Fragments]:
        raise NotImplementedError

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self.changed()

    def markdown(self) -> str:
        return ""


class UserBlock(Block):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = safe(text)

    def render(self, width: int) -> list[Fragments]:
        lines = _text_lines(Text(self.text, style="bold"), width - INDENT)
        return [[], *_indent(lines, first=[("ansicyan bold", GLYPHS["user"] + " ")])]

    def markdown(self) -> str:
        return "> " + self.text.replace("\n", "\n> ")


class AnswerBlock(Block):
    """The model's answer, streamed as Markdown. Always re-asks the stream, which caches itself."""

    def __init__(self, item_id: str = "", text: str = "") -> None:
        super().__init__()
        self.item_id = item_id
        self.stream = MarkdownStream(safe(text))
        if text:
            self.stream.finish()
        self.interrupted = False

    def feed(self, delta: str) -> None:
        self.stream.feed(safe(delta))
        self.changed()

    def finish(self) -> None:
        self.stream.finish()
        self.changed()

    def lines(self, width: int) -> list[Fragments]:
        if not self.stream.done:  # the stream throttles its tail itself: ask it every frame
            return self.render(width)
        return super().lines(width)

    def render(self, width: int) -> list[Fragments]:
        lines = _indent(self.stream.lines(width - INDENT))
        if self.interrupted:
            lines.append([("", "  "), ("ansiyellow", _("(interrupted)"))])
        return [[], *lines] if lines else []

    def markdown(self) -> str:
        return self.stream.text


class ReasoningBlock(Block):
    foldable = True

    def __init__(self, item_id: str = "", text: str = "", done: bool = False) -> None:
        super().__init__()
        self.item_id = item_id
        self.text = safe(text)
        self.done = done
        self.started = time.monotonic()
        self.seconds = 0.0

    def feed(self, delta: str) -> None:
        self.text += safe(delta)
        self.changed()

    def finish(self, text: str = "") -> None:
        if text:
            self.text = safe(text)
        if not self.done:
            self.seconds = time.monotonic() - self.started
        self.done = True
        self.changed()

    def render(self, width: int) -> list[Fragments]:
        if self.done and not self.expanded:
            took = _("thought for {seconds:.0f} s").format(seconds=self.seconds) if self.seconds >= 1 else _("thought")
            words = len(self.text.split())
            count = ngettext("{count:,} word", "{count:,} words", words).format(count=words)
            return [[("", "  "), ("ansibrightblack italic", f"{GLYPHS['fold']} {took} · {count} (Ctrl-O)")]]
        lines = _text_lines(Text(self.text.strip(), style="italic"), width - INDENT - 2)
        if not self.done:
            lines = lines[-6:]
        gutter = [("ansibrightblack", f"  {GLYPHS['gutter']} ")]
        head = [[("", "  "), ("ansibrightblack italic", f"{GLYPHS['unfold']} " + (_("thinking…") if not self.done else
                                                                                  _("thought")))]]
        return head + [[*gutter, *[("ansibrightblack " + s, t) for s, t in line]] for line in lines]

    def markdown(self) -> str:
        return ""


@dataclass
class ToolState:
    call_id: str
    name: str
    arguments: Any
    status: str = "running"
    started: float = field(default_factory=time.monotonic)
    duration: float = 0.0
    live: str = ""
    result: str = ""
    model_result: str = ""
    approval: str = ""
    server: str = ""  # the MCP server whose tool it is


def describe(name: str, arguments: Any) -> str:
    """The command or path a tool call is about, on one line."""
    if isinstance(arguments, dict):
        for key in ("command", "path", "pattern", "id"):
            if key in arguments:
                return " ".join(safe(str(arguments[key])).split())
        return ""
    return " ".join(safe(str(arguments)).split())[:200]


class ToolBlock(Block):
    foldable = True
    LIVE_KEEP = 64 * 1024

    def __init__(self, state: ToolState) -> None:
        super().__init__()
        self.state = state

    def add_output(self, text: str) -> None:
        self.state.live = (self.state.live + safe(text, output=True))[-self.LIVE_KEEP:]
        self.changed()

    def render(self, width: int) -> list[Fragments]:
        s = self.state
        colour = {"running": "ansiyellow", "ok": "ansigreen"}.get(s.status, "ansired")
        head = Text.assemble((f"{GLYPHS['bullet']} ", colour), (s.name, "bold"),
                             (_(" · MCP server {name}").format(name=s.server) if s.server else "", "dim"), "  ",
                             (describe(s.name, s.arguments), "ansicyan" if s.name == "run_shell" else ""))
        lines = _text_lines(head, width)[:3]
        inner = width - INDENT - 2
        gutter = [("ansibrightblack", f"  {GLYPHS['gutter']} ")]
        body: list[Fragments] = []
        if s.approval:
            body += _text_lines(Text(s.approval, style="ansiyellow"), inner)
        diff = self._diff()
        if diff is not None and s.status != "running":
            body += diff if self.expanded else diff[:12] + self._more(len(diff) - 12)
        if s.status == "running":
            tail = s.live.rstrip("\n").split("\n")[-LIVE_TAIL:] if s.live.strip() else []
            body += [_clip(line, inner, "ansibrightblack") for line in tail]
            body.append([("ansibrightblack", _("running {seconds:.0f} s · Esc interrupts").format(
                seconds=time.monotonic() - s.started))])
        else:
            result = s.result.rstrip("\n").split("\n") if s.result.strip() else []
            if (diff is None or s.status != "ok") and self.expanded:
                body += [piece for line in result for piece in _text_lines(Text(line), inner)]
            elif diff is None or s.status != "ok":
                head, tail = _fold(result, s.name == "run_shell")
                body += [_clip(line, inner, "ansibrightblack" if line.startswith("[pruned") else "")
                         for line in head]
                body += self._more(len(result) - len(head) - len(tail))
                body += [_clip(line, inner, "") for line in tail]
            mark = GLYPHS["ok"] if s.status == "ok" else GLYPHS["fail"]
            cut = _(" · the model got a shortened copy") if s.model_result and s.model_result != s.result else ""
            body.append([(colour, f"{mark} {_(TOOL_STATUS.get(s.status, s.status))}"),
                         ("ansibrightblack", f" · {s.duration:.1f} s{cut}")])
        return [[]] + lines + [[*gutter, *line] for line in body]

    def _more(self, hidden: int) -> list[Fragments]:
        if hidden <= 0:
            return []
        return [[("ansibrightblack", f"{GLYPHS['more']} " + ngettext("+{count:,} line (Ctrl-O)", "+{count:,} lines (Ctrl-O)",
                                                                   hidden).format(count=hidden))]]

    def _diff(self) -> list[Fragments] | None:
        args = self.state.arguments
        if not isinstance(args, dict):
            return None
        if self.state.name == "edit_file" and isinstance(args.get("old_text"), str):
            lines = _edit_diff(args)
        elif self.state.name == "multi_edit" and isinstance(args.get("edits"), list):
            lines = [line for edit in args["edits"] if isinstance(edit, dict) and isinstance(edit.get("old_text"), str)
                     for line in _edit_diff(edit)]
        elif self.state.name == "write_file" and isinstance(args.get("content"), str):
            lines = ["+" + line for line in _file_lines(safe(args["content"]))]
        else:
            return None
        styles = {"+": "ansigreen", "-": "ansired", "@": "ansicyan"}
        return [[(styles.get(line[:1], ""), line)] for line in lines]

    def markdown(self) -> str:
        s = self.state
        return f"`{s.name} {describe(s.name, s.arguments)}` → {_(TOOL_STATUS.get(s.status, s.status))}"


def _edit_diff(edit: dict[str, Any]) -> list[str]:
    old, new = _file_lines(safe(edit["old_text"])), _file_lines(safe(str(edit.get("new_text", ""))))
    return list(difflib.unified_diff(old, new, lineterm="", n=2))[2:]


def _file_lines(text: str) -> list[str]:
    """A text's lines as an editor shows them: a final newline ends the last line, it adds none."""
    return text.removesuffix("\n").split("\n")


def _fold(result: list[str], command: bool) -> tuple[list[str], list[str]]:
    """The lines a folded result shows: a command's exit code and pruning stamp, then its last
    lines (where test runners and compilers summarise); other tools' first lines."""
    if len(result) <= FOLDED_RESULT + 1:
        return result, []
    if not command:
        return result[:FOLDED_RESULT], []
    head = [line for line in result[:2] if line.startswith(("exit code", "[pruned"))]
    return head, result[-(FOLDED_RESULT - 1):]


def _clip(line: str, width: int, style: str) -> Fragments:
    text = Text(line.expandtabs(4), style=style, no_wrap=True, overflow="ellipsis")
    text.truncate(max(4, width), overflow="ellipsis")
    rendered = _text_lines(text, width)
    return rendered[0] if rendered else []


class BannerBlock(Block):
    STYLES: ClassVar[dict[str, tuple[str, str]]] = {"error": ("ansired bold", "fail"), "warning": ("ansiyellow", "warn"), "retry": ("ansiyellow", "retry"),
              "aborted": ("ansiyellow", "warn"), "context": ("ansibrightblack", "fold"),
              "info": ("ansibrightblack", "fold")}

    def __init__(self, kind: str, text: str) -> None:
        super().__init__()
        self.kind = kind
        self.text = safe(text)

    def render(self, width: int) -> list[Fragments]:
        style, glyph = self.STYLES.get(self.kind, ("ansiyellow", "warn"))
        return _indent(_text_lines(Text(f"{GLYPHS[glyph]} {self.text}", style=style), width - INDENT))

    def markdown(self) -> str:
        return f"*{self.text}*"


class WelcomeBlock(Block):
    """The first screen's one quiet line: cut at the edge rather than wrapped onto a second."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = safe(text)

    def render(self, width: int) -> list[Fragments]:
        return _indent([_clip(self.text, width - INDENT, "ansibrightblack")])

    def markdown(self) -> str:
        return f"*{self.text}*"


class CommandBlock(Block):
    """A slash command's reply: plain text, kept as written."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = safe(text)

    def render(self, width: int) -> list[Fragments]:
        return _indent(_text_lines(Text(self.text), width - INDENT))

    def markdown(self) -> str:
        return "```\n" + self.text + "\n```"
