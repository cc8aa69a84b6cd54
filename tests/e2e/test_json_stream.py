"""Every line of real `--one --json` runs, against the scripted server, validates against the
checked-in schema of the stream and reads as a version-1 reader expects, no internal event is
published, and the runs show every kind of event a task meets."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.agent_process import native, run_agent
from tests.support.event_schema import as_v1_reader_sees, event_validator, v1_validator
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events


def test_every_line_of_real_one_shot_runs_validates(tmp_path: Path) -> None:
    script = [Reply(status=503, body=b"busy"),
              Reply(call_events([("run_shell", {"command": "rm -rf ~"}), ("read_file", {"path": "说明.md"})])),
              Reply(call_events([("write_file", {"path": "a.txt", "content": "你好\n"}),
                                 ("run_shell", {"command": native("cat a.txt", "type a.txt", "Get-Content a.txt")})])),
              Reply(text_events("完成 done", reasoning="想一想"))]
    lines: list[str] = []
    with ScriptedServer(script) as server:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "说明.md").write_text("内容\n", encoding="utf-8")
        done = run_agent(["--one", "整理", "--json", "--cwd", str(tmp_path / "ws")], server.url, tmp_path)
        lines += done.stdout.decode("utf-8").splitlines()
    with ScriptedServer([Reply(status=400, body=b'{"error":{"message":"bad request"}}')]) as server:
        lines += run_agent(["--one", "x", "--json"], server.url, tmp_path).stdout.decode("utf-8").splitlines()
    validator, v1 = event_validator(), v1_validator()
    kinds = set()
    for line in lines:
        data = json.loads(line)
        errors = [e.message for e in validator.iter_errors(data)]
        assert not errors, (line, errors)
        seen = as_v1_reader_sees(data)
        assert seen is not None and not [e.message for e in v1.iter_errors(seen)], line
        kinds.add(data["type"])
    assert {"session", "notice", "tool_start", "approval_done", "tool", "checkpoint", "text", "done",
            "usage", "error"} <= kinds
    assert not kinds & {"request_sent", "first_byte", "job_started", "job_ended"}
    ran = [e for e in map(json.loads, lines) if e["type"] == "tool" and e["name"] == "run_shell"]
    assert [(e["status"], e["pruned_from"] is None) for e in ran] == [("refused", True), ("ok", False)], ran
