"""On a Chinese Windows (console code page 936): `--one` speaks Chinese, chosen by the locale, with
its tool lines and refusal readable on the console's code page, and the Windows API that names the
user's display language answers. Runs under wine (`python3 tests/windows.py
tests/e2e/test_windows_chinese_interface.py`), with the console set to code page 936."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.i18n.choice import choose, windows_ui_language
from tests.support.agent_process import run_agent
from tests.support.chinese_ui import CHINESE_LOCALE, CP936
from tests.support.sse_server import Reply, ScriptedServer, call_events, text_events

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="Windows' console and API (runs under wine: "
                                                                "tests/windows.py)")


def test_windows_names_the_user_s_display_language() -> None:
    langid = windows_ui_language()
    assert isinstance(langid, int) and langid > 0
    assert choose(None, {}, windows_ui_language) == ("zh" if langid & 0x3FF == 0x04 else "en")


def test_one_shot_in_chinese_on_code_page_936(tmp_path: Path) -> None:
    script = [Reply(call_events([("run_shell", {"command": "del 笔记.txt"})])), Reply(text_events("好的，没有删。"))]
    with ScriptedServer(script) as server:
        done = run_agent(["--one", "删掉笔记", "--mode", "ask"], server.url, tmp_path, env=CHINESE_LOCALE,
                         launcher=("-c", CP936), creationflags=subprocess.CREATE_NO_WINDOW)
    err = done.stderr.decode("utf-8")
    assert done.returncode == 0, err
    assert done.stdout.decode("utf-8") == "好的，没有删。\n"
    assert "→ run_shell del 笔记.txt" in err and "✗ 已拒绝" in err and "已拒绝：" in err and "\ufffd" not in err, err
    assert "Simplified Chinese" in server.requests[0]["instructions"]
