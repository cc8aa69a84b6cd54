"""What the plain front ends print: every line passes the one sanitiser, and a cut is marked.

Slash-command replies and the REPL's banner carry names the user did not write (a folder's name,
where a resumed session was started); they must reach the terminal defused like everything else."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

EVIL = "evil\x1b[2J\x1b]0;pwned\x07\x1b[8m"  # clears the screen, retitles the window, hides what follows


def test_a_long_command_in_the_tool_header_is_cut_with_a_mark(tmp_path: Path) -> None:
    command = "echo " + "a" * 300 + " tail-end"
    script = [Reply(call_events([("run_shell", {"command": command})])), Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "echo it"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    (header,) = [line for line in done.stderr.decode().splitlines() if line.startswith("→ run_shell")]
    assert header.endswith("…") and "tail-end" not in header and len(header) < 220, header


@pytest.mark.skipif(sys.platform == "win32", reason="an escape character in a folder name is POSIX-only")
def test_slash_command_replies_and_the_banner_are_defused(tmp_path: Path) -> None:
    """A session started in a folder whose name holds escape sequences, then resumed from the plain
    REPL in another folder: the banner and /resume's notice name that folder."""
    evil = tmp_path / EVIL
    evil.mkdir()
    script = [Reply(text_events("first")), Reply(text_events("second"))]
    with ScriptedServer(script) as server:
        first = run_agent(["--one", "hello", "--cwd", str(evil)], server.url, tmp_path)
        assert first.returncode == 0, first.stderr.decode()
        banner = run_agent(["--plain", "--cwd", str(evil)], server.url, tmp_path, stdin=b"/exit\n")
        resumed = run_agent(["--plain"], server.url, tmp_path, stdin=b"/resume\n/sessions\n/exit\n")
    for done in (banner, resumed):
        err = done.stderr.decode()
        assert done.returncode == 0, err
        assert "\x1b" not in err and "\x07" not in err, repr(err)
    assert "evil\\x1b[2J\\x1b]0;pwned\\x07" in banner.stderr.decode()
    err = resumed.stderr.decode()
    assert "Resumed session" in err and "this session was started in" in err and "evil\\x1b[2J" in err
