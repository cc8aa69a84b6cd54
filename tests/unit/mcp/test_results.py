"""MCP call results as tool results: text as is, other content as a placeholder, long text archived."""

from __future__ import annotations

import base64
from pathlib import Path

import mcp_types as t

from core.cancel import Cancel
from core.mcp.tools import to_result
from core.prune.archive import OutputArchive
from core.session.items import ToolOutcome
from core.tools.base import ToolContext
from core.tools.workspace import Workspace
from tests.conftest import make_settings


def _ctx(tmp_path: Path, result_chars: int = 12_000) -> ToolContext:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return ToolContext(workspace=Workspace(tmp_path / "ws"), settings=make_settings("http://127.0.0.1:1"),
                       emit=lambda event, data: None, approve=lambda what, why: None, cancel=Cancel(),
                       archive=OutputArchive(tmp_path / "outputs"), result_chars=result_chars)


def test_text_images_audio_and_resources(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG" + bytes(996)).decode()
    result = t.CallToolResult(content=[
        t.TextContent(type="text", text="第一行"),
        t.ImageContent(type="image", data=png, mime_type="image/png"),
        t.AudioContent(type="audio", data=base64.b64encode(bytes(30)).decode(), mime_type="audio/wav"),
        t.ResourceLink(type="resource_link", uri="file:///tmp/a.txt", name="a.txt"),
        t.EmbeddedResource(type="resource", resource=t.TextResourceContents(uri="file:///b.md", text="# 标题")),
        t.EmbeddedResource(type="resource", resource=t.BlobResourceContents(uri="file:///c.bin", blob="AAAA",
                                                                             mime_type="application/zip")),
    ])
    out = to_result(result, "srv", _ctx(tmp_path))
    assert out.status == "ok" and out.outcome == ToolOutcome(server="srv")
    assert out.output.split("\n") == [
        "第一行", "[image image/png, about 1,000 bytes, not shown]", "[audio audio/wav, about 30 bytes, not shown]",
        "[resource link file:///tmp/a.txt (a.txt)]", "[resource file:///b.md]", "# 标题",
        "[binary resource file:///c.bin (application/zip), not shown]"]


def test_structured_content_alone_errors_and_empty_results(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    structured = to_result(t.CallToolResult(content=[], structured_content={"城市": "北京", "n": 3}), "s", ctx)
    assert structured.output == '{\n "城市": "北京",\n "n": 3\n}'
    failed = to_result(t.CallToolResult(content=[t.TextContent(type="text", text="no such row")], is_error=True),
                       "s", ctx)
    assert (failed.status, failed.output) == ("error", "error (reported by the tool): no such row")
    assert to_result(t.CallToolResult(content=[]), "s", ctx).output == "(the tool returned nothing)"


def test_a_long_result_is_archived_for_read_output(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, result_chars=100)
    text = "\n".join(f"行 {n}" for n in range(500))
    out = to_result(t.CallToolResult(content=[t.TextContent(type="text", text=text)]), "s", ctx)
    assert out.output == text and out.outcome.archive
    assert "行 499" in ctx.archive.read(out.outcome.archive, offset=500, limit=1)
