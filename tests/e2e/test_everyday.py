"""Small things a daily user trips over, seen through the real agent (`agent.py --one` as a
subprocess) against a scripted model on 127.0.0.1: settings, unreachable servers, file tools."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from tests.conftest import require_symlinks
from tests.support.agent_process import run_agent
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def test_a_small_window_alone_works_and_derives_the_output_limit(tmp_path: Path) -> None:
    with ScriptedServer([Reply(text_events("hello from a 16k model"))]) as server:
        done = run_agent(["--one", "hi"], server.url, tmp_path, env={"DEEPSEEK_CONTEXT_WINDOW": "16000"})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == "hello from a 16k model\n"
    assert server.requests[0]["max_output_tokens"] == 4000  # a quarter of the window


def test_settings_that_fight_are_named_with_where_they_came_from(tmp_path: Path) -> None:
    done = run_agent(["--one", "hi"], "http://127.0.0.1:9", tmp_path,
                     env={"DEEPSEEK_CONTEXT_WINDOW": "16000", "DEEPSEEK_MAX_OUTPUT_TOKENS": "32768"})
    err = done.stderr.decode()
    assert done.returncode == 2
    assert ("DEEPSEEK_MAX_OUTPUT_TOKENS=32,768 (from the environment) must be smaller than "
            "DEEPSEEK_CONTEXT_WINDOW=16,000 (from the environment)") in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_nothing_listening_is_said_at_once_with_the_url(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a loopback port where nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    done = run_agent(["--one", "hi"], url, tmp_path, env={"AGENT_RETRY_BASE_DELAY": "5"})
    err = done.stderr.decode()
    assert done.returncode == 1
    assert f"Nothing is listening at DEEPSEEK_BASE_URL={url} (from the environment)" in err
    assert "retrying" not in err  # with a 5 s base delay, a retry would also show in the run time


def test_file_tools_show_links_by_name_and_stay_inside_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "ws-private").mkdir()  # a sibling whose name is close to the workspace's
    require_symlinks(tmp_path)
    (workspace / "real.py").write_text("print(1)\n")
    os.symlink("real.py", workspace / "link.py")
    script = [Reply(call_events([("list_files", {}), ("edit_file", {"path": ".", "old_text": "a", "new_text": "b"})])),
              Reply(text_events("done"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "look around"], server.url, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    listing, edit = [i["output"] for i in server.requests[1]["input"] if i.get("type") == "function_call_output"]
    assert listing.splitlines() == ["link.py -> real.py", "real.py"]
    assert "'.' is a directory" in edit and "ws-private" not in edit and str(tmp_path) not in edit
