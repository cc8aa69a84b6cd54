"""The TUI's parts without a screen: incremental Markdown, the transcript's viewport, the event
pump's batching, the status bar, paste placeholders, sanitising and ASCII chrome."""

from __future__ import annotations

import asyncio
import re
import threading

from rich.markdown import Markdown

from core import protocol as ev
from ui.tui import markdown as md
from ui.tui.blocks import GLYPHS, AnswerBlock, CommandBlock, ReasoningBlock, ToolBlock, ToolState, use_ascii
from ui.tui.inputbox import Pastes
from ui.tui.render import RENDERER, plain, safe
from ui.tui.state import EventPump, Status, View
from ui.tui.status import status_fragments
from ui.tui.transcript import Transcript

DOC = ("# Title\n\nIntro with **bold** and `code`.\n\n1. one\n2. two\n\n```python\nx = 1\n\ny = 2\n```\n\n"
       "| a | b |\n|---|---|\n| 1 | 2 |\n\nSetext\n======\n\n> quoted\n> text\n\nlast paragraph\n")


def _words(lines: list) -> list[str]:
    return re.findall(r"\w+", " ".join(plain(line) for line in lines))


def test_streaming_shows_the_same_text_as_one_render_whatever_the_delta_size() -> None:
    whole = _words(RENDERER.lines(Markdown(DOC), 70))
    for size in (1, 3, 17, 200):
        stream = md.MarkdownStream()
        for i in range(0, len(DOC), size):
            stream.feed(DOC[i:i + size])
        stream.finish()
        assert stream.text == DOC
        assert _words(stream.lines(70)) == whole
        assert size > 50 or len(stream.chunks) >= 5  # finished blocks were cached, not one big tail


def test_boundaries_follow_the_parser() -> None:
    assert md.split_finished("Intro.\n\n```py\nx = 1\n") == ("Intro.\n\n", "```py\nx = 1\n")
    assert md.split_finished("```py\na\n\nb\n") == ("", "```py\na\n\nb\n")  # a fence with a blank line stays open
    assert md.split_finished("- a\n- b\n") == ("", "- a\n- b\n")  # list items still arriving


def test_the_open_tail_is_re_rendered_at_most_every_interval(monkeypatch) -> None:
    calls = []
    real = md.render_markdown
    monkeypatch.setattr(md, "render_markdown", lambda source, width: calls.append(source) or real(source, width))
    monkeypatch.setattr(md, "TAIL_INTERVAL", 3600.0)
    stream = md.MarkdownStream()
    for word in ["a", "paragraph", "that", "keeps", "growing", "word", "by", "word"]:
        stream.feed(word + " ")
        stream.lines(60)
    assert len(calls) == 1  # the first frame; later deltas wait for the interval
    stream.finish()
    assert "growing word by word" in plain(stream.lines(60)[0]) and len(calls) == 2


def test_the_transcript_fetches_only_the_visible_lines() -> None:
    transcript = Transcript()
    for i in range(2000):
        transcript.add(CommandBlock("\n".join(f"block {i} line {j}" for j in range(10))))
    content = transcript.create_content(80, 24)
    assert transcript.total == 20_000 and content.line_count == 24
    assert plain(content.get_line(23)).strip() == "block 1999 line 9"  # following the end
    transcript.page(-1)
    content = transcript.create_content(80, 24)
    assert not transcript.follow and "more below" in plain(content.get_line(23))
    transcript.add(CommandBlock("new"))
    content = transcript.create_content(80, 24)
    assert "1 new lines" in plain(content.get_line(23))  # scrolled up: the view stays, a hint says so
    transcript.end()
    content = transcript.create_content(80, 24)
    assert plain(content.get_line(23)).strip() == "new"


def test_the_pump_batches_a_burst_into_few_redraws() -> None:
    applied, wakes = [], []
    pump = EventPump(lambda e: applied.append(e.steps), lambda: wakes.append(1))

    async def main() -> None:
        pump.loop = asyncio.get_running_loop()
        sender = threading.Thread(target=lambda: [pump(ev.Done(status="ok", text="", steps=n)) for n in range(5000)])
        sender.start()
        while sender.is_alive() or len(applied) < 5000:
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert applied == list(range(5000)) and len(wakes) < 1000


def test_events_before_the_loop_runs_are_kept() -> None:
    applied = []
    pump = EventPump(lambda e: applied.append(e.type), lambda: None)
    pump(ev.Aborted(reason="x"))
    pump(ev.Notice(message="y"))
    pump.drain()
    assert applied == ["aborted", "notice"]


def test_status_bar_fits_narrow_terminals_and_keeps_the_state() -> None:
    status = Status(model="deepseek-v4-flash", state="idle", context=12_000, budget=100_000, input_tokens=41_000,
                    cached_tokens=30_000, output_tokens=2_000, cost=0.1234, pruned_saved=120_000)
    wide = plain(status_fragments(status, 160))
    assert "ctx 12% of 100k" in wide and "in 41k (30k cached) / out 2.0k" in wide and "$0.1234" in wide
    assert "pruned −120k chars" in wide
    at_80 = plain(status_fragments(status, 80))  # short forms keep every field
    assert len(at_80) == 80 and "ctx 12%" in at_80 and "in 41k out 2.0k" in at_80 and "$0.1234" in at_80
    narrow = plain(status_fragments(status, 40))
    assert len(narrow) == 40 and "idle" in narrow


def test_paste_placeholders_expand_to_every_byte() -> None:
    pastes = Pastes()
    big = "x" * 3000 + "\n你好"
    tag = pastes.placeholder(big)
    assert tag is not None and tag.startswith("[pasted 3,003 chars, 2 lines")
    assert pastes.placeholder("short") is None
    assert pastes.expand(f"look: {tag} please") == f"look: {big} please"


def test_model_and_command_text_cannot_drive_the_terminal() -> None:
    answer = AnswerBlock(text="fine\x1b[2J\x1b]0;title\x07 text")
    shown = " ".join(plain(line) for line in answer.lines(60))
    assert "\x1b" not in shown and "\\x1b[2J" in shown
    tool = ToolBlock(ToolState("c1", "run_shell", {"command": "make"}))
    tool.add_output("\x1b[31mred\x1b[0m line\rredrawn\n")
    assert "\x1b" not in safe("\x1b[31mred", output=True)
    assert all("\x1b" not in text for line in tool.lines(60) for _, text in line)


def test_ascii_chrome_for_cjk_consoles() -> None:
    try:
        use_ascii(True)
        assert GLYPHS["bullet"] == "*" and GLYPHS["gutter"] == "|"
        table = "".join(plain(line) for line in md.render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n", 40))
        assert table.strip() and all(ord(c) < 128 for c in table)
    finally:
        use_ascii(False)
    assert GLYPHS["bullet"] == "●"


def test_a_resumed_session_is_drawn_from_the_session_event() -> None:
    view = View(Transcript(), on_approval=lambda request: None)
    view.apply(ev.SessionOpened(model="m", budget_tokens=1000, resumed=True, id="s1", workspace="/w", window=8000,
                                max_steps=10, history=[
        {"kind": "user", "text": "hi"}, {"kind": "assistant", "text": "**hello**"},
        {"kind": "tool", "call_id": "c", "name": "read_file", "arguments": {"path": "a.py"}, "result": "x",
         "status": "ok"}]))
    view.transcript.create_content(60, 40)
    text = "\n".join(view.transcript.visible_text())
    assert "› hi" in text and "hello" in text and "**" not in text and "read_file" in text
    assert view.answers == ["**hello**"] and view.status.model == "m"


def test_a_resize_renders_only_the_blocks_near_the_view() -> None:
    rendered: list[int] = []

    class Counted(CommandBlock):
        def render(self, width: int) -> list:
            rendered.append(width)
            return super().render(width)

    transcript = Transcript()
    for i in range(500):
        transcript.add(Counted(f"block {i}\n" + "word " * 30))
    transcript.create_content(100, 20)
    assert rendered.count(99) == 500  # one column is kept free
    transcript.create_content(60, 20)
    assert 0 < rendered.count(59) < 40  # the rest keep an estimated height until scrolled to
    lines = [plain(transcript.line(i)) for i in range(transcript.total - 20, transcript.total)]
    assert any("block 499" in line for line in lines)


def test_without_a_windows_console_the_tui_says_winpty_and_steps_aside(monkeypatch) -> None:
    import tui

    monkeypatch.setattr(tui.sys, "platform", "win32")
    monkeypatch.setattr(tui, "_windows_console", lambda: False)
    reason = tui.unavailable_reason()
    assert reason is not None and "winpty" in reason and "mintty" in reason
    monkeypatch.setattr(tui, "_windows_console", lambda: True)
    monkeypatch.setattr(tui, "_under_wine", lambda: False)
    assert tui.unavailable_reason() is None
    monkeypatch.setattr(tui, "_under_wine", lambda: True)
    assert "wine" in (tui.unavailable_reason() or "")


def test_an_mcp_tool_panel_names_its_server() -> None:
    view = View(Transcript(), on_approval=lambda request: None)
    view.apply(ev.ToolStarted(call_id="c1", name="dict__lookup", arguments={"word": "猫"}, server="dict"))
    view.apply(ev.ToolFinished(call_id="c1", name="dict__lookup", arguments={"word": "猫"}, result="词典", status="ok",
                               duration=0.1, server="dict"))
    view.transcript.create_content(80, 20)
    text = "\n".join(view.transcript.visible_text())
    assert "dict__lookup · MCP server dict" in text


def test_a_folded_thought_counts_its_words_in_english() -> None:
    def folded(text: str) -> str:
        return plain(ReasoningBlock("r", text, done=True).render(80)[0])

    assert folded("fine").endswith("· 1 word (Ctrl-O)")
    assert folded("two words").endswith("· 2 words (Ctrl-O)")
    assert folded("").endswith("· 0 words (Ctrl-O)")


def test_the_status_counts_what_pruning_saved_from_the_tool_event_s_figures() -> None:
    view = View(Transcript(), on_approval=lambda request: None)
    for n, (before, after) in enumerate([(90_000, 2_000), (500, 512), (None, None)]):
        view.apply(ev.ToolStarted(call_id=f"c{n}", name="run_shell", arguments={"command": "make"}))
        view.apply(ev.ToolFinished(call_id=f"c{n}", name="run_shell", arguments={"command": "make"},
                                   result="exit code 0\n[pruned 1 → 1 chars]\n", status="ok", duration=0.1,
                                   pruned_from=before, pruned_to=after))
    assert view.status.pruned_saved == 88_000  # the figures, never the text: a larger result adds nothing
