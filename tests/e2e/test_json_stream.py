"""Every line of real `--one --json` runs, against the scripted server, validates against the
checked-in schema of the stream, and the runs show every kind of event a task meets."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.agent_process import run_agent
from tests.support.event_schema import event_validator
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def test_every_line_of_real_one_shot_runs_validates(tmp_path: Path) -> None:
    script = [Reply(status=503, body=b"busy"),
              Reply(call_events([("run_shell", {"command": "rm -rf ~"}), ("read_file", {"path": "说明.md"})])),
              Reply(call_events([("write_file", {"path": "a.txt", "content": "你好\n"})])),
              Reply(text_events("完成 done", reasoning="想一想"))]
    lines: list[str] = []
    with ScriptedServer(script) as server:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "说明.md").write_text("内容\n", encoding="utf-8")
        done = run_agent(["--one", "整理", "--json", "--cwd", str(tmp_path / "ws")], server.url, tmp_path)
        lines += done.stdout.decode("utf-8").splitlines()
    with ScriptedServer([Reply(status=400, body=b'{"error":{"message":"bad request"}}')]) as server:
        lines += run_agent(["--one", "x", "--json"], server.url, tmp_path).stdout.decode("utf-8").splitlines()
    validator = event_validator()
    kinds = set()
    for line in lines:
        data = json.loads(line)
        errors = [e.message for e in validator.iter_errors(data)]
        assert not errors, (line, errors)
        kinds.add(data["type"])
    assert {"session", "notice", "tool_start", "approval_done", "tool", "checkpoint", "text", "done",
            "usage", "error", "job_started", "job_ended"} <= kinds
