"""The full-screen app in-process (pipe input, the renderer's screen as text) against the loopback
server: streaming Markdown, tool panels, the approval modal, completion, history, pastes, keys,
resize and screen snapshots of the main views."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import SNAPSHOTS
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events
from tests.support.tui_harness import Harness

MARKDOWN = ("# Plan\n\nThis is **important** and `code`.\n\n- first item\n- second item\n\n"
            "```python\ndef f():\n    return 1\n```\n\n| name | value |\n|------|-------|\n| a    | 1     |\n")


def _snapshot(name: str, screen: str, workspace: Path | None = None) -> None:
    """Compare with tests/snapshots/NAME.txt (UPDATE_SNAPSHOTS=1 rewrites it); the workspace path
    and elapsed seconds are written as placeholders."""
    if workspace is not None:
        screen = re.sub(re.escape(str(workspace.resolve())) + " *", lambda m: "<ws>".ljust(len(m.group())), screen)
        # The approval dialog cuts a long workspace path from the left ("in …\\pytest-14\\ws").
        screen = re.sub(r"^( *│ in )….*?( *│)$", lambda m: m.group(1) + "<ws>".ljust(len(m.group()) - len(m.group(1)) - 1)
                        + "│", screen, flags=re.M)
    screen = re.sub(r"running (\d+) s", "running N s", screen)
    screen = re.sub(r"^(.* · /help for help · ).*$", r"\1<ws>", screen, flags=re.M)  # the welcome line
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(screen + "\n", encoding="utf-8")
    assert screen + "\n" == path.read_text(encoding="utf-8"), f"screen differs from {path}:\n{screen}"


def test_markdown_answer_renders_without_raw_markup_and_status_shows_usage(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events(MARKDOWN, reasoning="let me think", chunks=25))]) as server:
        def steps(h: Harness) -> None:
            h.type("explain")
            h.idle()
            screen = h.wait_for("second item")
            assert "**" not in screen and "# Plan" not in screen and "```" not in screen
            assert "important" in screen and "def f():" in screen and "thought" in screen
            assert "ctx 0%" in screen and "in 100 out 20" in screen and "$0.0000" in screen and "idle" in screen
            _snapshot("answer_80x24", screen)

        Harness(server.url, tmp_path).run(steps)
    assert server.requests[0]["input"][-1]["content"] == "explain"


def test_tool_panel_shows_output_and_expands(tmp_path: Path) -> None:
    command = f'"{Path(sys.executable).as_posix()}" -c "for i in range(1, 9): print(f\'line{{i}}\')"'
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("all done"))]
    with ScriptedServer(script) as server:
        def steps(h: Harness) -> None:
            h.type("count")
            h.idle()
            screen = h.wait_for("all done")
            assert "run_shell" in screen and "exit code 0" in screen and "ok" in screen
            assert "line8" in screen and "line1" not in screen and "(Ctrl-O)" in screen  # folded: the end shows
            h.keys("\x0f")  # Ctrl-O
            assert "line8" in h.wait_for("line1")

        Harness(server.url, tmp_path).run(steps)


def test_edit_shows_a_coloured_diff(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.py").write_text("x = 1\ny = 2\n")
    edit = {"path": "a.py", "old_text": "y = 2", "new_text": "y = 3"}
    with ScriptedServer([Reply(call_events([("edit_file", edit)])), Reply(text_events("edited"))]) as server:
        def steps(h: Harness) -> None:
            h.type("edit")
            h.idle()
            screen = h.wait_for("edited")
            assert "-y = 2" in screen and "+y = 3" in screen

        Harness(server.url, tmp_path).run(steps)


def test_approval_modal_runs_once_or_denies_with_a_reason(tmp_path: Path) -> None:
    risky = Reply(call_events([("run_shell", {"command": "git reset --hard"})]))
    script = [risky, Reply(text_events("first done")), Reply(call_events([("run_shell", {"command": "git clean -f"})])),
              Reply(text_events("second done"))]
    with ScriptedServer(script) as server:
        def steps(h: Harness) -> None:
            h.type("reset")
            screen = h.wait_for("Approval needed")
            assert "git reset --hard" in screen and "1  run once (y)" in screen and "4  deny, and tell" in screen
            _snapshot("approval_80x24", screen, h.workspace)
            h.keys("1")
            h.wait_for("first done")
            h.type("clean")
            h.wait_for("Approval needed")
            h.keys("4")
            h.wait_for("why (Enter sends)")
            h.type("keep my files")
            h.wait_for("second done")
            h.idle()

        Harness(server.url, tmp_path).run(steps)
    assert "refused" not in server.requests[1]["input"][-1]["output"]
    assert "keep my files" in server.requests[3]["input"][-1]["output"]


def test_approval_modal_keeps_the_risky_line_of_a_long_command_on_screen(tmp_path: Path) -> None:
    """Forty harmless lines around one `rm -rf ~`: the modal leads with the reason and opens the
    whole action's view at the rm, so the rm and the decisions are on a 24-row screen at once; the
    rest scrolls into view, every line of it."""
    command = "\n".join([f"echo step {n}" for n in range(20)] + ["rm -rf ~/projects"]
                        + [f"echo step {n}" for n in range(20, 40)])
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("denied, fine"))]
    with ScriptedServer(script) as server:
        def steps(h: Harness) -> None:
            h.type("go")
            screen = h.wait_for("Approval needed")
            assert "rm -rf ~/projects" in screen and "more rows above" in screen, screen
            assert "4  deny, and tell" in screen, screen
            assert screen.index("outside the workspace") < screen.index("rm -rf ~/projects"), screen
            seen = set(re.findall(r"echo step \d+", screen))
            for key, end in (("\x1b[6~", "echo step 39"), ("\x1b[5~", "echo step 0\n")):  # PgDn, then PgUp
                for _ in range(6):
                    h.keys(key)
                    time.sleep(0.05)
                    seen |= set(re.findall(r"echo step \d+", h.screen()))
                at_end = h.screen()
                assert end in at_end.replace(" ", "").replace("│", "\n").replace("echostep", "echo step "), at_end
            assert seen == {f"echo step {n}" for n in range(40)}, sorted(seen)
            h.keys("3")
            h.wait_for("denied, fine")
            h.idle()

        Harness(server.url, tmp_path).run(steps)


def test_approval_modal_cuts_a_deep_workspace_path_from_the_left(tmp_path: Path) -> None:
    """A workspace deep in the user's folders (Windows' temp folder is) stays on one row, its end shown."""
    deep = tmp_path / ("nested-folder-" * 4) / "and-deeper-still" / "the-project"
    deep.mkdir(parents=True)
    script = [Reply(call_events([("run_shell", {"command": "git reset --hard"})])), Reply(text_events("ok"))]
    with ScriptedServer(script) as server:
        def steps(h: Harness) -> None:
            h.type("go")
            rows = h.wait_for("Approval needed").splitlines()
            where = next(row for row in rows if " in …" in row)
            assert where.rstrip(" │").endswith("the-project" + os.sep + "ws"), rows
            assert "1  run once (y)" in rows[rows.index(where) + 1], rows
            h.keys("3")
            h.wait_for("ok")
            h.idle()

        Harness(server.url, deep).run(steps)


def test_slash_menu_lists_commands_with_descriptions(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("x"))]) as server:
        def steps(h: Harness) -> None:
            h.keys("/co")
            screen = h.wait_for("/compact")
            assert "/context" in screen and "/copy" in screen and "summarise older turns" in screen
            h.keys("\x15")  # Ctrl-U clears the line
            h.type("/context")
            assert "% of the budget" in h.wait_for("of the budget")

        Harness(server.url, tmp_path).run(steps)
    assert server.requests == []  # /context asks nothing of the model


def test_at_completes_workspace_paths(tmp_path: Path) -> None:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "parser.py").write_text("")
    with ScriptedServer([Reply(text_events("x"))]) as server:
        def steps(h: Harness) -> None:
            h.keys("look at @pars")
            assert "src/parser.py" in h.wait_for("src/parser.py")

        Harness(server.url, tmp_path).run(steps)


def test_history_is_persisted_and_walked_with_up(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("a1"))]) as server:
        def first(h: Harness) -> None:
            h.type("remember this line")
            h.idle()

        Harness(server.url, tmp_path).run(first)

        def walked(h: Harness) -> None:
            h.keys("\x1b[A")  # Up
            h.wait_until(lambda: h.app.input.text == "remember this line")

        def searched(h: Harness) -> None:
            h.keys("\x12remem")  # Ctrl-R
            h.wait_for("› remember this line")

        Harness(server.url, tmp_path).run(walked)
        Harness(server.url, tmp_path).run(searched)
    assert (tmp_path / "data" / "input-history").read_text().count("+remember this line\n") == 1


def test_large_paste_is_a_placeholder_and_sent_whole(tmp_path: Path) -> None:
    pasted = "\n".join(f"log line {i} 你好" for i in range(300))
    with ScriptedServer([Reply(text_events("got it"))]) as server:
        def steps(h: Harness) -> None:
            h.keys("\x1b[200~" + pasted + "\x1b[201~")
            h.wait_until(lambda: h.app.input.text.startswith("[pasted"))
            assert f"[pasted {len(pasted):,} chars, 300 lines" in h.screen()
            h.keys("\r")
            h.wait_for("got it")

        Harness(server.url, tmp_path).run(steps)
    assert server.requests[0]["input"][-1]["content"] == pasted


def test_esc_interrupts_a_slow_stream_quickly_and_the_next_prompt_works(tmp_path: Path) -> None:
    slow = Reply(text_events("tick " * 40, chunks=40), delay=0.5)
    with ScriptedServer([slow, Reply(text_events("next answer"))]) as server:
        def steps(h: Harness) -> None:
            assert h.app.app.ttimeoutlen <= 0.1 and h.app.app.timeoutlen <= 0.1
            h.type("go")
            h.wait_for("tick")
            start = time.monotonic()
            h.keys("\x1b")
            # `stopping` lasts only until the job ends, which can come within one poll. The stream
            # runs for 20 s: a turn no longer busy after a second was stopped by the key.
            def stopped() -> bool:
                return h.app.stopping or not h.app.view.status.busy

            while not stopped() and time.monotonic() - start < 5:
                time.sleep(0.005)
            latency = time.monotonic() - start
            assert stopped() and latency < 1.0, latency  # 1.5 s with default timeouts
            h.wait_for("interrupted")
            h.idle()
            h.type("again")
            h.wait_for("next answer")

        Harness(server.url, tmp_path).run(steps)


def test_ctrl_c_clears_then_twice_quits_and_ctrl_d_quits(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("x"))]) as server:
        def steps(h: Harness) -> None:
            h.keys("draft text")
            h.wait_until(lambda: h.app.input.text == "draft text")
            h.keys("\x03")
            h.wait_until(lambda: h.app.input.text == "")
            h.keys("\x03")
            h.wait_for("press Ctrl-C again")
            h.keys("\x03")
            h.wait_until(lambda: not h.app.app.is_running)

        Harness(server.url, tmp_path).run(steps)

        def ctrl_d(h: Harness) -> None:
            h.keys("\x04")
            h.wait_until(lambda: not h.app.app.is_running)

        Harness(server.url, tmp_path).run(ctrl_d)


def test_chinese_and_a_resize_down_to_60x15_keep_every_line(tmp_path: Path) -> None:
    answer = "你好！这是一个很长的中文回答，用来测试宽字符的对齐和换行是否正确。" * 3 + "\n\nEND"
    with ScriptedServer([Reply(text_events(answer))]) as server:
        def steps(h: Harness) -> None:
            h.type("中文")
            h.idle()
            h.wait_for("END")
            h.resize(15, 60)
            screen = h.wait_for("END")
            assert all(len(line) <= 60 for line in screen.splitlines())
            h.resize(40, 120)
            screen = h.wait_for("END")
            assert "› 中文" in screen and "你好！这是一个很长的中文回答" in screen

        Harness(server.url, tmp_path, rows=24, columns=80).run(steps)


def test_scrolling_up_stops_following_and_end_returns(tmp_path: Path) -> None:
    long = "\n\n".join(f"paragraph {i}" for i in range(60))
    with ScriptedServer([Reply(text_events(long, chunks=30))]) as server:
        def steps(h: Harness) -> None:
            h.type("long")
            h.idle()
            h.wait_for("paragraph 59")
            h.keys("\x1b[5~")  # PgUp
            screen = h.wait_for("more below")
            assert "paragraph 59" not in screen
            h.keys("\x1b[1;5F")  # Ctrl-End
            h.wait_for("paragraph 59")

        Harness(server.url, tmp_path).run(steps)


@pytest.mark.parametrize("command", ["/export", "/copy"])
def test_export_and_copy_write_the_conversation(tmp_path: Path, command: str) -> None:
    with ScriptedServer([Reply(text_events("the **answer**"))]) as server:
        def steps(h: Harness) -> None:
            h.type("q")
            h.idle()
            h.wait_for("answer")
            h.type(command)
            h.wait_for(".md")

        app = Harness(server.url, tmp_path).run(steps)
    written = sorted(Path(app.view.folder).glob("*.md"))
    assert written and "the **answer**" in written[0].read_text()


def test_an_event_that_cannot_be_drawn_is_logged_and_the_session_goes_on(tmp_path: Path, monkeypatch) -> None:
    from ui.tui.state import View

    def broken(self: View, item_id: str, kind: type) -> None:
        raise RuntimeError("cannot draw this reasoning")

    monkeypatch.setattr(View, "_stream", broken)
    with ScriptedServer([Reply(text_events("still answered", reasoning="hm"))]) as server:
        def steps(h: Harness) -> None:
            h.type("go")
            h.idle()
            screen = h.wait_for("still answered")
            assert "internal error; the session goes on" in screen and "Traceback" not in screen

        app = Harness(server.url, tmp_path).run(steps)
    logs = list(Path(app.view.folder).glob("crash-*.log"))
    assert logs and "cannot draw this reasoning" in logs[0].read_text()


def test_a_resumed_session_is_drawn_and_clear_starts_a_new_one(tmp_path: Path) -> None:
    script = [Reply(call_events([("list_files", {"path": "."})])), Reply(text_events("first **answer**"))]
    with ScriptedServer(script) as server:
        def first(h: Harness) -> None:
            h.type("earlier question")
            h.idle()
            h.wait_for("first answer")

        first_id = Harness(server.url, tmp_path).run(first).view.session_id

        def resumed(h: Harness) -> None:
            screen = h.wait_for("resumed session")
            assert "› earlier question" in screen and "list_files" in screen and "first answer" in screen
            assert "**" not in screen
            h.type("/clear")
            h.wait_for("New conversation")
            assert "earlier question" not in h.screen()

        app = Harness(server.url, tmp_path, resume=True).run(resumed)
    assert first_id and app.view.session_id not in ("", first_id)  # /clear switched to a fresh session


def test_slash_commands_go_as_typed_ops_and_their_answers_reach_the_status_bar(tmp_path: Path) -> None:
    with ScriptedServer([]) as server:
        def steps(h: Harness) -> None:
            status = h.app.view.status
            h.type("/mode yes")
            h.wait_until(lambda: status.mode == "yes")
            assert "Mode: yes (every question is answered yes)" in h.wait_for("from the next command on")
            h.keys("\x1b[Z")  # Shift-Tab: the next mode this machine can use, after yes the first
            h.wait_until(lambda: status.mode != "yes")
            h.type("/model deepseek-新")
            h.wait_until(lambda: status.model == "deepseek-新")
            h.type("/mode sometimes")  # a usage error: said at once, nothing sent
            assert "Unknown mode 'sometimes'" in h.wait_for("Unknown mode")
            h.type("/undo zwei")
            h.wait_for("/undo takes a number of turns")
            h.idle()

        app = Harness(server.url, tmp_path).run(steps)
    assert server.requests == [] and app.pending == 0
