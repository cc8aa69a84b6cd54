"""On a Chinese Windows (console code page 936): `--one` with a piped Chinese prompt, through the
real file tools and `run_shell`, against the loopback server. Correct text in and out, the file
written with the expected bytes, and a command's GBK output read as Chinese. Runs under wine
(`python3 tests/windows.py tests/e2e/test_windows_chinese.py`): the agent gets a console of its own
set to code page 936, as a Chinese system's console is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agent_process import run_agent
from tests.support.chinese_ui import CP936
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

PROMPT = "请写一个笔记文件，然后运行构建脚本 🙂"
NOTE = "你好，世界\n第二行 ✓\n"
ANSWER = "完成：笔记已写入，构建成功。"
# A native tool writing the console code page, then a line of UTF-8 (as a Python child does).
BUILD = ('import sys\nsys.stdout.buffer.write("编译成功：3 个文件\\r\\n".encode("gbk"))\n'
         'sys.stdout.buffer.write("UTF-8 行 ✓\\n".encode())\n')


@pytest.mark.skipif(sys.platform != "win32", reason="console code pages are Windows' (runs under wine: tests/windows.py)")
def test_piped_chinese_through_the_file_tools_and_a_gbk_command(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "build.py").write_text(BUILD, encoding="utf-8")
    script = [Reply(call_events([("write_file", {"path": "笔记.txt", "content": NOTE})])),
              Reply(call_events([("run_shell", {"command": f'"{Path(sys.executable).as_posix()}" build.py'})])),
              Reply(call_events([("read_file", {"path": "笔记.txt"})])),
              Reply(text_events(ANSWER))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "--yes"], server.url, tmp_path, stdin=PROMPT.encode("utf-8"), launcher=("-c", CP936),
                         creationflags=subprocess.CREATE_NO_WINDOW)
    err = done.stderr.decode("utf-8")
    assert done.returncode == 0, err
    assert done.stdout.decode("utf-8") == ANSWER + "\n"
    assert server.requests[0]["input"][0]["content"] == PROMPT
    assert (workspace / "笔记.txt").read_bytes() == NOTE.encode("utf-8")
    built = server.requests[2]["input"][-1]["output"]
    assert "编译成功：3 个文件" in built and "UTF-8 行 ✓" in built and "\ufffd" not in built, built
    assert "你好，世界" in server.requests[3]["input"][-1]["output"]
    assert "run_shell" in err and "笔记.txt" in err and "\ufffd" not in err, err
