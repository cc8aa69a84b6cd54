"""A model that writes a file it never saw (a weak model's habit: it guesses the content and replaces
the file whole) is refused once and shown the file; what it read, wrote or edited earlier in the
session, or in the session it resumed, or what the instructions showed it (a small workspace is
shown whole), goes through at once. Most workspaces here carry a file too big for that."""

from __future__ import annotations

from pathlib import Path

from core.agent.overview import MAX_CHARS
from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

ORIGINAL = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


def _outputs(server: ScriptedServer) -> list[str]:
    return [item["output"] for item in server.requests[-1]["input"] if item.get("type") == "function_call_output"]


def _too_big_to_show(ws: Path) -> None:
    (ws / "data.txt").write_text("x" * MAX_CHARS, encoding="utf-8")


def test_a_blind_overwrite_is_refused_once_and_shows_the_file(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    _too_big_to_show(tmp_path / "ws")
    (tmp_path / "ws" / "calc.py").write_text(ORIGINAL, encoding="utf-8")
    guess = {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}
    script = [Reply(call_events([("write_file", guess)])), Reply(call_events([("write_file", guess)])),
              Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "fix add"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    refused, written = _outputs(server)
    assert "calc.py exists and was not read in this session" in refused
    assert "     5\tdef sub(a, b):" in refused  # the part the guess would have lost, shown
    assert written.startswith("overwrote calc.py")
    assert (tmp_path / "ws" / "calc.py").read_text(encoding="utf-8") == guess["content"]


def test_a_file_read_edited_or_written_before_is_written_at_once_and_resuming_remembers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _too_big_to_show(ws)
    for name in ("read.py", "edited.py", "其他.py"):
        (ws / name).write_text(ORIGINAL, encoding="utf-8")
    first = [Reply(call_events([("read_file", {"path": "read.py"}),
                                ("edit_file", {"path": "edited.py", "old_text": "return a - b\n\n\n",
                                               "new_text": "return a + b\n\n\n"}),
                                ("write_file", {"path": "new.py", "content": "x = 1\n"})])),
             Reply(call_events([(("write_file", {"path": p, "content": "y = 2\n"})) for p in
                                ("read.py", "edited.py", "new.py")])),
             Reply(text_events("done"))]
    with ScriptedServer(first) as server:
        assert run_agent(["--one", "go"], server.url, tmp_path).returncode == 0
    assert [o.split(":")[0] for o in _outputs(server)[3:]] == ["overwrote read.py (was 6 lines)",
                                                               "overwrote edited.py (was 6 lines)",
                                                               "overwrote new.py (was 1 lines)"]
    later = [Reply(call_events([("write_file", {"path": "read.py", "content": "z = 3\n"}),
                                ("write_file", {"path": "其他.py", "content": "z = 3\n"})])),
             Reply(text_events("done"))]
    with ScriptedServer(later) as server:
        assert run_agent(["--one", "again", "--resume"], server.url, tmp_path).returncode == 0
    resumed, unseen = _outputs(server)[-2:]
    assert resumed.startswith("overwrote read.py") and "其他.py exists and was not read" in unseen
    assert (ws / "其他.py").read_text(encoding="utf-8") == ORIGINAL


def test_a_file_the_instructions_showed_is_written_at_once(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "calc.py").write_text(ORIGINAL, encoding="utf-8")
    whole = {"path": "calc.py", "content": ORIGINAL.replace("return a - b", "return a + b", 1)}
    with ScriptedServer([Reply(call_events([("write_file", whole)])), Reply(text_events("done"))]) as server:
        assert run_agent(["--one", "fix add"], server.url, tmp_path).returncode == 0
    assert "--- calc.py ---\n" + ORIGINAL.rstrip("\n") in server.requests[0]["instructions"]
    assert _outputs(server)[0].startswith("overwrote calc.py")
    assert (tmp_path / "ws" / "calc.py").read_text(encoding="utf-8") == whole["content"]
