"""MCP configuration files and tool names: what is read, expanded, refused and how tools are named."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.mcp.config import load_servers, parse_entry
from core.mcp.naming import tool_name


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def test_files_are_read_in_order_and_the_workspace_cannot_replace_a_user_server(tmp_path: Path) -> None:
    env_file, ws = tmp_path / "app" / ".env", tmp_path / "ws"
    _write(env_file.parent / "mcp.json", {"mcpServers": {"db": {"command": "db-server"}}})
    _write(tmp_path / "named.json", {"mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}})
    _write(ws / ".mcp.json", {"mcpServers": {"db": {"command": "evil"}, "repo": {"command": "repo-tool"}}})
    loaded = load_servers(env_file, ws, str(tmp_path / "named.json"), environ={})
    assert [(s.name, s.transport, s.from_workspace) for s in loaded.servers] == [
        ("db", "stdio", False), ("web", "http", False), ("repo", "stdio", True)]
    assert loaded.servers[0].command == "db-server"
    assert loaded.notices == [f"mcp: {ws / '.mcp.json'} also defines 'db'; the user's entry is used"]


@pytest.mark.parametrize("text, expected", [
    ("{not json", "is not valid JSON"),
    ('{"servers": {}}', 'has no "mcpServers" object'),
    ("[1, 2]", 'has no "mcpServers" object'),
])
def test_a_broken_file_is_one_notice(tmp_path: Path, text: str, expected: str) -> None:
    _write(tmp_path / "ws" / ".mcp.json", text)
    loaded = load_servers(tmp_path / ".env", tmp_path / "ws", environ={})
    assert loaded.servers == [] and len(loaded.notices) == 1 and expected in loaded.notices[0]


def test_a_named_file_that_is_missing_says_so(tmp_path: Path) -> None:
    loaded = load_servers(tmp_path / ".env", tmp_path, str(tmp_path / "nope.json"), environ={})
    assert loaded.notices == [f"mcp: DEEPSEEK_MCP_CONFIG names {tmp_path / 'nope.json'}, which is not a file"]


def test_variables_expand_in_env_args_headers_and_url(tmp_path: Path) -> None:
    environ = {"TOKEN": "s3cret", "HOST": "127.0.0.1"}
    stdio = parse_entry("a", {"command": "srv", "args": ["--token=${TOKEN}", "${MISSING:-默认}"],
                              "env": {"API_TOKEN": "${TOKEN}"}}, "f", False, environ, tmp_path)
    http = parse_entry("b", {"type": "http", "url": "http://${HOST}:8/mcp",
                             "headers": {"Authorization": "Bearer ${TOKEN}"}}, "f", False, environ, tmp_path)
    assert stdio is not None and http is not None
    assert stdio.args == ("--token=s3cret", "默认") and stdio.env == {"API_TOKEN": "s3cret"}
    assert http.url == "http://127.0.0.1:8/mcp" and http.headers == {"Authorization": "Bearer s3cret"}


@pytest.mark.parametrize("entry, message", [
    ({"command": "srv", "env": {"K": "${UNSET_VAR}"}}, "${UNSET_VAR} is not set"),
    ({"args": ["x"]}, '"command" must be a non-empty string'),
    ({"command": "srv", "args": "x"}, '"args" must be a list of strings'),
    ({"command": "srv", "env": {"K": 1}}, '"env" must be an object of strings'),
    ({"type": "http", "url": "ftp://x"}, "url must start with http"),
    ({"type": "sse", "url": "http://x"}, "old SSE transport is not supported"),
    ({"type": "websocket", "command": "x"}, "unknown type 'websocket'"),
    ({"command": "srv", "startupTimeout": 0}, '"startupTimeout" must be a positive number'),
    ({"command": "srv", "autoApprove": "all"}, '"autoApprove" must be a list of strings'),
    ("srv", "an entry must be a JSON object"),
])
def test_a_bad_entry_is_refused_with_what_is_wrong(tmp_path: Path, entry: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_entry("x", entry, "f", False, {}, tmp_path)
    assert message in str(caught.value)


def test_a_disabled_entry_is_skipped_and_the_fingerprint_follows_the_command(tmp_path: Path) -> None:
    assert parse_entry("x", {"command": "srv", "disabled": True}, "f", True, {}, tmp_path) is None
    one = parse_entry("x", {"command": "srv", "args": ["a"]}, "f", True, {}, tmp_path)
    two = parse_entry("x", {"command": "srv", "args": ["b"]}, "f", True, {}, tmp_path)
    assert one is not None and two is not None and one.fingerprint() != two.fingerprint()


@pytest.mark.parametrize("server, tool, expected", [
    ("github", "create_issue", "github__create_issue"),
    ("my server", "get.data", "my_server__get_data"),
    ("数据库", "查询", "_______"),
    ("s", "x" * 100, None),
])
def test_tool_names_follow_the_api_rules(server: str, tool: str, expected: str | None) -> None:
    name = tool_name(server, tool, set())
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name)
    if expected is not None:
        assert name == expected


def test_tool_names_are_unique() -> None:
    taken = {"read_file"}
    names = [tool_name("a", "b.c", taken), tool_name("a", "b_c", taken), tool_name("a", "b c", taken),
             tool_name("s", "x" * 100, taken), tool_name("s", "x" * 100 + "y", taken)]
    assert len(set(names)) == 5 and names[:3] == ["a__b_c", "a__b_c_2", "a__b_c_3"]
    assert all(len(n) <= 64 for n in names)
