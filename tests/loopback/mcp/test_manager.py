"""The server manager against real servers written with the SDK: stdio and HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.mcp.config import ServerConfig, parse_entry
from core.mcp.manager import FAILED, READY, RESTARTING, McpManager, McpUnavailable
from tests.support.mcp_servers import DEMO, HANG, http_server
from tests.support.processes import alive, kill_hard


def _config(name: str, entry: dict, tmp_path: Path) -> ServerConfig:
    config = parse_entry(name, entry, "test", False, os.environ, tmp_path)
    assert config is not None
    return config


def _stdio(name: str, tmp_path: Path, **extra: object) -> ServerConfig:
    return _config(name, {"command": sys.executable, "args": [str(DEMO)],
                          "env": {"DEMO_PID_FILE": str(tmp_path / f"{name}.pid")}, **extra}, tmp_path)


def _wait_for(manager: McpManager, name: str, state: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = next(v for v in manager.views() if v.name == name)
        if view.state == state:
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} is {view.state} ({view.reason}), not {state}")


def test_stdio_and_http_servers_list_tools_and_answer_in_chinese(tmp_path: Path) -> None:
    with http_server() as url:
        manager = McpManager([_stdio("local", tmp_path), _config("remote", {"type": "http", "url": url}, tmp_path)],
                             tmp_path / "logs")
        try:
            manager.start(["local", "remote"])
            manager.wait_started()
            views = {v.name: v for v in manager.views()}
            assert {n: v.state for n, v in views.items()} == {"local": READY, "remote": READY}
            for view in views.values():
                tools = {t.name: t for t in view.tools}
                assert set(tools) == {"lookup", "delete_note"}
                assert tools["lookup"].read_only and not tools["delete_note"].read_only
                assert tools["lookup"].schema["properties"]["word"]["type"] == "string"
                result = manager.call(view.name, "lookup", {"word": "猫"}, Cancel())
                assert result.content[0].text == "词典：猫 的意思是「你好，世界」"
        finally:
            manager.close()
    assert (tmp_path / "logs" / "local.log").exists()  # stderr went to the session folder


def test_missing_binary_and_hanging_server_fail_in_time_and_the_others_go_on(tmp_path: Path) -> None:
    manager = McpManager([_config("missing", {"command": "no-such-mcp-server-binary"}, tmp_path),
                          _config("hangs", {"command": HANG[0], "args": HANG[1:], "startupTimeout": 2}, tmp_path),
                          _config("crashes", {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]},
                                  tmp_path),
                          _stdio("good", tmp_path)], tmp_path / "logs")
    start = time.monotonic()
    try:
        manager.start(["missing", "hangs", "crashes", "good"])
        manager.wait_started()
        views = {v.name: v for v in manager.views()}
        assert time.monotonic() - start < 20
        assert views["missing"].state == FAILED and "no such program" in views["missing"].reason
        assert views["hangs"].state == FAILED and views["hangs"].reason == "did not start within 2 s"
        assert views["crashes"].state == FAILED and views["crashes"].reason
        assert views["good"].state == READY and len(views["good"].tools) == 2
        assert {t.server for t in manager.offered_tools()} == {"good"}
        with pytest.raises(McpUnavailable, match="not available: cannot run"):
            manager.call("missing", "lookup", {}, Cancel())
    finally:
        closing = time.monotonic()
        manager.close()
    assert time.monotonic() - closing < 10
    pid = int((tmp_path / "good.pid").read_text().split()[0])
    _assert_gone(pid)


def test_a_server_killed_mid_session_comes_back_once(tmp_path: Path) -> None:
    manager = McpManager([_stdio("demo", tmp_path)], tmp_path / "logs", health_interval=0.3)
    try:
        manager.start(["demo"])
        manager.wait_started()
        assert manager.call("demo", "lookup", {"word": "一"}, Cancel()).content[0].text.startswith("词典")
        first = int((tmp_path / "demo.pid").read_text().split()[0])
        kill_hard(first)
        _wait_for(manager, "demo", RESTARTING, 10)
        with pytest.raises(McpUnavailable, match="stopped unexpectedly and is being restarted"):
            manager.call("demo", "lookup", {"word": "二"}, Cancel())
        assert manager.offered_tools()  # still offered while it comes back
        _wait_for(manager, "demo", READY)
        assert manager.call("demo", "lookup", {"word": "三"}, Cancel()).content[0].text.startswith("词典")
        second = int((tmp_path / "demo.pid").read_text().split()[1])
        assert second != first
        kill_hard(second)  # twice: it stays down, and says why
        _wait_for(manager, "demo", FAILED)
        assert "again" in manager.views()[0].reason and not manager.offered_tools()
        assert "ready with 2 tools" in manager.restart("demo")  # /mcp restart brings it back
    finally:
        manager.close()


def test_an_http_server_that_goes_away_fails_with_a_clear_reason_and_comes_back_on_restart(tmp_path: Path) -> None:
    with http_server() as url:
        manager = McpManager([_config("remote", {"type": "http", "url": url, "startupTimeout": 5}, tmp_path)],
                             health_interval=0.3)
        manager.start(["remote"])
        manager.wait_started()
        assert manager.call("remote", "lookup", {"word": "网"}, Cancel()).content[0].text.startswith("词典")
    try:  # the server is gone: the ping notices, the one restart cannot connect
        _wait_for(manager, "remote", FAILED, 20)
        with pytest.raises(McpUnavailable, match="remote is not available"):
            manager.call("remote", "lookup", {"word": "网"}, Cancel())
        with http_server(int(url.split(":")[2].split("/")[0])):
            assert "ready with 2 tools" in manager.restart("remote")
            assert manager.call("remote", "lookup", {"word": "回"}, Cancel()).content[0].text.startswith("词典")
    finally:
        manager.close()


def _assert_gone(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"server process {pid} outlived the session")
