"""The full-screen Application: layout, key bindings and the TUI's own slash commands.

The app holds the core's `Runtime` and nothing else of it: prompts, slash commands, approval
answers and Esc go in as ops; everything the core says arrives as events through `EventPump`,
and the UI thread is the only one that touches the layout. The runtime works on its own thread,
so typing, scrolling and Esc stay live while the model streams or a command runs. Enter while a
turn runs queues the message; the runtime takes it when the turn ends.
"""

from __future__ import annotations

import asyncio
import time
import traceback
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer, Float, FloatContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import SearchToolbar, TextArea

from core import protocol as ev
from core.i18n import N_, _
from core.runtime.runtime import Runtime
from core.runtime.slash import Local, Usage, command_docs, help_lines, parse
from ui.language import COMMAND as LANG_COMMAND
from ui.language import lang_command
from ui.reports import answer_text
from ui.tui import clipboard
from ui.tui.blocks import AnswerBlock, ReasoningBlock, ToolBlock, UserBlock
from ui.tui.dialogs import ApprovalDialog
from ui.tui.inputbox import Pastes, completer, history
from ui.tui.state import EventPump, View
from ui.tui.status import status_fragments
from ui.tui.transcript import Transcript

TUI_COMMANDS = {
    "/copy": N_("copy the last answer (terminal and system clipboard, and a file)"),
    "/export": N_("write the conversation as Markdown: /export [PATH]"),
    "/mouse": N_("toggle mouse capture: wheel scrolling on, the terminal's own selection off"),
    **LANG_COMMAND,
}
KEYS = N_("""Keys:
  Enter            send (while a turn runs: queued)     Alt-Enter, Ctrl-J  new line
  Esc              interrupt the running turn           Ctrl-C             clear the input; twice: quit
  Ctrl-D           quit (on an empty input)             Ctrl-L             redraw
  Up/Down          walk the input history               Ctrl-R             search it
  PgUp/PgDn        scroll the transcript                Ctrl-Home/End      top / bottom (follow)
  Ctrl-O           expand or fold the latest tool output or reasoning
  Shift-Tab        next approval mode (auto, ask, yes; shown in the status bar)
  /                commands                             @                  complete a workspace path""")
ANSWERS = typing.get_args(ev.CommandAnswer)
EXIT_WINDOW = 2.0  # seconds within which a second Ctrl-C quits
STYLE = Style.from_dict({
    "status": "reverse",
    "status.busy": "bg:ansiblue ansiwhite",
    "dialog": "bg:#1c1c1c",
    "dialog.what": "bold ansicyan",
    "frame.border": "ansiyellow",
    "prompt": "ansicyan bold",
})


class AgentApp:
    """One full-screen session on a runtime whose events reach `pump`."""

    def __init__(self, runtime: Runtime, pump: EventPump, view: View, workspace: Path, *,
                 data_dir: Path | None = None, mouse: bool = False, input: Any = None, output: Any = None) -> None:
        self.runtime = runtime
        self.pump = pump
        self.view = view
        self.transcript = view.transcript
        self.data_dir = data_dir
        self.mouse = mouse
        self.pending = 0
        self.stopping = False  # an interrupt was sent for the running job  # jobs queued or running (UI thread only)
        self.pastes = Pastes()
        self._armed = 0.0
        self.crash: str = ""
        commands = command_docs(TUI_COMMANDS)
        self.search = SearchToolbar()
        self.input = TextArea(multiline=True, wrap_lines=True, prompt=[("class:prompt", "› ")],
                              history=history(data_dir / "input-history" if data_dir else None),
                              completer=completer(commands, workspace),
                              complete_while_typing=True, search_field=self.search,
                              height=Dimension(min=1, max=8), dont_extend_height=True)
        self.dialog = ApprovalDialog(self._answer_approval, self._focus)
        view.on_approval = self.dialog.open
        body = HSplit([
            Window(self.transcript, wrap_lines=False, always_hide_cursor=True),
            Window(FormattedTextControl(lambda: status_fragments(self.view.status, self._width() - 1)), height=1),
            self.input,
            self.search,
        ])
        root = FloatContainer(body, floats=[
            Float(xcursor=True, ycursor=True, content=CompletionsMenu(max_height=10, scroll_offset=1)),
            Float(content=ConditionalContainer(self.dialog.container, filter=self.dialog.visible),
                  left=2, right=2, bottom=3),
        ])
        self.app: Application[int] = Application(
            layout=Layout(root, focused_element=self.input), key_bindings=self._keys(), style=STYLE,
            full_screen=True, mouse_support=Condition(lambda: self.mouse), input=input, output=output,
            min_redraw_interval=1 / 30, max_render_postpone_time=0.05, terminal_size_polling_interval=0.25)
        # A bare Esc must not wait for a possible Alt-sequence (1.5 s with the defaults).
        self.app.ttimeoutlen = 0.03
        self.app.timeoutlen = 0.05

    # -- running ----------------------------------------------------------------------------
    def run(self) -> int:
        try:
            return self.app.run(pre_run=self._pre_run, set_exception_handler=False) or 0
        finally:
            self.runtime.send(ev.Interrupt(_("the agent is closing")))
            self.runtime.send(ev.Shutdown())

    def _pre_run(self) -> None:
        self.pump.loop = asyncio.get_event_loop()
        self.pump.loop.set_exception_handler(self._loop_error)
        self.pump.drain()
        self.app.output.write_raw("\x1b[?1007l")  # the wheel must not turn into arrow keys (history)
        self.runtime.start()
        self.app.create_background_task(self._tick())

    def _loop_error(self, loop: Any, context: dict[str, Any]) -> None:
        """A failure inside the UI loop (drawing, a key handler) is fatal: leave the full screen
        cleanly and let `tui.run` say where the traceback is, instead of prompt_toolkit's
        print-and-wait-for-Enter over the screen."""
        exc = context.get("exception")
        if exc is None:
            return
        self.crash = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        if self.app.is_running and not self.app.is_done:
            self.app.exit(exception=exc)

    async def _tick(self) -> None:
        """Redraw timers (elapsed seconds, retry countdown, the throttled Markdown tail) while busy."""
        while True:
            await asyncio.sleep(0.1)
            if self.view.status.busy:
                self.app.invalidate()

    def _width(self) -> int:
        try:
            return self.app.output.get_size().columns
        except Exception:  # no terminal size yet (tests): a usual width
            return 80

    def _focus(self, target: Any) -> None:
        self.app.layout.focus(target)

    # -- events ---------------------------------------------------------------------------
    def apply(self, event: ev.Event) -> None:
        """The pump's sink on the UI thread: the runtime's job events here, the rest in the view."""
        status = self.view.status
        match event:
            case ev.JobStarted(kind=kind, text=text):
                status.busy, status.queued = True, max(0, status.queued - 1)
                if kind == "task":
                    self.view.user(text)
                self.transcript.end()
            case ev.JobEnded():
                self.pending -= 1
                self.stopping = False
                status.busy = False
                self.view.set_state("idle")
            case ev.InternalError(trace=trace):
                self.bug(trace)
            case _ if isinstance(event, ANSWERS):
                self._show_answer(event)
            case _:
                self.view.apply(event)

    def bug(self, trace: str) -> None:
        """A bug that need not end the session (in the worker, or drawing one event): log it, say so."""
        path = self.log_crash(trace)
        self.view.banner("error", _("internal error; the session goes on") + (
            _(" (details in {path})").format(path=path) if path else ""))

    def _show_answer(self, answer: ev.CommandAnswer) -> None:
        """A slash command's answer: the status bar follows a mode or model switch; /context gets a gauge."""
        text = answer_text(answer)
        match answer:
            case ev.ModelChanged(model=model):
                self.view.status.model = model
            case ev.ModeChanged(mode=mode):
                self.view.status.mode = mode
            case ev.ContextReport(total=total, budget=budget) if budget:
                share = total / budget
                filled = min(30, round(30 * share))
                text = f"[{'█' * filled}{'░' * (30 - filled)}] " + _("{share:.0f}% of the budget").format(
                    share=100 * share) + f"\n{text}"
        self.view.command_reply(text)

    def log_crash(self, trace: str) -> Path | None:
        try:
            folder = Path(self.view.folder)
            path = folder / f"crash-{time.strftime('%Y%m%d-%H%M%S')}.log"
            path.write_text(trace, encoding="utf-8")
            return path
        except (OSError, AttributeError):
            return None

    # -- input ------------------------------------------------------------------------------
    def submit(self, text: str) -> None:
        text = self.pastes.expand(text)
        self.pastes.clear()
        if not text.strip():
            return
        line = text.strip()
        if line.startswith("/") and "\n" not in line:
            match parse(line, local=tuple(TUI_COMMANDS)):
                case Local(name="/exit" | "/quit"):
                    self.app.exit(result=0)
                case Local(name=name, arg=arg):
                    self.view.command_reply(self._local(name, arg))
                    self.app.invalidate()
                case Usage() as usage:
                    self.view.command_reply(answer_text(usage))
                    self.app.invalidate()
                case op:
                    self._queue(op)
            return
        self._queue(ev.Submit(text))

    def _queue(self, job: ev.Submit | ev.CommandOp) -> None:
        self.pending += 1
        if self.pending > 1:
            self.view.status.queued += 1
            self.view.banner("info", _("queued: sent when the running turn ends (Esc interrupts it)"))
        self.runtime.send(job)

    def _local(self, name: str, arg: str) -> str:
        if name == "/help":
            return "\n".join(help_lines(TUI_COMMANDS)) + "\n" + _(KEYS)
        if name == "/lang":
            return lang_command(arg)
        if name == "/mouse":
            self.mouse = not self.mouse
            return (_("mouse capture on: the wheel scrolls; hold Shift to select text with the mouse") if self.mouse
                    else _("mouse capture off: the terminal's own selection works; scroll with PgUp/PgDn"))
        folder = Path(self.view.folder)
        if name == "/copy":
            if not self.view.answers:
                return _("nothing to copy yet")
            return clipboard.copy(self.view.answers[-1], self.app.output.write_raw, folder)
        if name == "/export":
            path = Path(arg).expanduser() if arg else folder / f"conversation-{time.strftime('%Y%m%d-%H%M%S')}.md"
            if not path.is_absolute():
                path = Path(self.view.workspace) / path
            return clipboard.export(self.markdown(), path)
        return ""

    def markdown(self) -> str:
        parts = [block.markdown() for block in self.transcript.blocks]
        return "\n\n".join(p for p in parts if p) + "\n"

    def _answer_approval(self, request_id: str, decision: str, reason: str) -> None:
        self.runtime.send(ev.Answer(request_id, decision, reason))
        self.dialog.open(None)
        self._focus(self.input)

    def interrupt(self) -> None:
        """Esc: stop the running turn."""
        if self.view.status.busy and not self.stopping:
            self.stopping = True
            self.runtime.send(ev.Interrupt(_("interrupted by the user (Esc)")))
            self.view.status.detail = _("stopping")

    # -- keys -------------------------------------------------------------------------------
    def _keys(self) -> KeyBindings:
        kb = KeyBindings()
        modal = self.dialog.visible
        busy = Condition(lambda: self.view.status.busy)
        in_input = Condition(lambda: self.app.layout.has_focus(self.input))
        empty = Condition(lambda: not self.input.text)

        @kb.add("enter", filter=in_input & ~has_completions)
        def _send(event: Any) -> None:
            buffer = self.input.buffer
            text = buffer.text
            if text.strip():
                buffer.append_to_history()
            buffer.reset()
            self.submit(text)

        @kb.add("enter", filter=in_input & has_completions)
        def _complete(event: Any) -> None:
            buffer = self.input.buffer
            state = buffer.complete_state
            if state is not None and state.current_completion is None and state.completions:
                buffer.apply_completion(state.completions[0])
            elif state is not None and state.current_completion is not None:
                buffer.complete_state = None
            if buffer.text.startswith("/") and " " not in buffer.text:
                _send(event)

        @kb.add("escape", "enter", filter=in_input)
        @kb.add("c-j", filter=in_input)
        def _newline(event: Any) -> None:
            self.input.buffer.insert_text("\n")

        @kb.add(Keys.BracketedPaste, filter=in_input)
        def _paste(event: Any) -> None:
            data = event.data.replace("\r\n", "\n").replace("\r", "\n")
            self.input.buffer.insert_text(self.pastes.placeholder(data) or data)

        @kb.add("escape", filter=busy & ~modal & ~has_completions, eager=True)
        def _interrupt(event: Any) -> None:
            self.interrupt()

        @kb.add("escape", filter=~busy & ~modal & has_completions, eager=True)
        def _close_menu(event: Any) -> None:
            self.input.buffer.cancel_completion()

        @kb.add("c-c")
        def _ctrl_c(event: Any) -> None:
            if modal():
                self.dialog.decide("3")
            elif self.input.text:
                self.input.buffer.reset()
                self.pastes.clear()
            elif self.view.status.busy:
                self.interrupt()
            elif time.monotonic() - self._armed < EXIT_WINDOW:
                event.app.exit(result=0)
            else:
                self._armed = time.monotonic()
                self.view.banner("info", _("press Ctrl-C again to quit (or type /exit)"))

        @kb.add("c-d", filter=empty & ~modal)
        def _quit(event: Any) -> None:
            event.app.exit(result=0)

        @kb.add("c-l")
        def _redraw(event: Any) -> None:
            event.app.renderer.clear()

        @kb.add("pageup")
        def _page_up(event: Any) -> None:
            self.transcript.page(-1)

        @kb.add("pagedown")
        def _page_down(event: Any) -> None:
            self.transcript.page(1)

        @kb.add("s-up")
        def _line_up(event: Any) -> None:
            self.transcript.scroll(-3)

        @kb.add("s-down")
        def _line_down(event: Any) -> None:
            self.transcript.scroll(3)

        @kb.add("c-home")
        @kb.add("home", filter=empty)
        def _top(event: Any) -> None:
            self.transcript.home()

        @kb.add("c-end")
        @kb.add("end", filter=empty)
        def _bottom(event: Any) -> None:
            self.transcript.end()

        @kb.add("s-tab", filter=~modal & ~has_completions)
        def _next_mode(event: Any) -> None:
            self._queue(ev.SetMode(mode="next"))

        @kb.add("c-o")
        def _toggle(event: Any) -> None:
            block = self.view.foldable()
            if block is not None:
                block.toggle()

        return merge_key_bindings([kb])


def exit_dump(blocks: list[Any], write: Callable[[Any], None]) -> None:
    """The conversation for the normal screen's scrollback: answers as Markdown, tools in a line."""
    from rich.markdown import Markdown
    from rich.text import Text

    for block in blocks:
        if isinstance(block, UserBlock):
            write(Text("\n› " + block.text, style="bold cyan"))
        elif isinstance(block, AnswerBlock) and block.stream.text.strip():
            write(Markdown(block.stream.text, hyperlinks=False))
        elif isinstance(block, ToolBlock):
            s = block.state
            write(Text(f"  {block.markdown()} ({s.duration:.1f} s)", style="dim"))
        elif isinstance(block, ReasoningBlock):
            continue
        elif block.markdown():
            write(Text("  " + block.markdown().strip("*`\n"), style="dim"))


def create(make_runtime: Callable[[ev.Emit], Runtime], workspace: Path, *, data_dir: Path | None = None,
           mouse: bool = False, input: Any = None, output: Any = None) -> AgentApp:
    """A new app on the runtime `make_runtime(emit)` opens: the session's first events (its history,
    the notices of opening it) wait in the pump until the app draws them."""
    view = View(Transcript(), on_approval=lambda request: None)
    pump = EventPump(view.apply, lambda: None)
    runtime = make_runtime(pump)
    app = AgentApp(runtime, pump, view, workspace, data_dir=data_dir, mouse=mouse, input=input, output=output)
    pump.sink, pump.wake, pump.on_error = app.apply, app.app.invalidate, app.bug
    return app
