"""MCP tools as the agent's tools: named, described, approved by their own annotations, answered.

MCP's defaults make a tool without annotations potentially destructive, so only a tool that says
`readOnlyHint: true`, one in the server entry's `autoApprove` list, or one the user allowed
"always" in this workspace runs unasked; every other call asks with the server, the tool and the
arguments shown. The result goes back through `run_tool` like every other (capped, redacted);
text longer than the result budget is archived first, so `read_output` can page all of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core import protocol as ev
from core.agent.approvals import Keeper
from core.cancel import Cancel
from core.i18n import _
from core.mcp.config import WORKSPACE_FILE, ServerConfig
from core.mcp.consent import ConsentStore
from core.mcp.manager import FAILED, McpManager, McpTool, McpUnavailable
from core.mcp.naming import tool_name
from core.session.items import ToolOutcome
from core.tools.base import Tool, ToolContext, ToolResult

# (what, why, *, kind, keep) -> None when allowed, else why not: `Approvals.ask` for the MCP client.
AskToStart = Callable[..., str | None]
MAX_DESCRIPTION = 1024
SHOWN_ARGUMENTS = 2000  # characters of the arguments an approval question shows
SILENT_WAIT = 1.0  # seconds the first turn waits for starting servers before it says so


@dataclass
class McpTools:
    """The session's MCP tools: the offered list (stable order) and the handlers behind it."""

    manager: McpManager
    configs: dict[str, ServerConfig]
    consent: ConsentStore
    reserved: frozenset[str]  # the built-in tools' names
    unasked: list[ServerConfig] = field(default_factory=list)  # the workspace's, to ask about at the first turn
    tools: dict[str, Tool] = field(default_factory=dict)
    by_name: dict[str, McpTool] = field(default_factory=dict)
    _waited: bool = False
    _reported: set[tuple[str, str]] = field(default_factory=set)

    def refresh(self, emit: ev.Emit, ask: AskToStart, cancel: Cancel | None = None) -> list[Tool]:
        """The tools to offer now. The first time, asks about the workspace's own servers (`ask`
        refuses at once when nobody can answer) and waits for the servers to start (each bounded by
        its start timeout, and by the turn's cancel); a server that failed is reported once."""
        if self.unasked:
            self._ask_to_start(emit, ask)
        if not self._waited:
            self.manager.wait_started(cancel, within=SILENT_WAIT)
            if self.manager.starting():
                emit(ev.Notice(kind="info", message=_("MCP: waiting for {names} to start").format(
                    names=", ".join(self.manager.starting()))))
                self.manager.wait_started(cancel)
            self._waited = True
        for view in self.manager.views():
            if view.state == FAILED and (view.name, view.reason) not in self._reported:
                self._reported.add((view.name, view.reason))
                emit(ev.Notice(kind="warning", message=_("MCP server {name} failed: {problem}").format(
                    name=view.name, problem=_(view.reason))))
        taken = set(self.reserved)
        tools: dict[str, Tool] = {}
        by_name: dict[str, McpTool] = {}
        for mcp_tool in self.manager.offered_tools():
            name = tool_name(mcp_tool.server, mcp_tool.name, taken)
            by_name[name] = mcp_tool
            tools[name] = Tool(name, _description(mcp_tool), _parameters(mcp_tool.schema), self._handler(mcp_tool),
                               server=mcp_tool.server)
        self.tools, self.by_name = tools, by_name
        return list(tools.values())

    def _ask_to_start(self, emit: ev.Emit, ask: AskToStart) -> None:
        """One question per waiting workspace server, about its whole entry. "Run once" starts it
        for this session; only "always, in this workspace" keeps the consent (for this exact
        entry). A server the entry marks `trusted` asks to run outside the sandbox: a question the
        yes mode never answers, so a workspace file alone never makes a server unconfined."""
        unasked, self.unasked = self.unasked, []
        refused: list[tuple[str, str]] = []
        for server in unasked:
            outside = self.manager.outside_the_sandbox(server)
            why = (_("the workspace's {file} wants to start an MCP server outside the sandbox") if outside
                   else _("the workspace's {file} wants to start an MCP server in the sandbox, like commands")
                   if self.manager.confines(server)
                   else _("the workspace's {file} wants to start an MCP server with your rights (no sandbox "
                          "confines it)"))
            keeper = Keeper(_("start {name} as configured here").format(name=server.name),
                            lambda server=server: self.consent.allow_server(server))
            refusal = ask(server.described, why.format(file=WORKSPACE_FILE),
                          kind="unconfined" if outside else "command", keep=keeper)
            if refusal is None:
                self.manager.start([server.name])
            else:
                refused.append((server.name, refusal))
        if refused:
            names = ", ".join(name for name, _why in refused)
            emit(ev.Notice(kind="warning", message=_("MCP: not starting {names} from the workspace's {file} without a yes "
                                                     "({why}); /mcp allow NAME starts one").format(
                                                         names=names, file=WORKSPACE_FILE, why=refused[0][1])))

    def remember_always(self, name: str) -> str | None:
        """The user chose "always, in this workspace" for this tool; a sentence when it could not be kept."""
        mcp_tool = self.by_name.get(name)
        return self.consent.allow_tool(mcp_tool.server, mcp_tool.name) if mcp_tool is not None else None

    def why_ask(self, mcp_tool: McpTool) -> str | None:
        """Why a call needs a yes; None when it runs unasked."""
        config = self.configs.get(mcp_tool.server)
        if mcp_tool.read_only or (config is not None and mcp_tool.name in config.auto_approve):
            return None
        if self.consent.tool_always(mcp_tool.server, mcp_tool.name):
            return None
        return _("the MCP tool {tool} of server {server} does not say it is read-only").format(
            tool=mcp_tool.name, server=mcp_tool.server)

    def _handler(self, mcp_tool: McpTool) -> Any:
        def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            why = self.why_ask(mcp_tool)
            if why is not None:
                shown = json.dumps(args, ensure_ascii=False)
                if len(shown) > SHOWN_ARGUMENTS:
                    shown = _("{start} … ({count:,} more characters)").format(
                        start=shown[:SHOWN_ARGUMENTS], count=len(shown) - SHOWN_ARGUMENTS)
                refusal = ctx.approve(_("MCP server {server}, tool {tool}, arguments {arguments}").format(
                    server=mcp_tool.server, tool=mcp_tool.name, arguments=shown), why)
                if refusal is not None:  # it carries the reason the person was shown, in their language
                    return ToolResult(_("refused: {why}, so it needs the user's yes, and it was not given "
                                        "({refusal}). Use a read-only tool, or ask the user to allow this "
                                        "one.").format(why=why, refusal=refusal),
                                      status="refused", outcome=ToolOutcome(server=mcp_tool.server))
            try:
                result = self.manager.call(mcp_tool.server, mcp_tool.name, args, ctx.cancel)
            except McpUnavailable as exc:
                return ToolResult(f"error: {exc}", status="error", outcome=ToolOutcome(server=mcp_tool.server))
            return to_result(result, mcp_tool.server, ctx)

        return run


def _description(tool: McpTool) -> str:
    text = f"[MCP server {tool.server}] {tool.description.strip()}".strip()
    return text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION - 1] + "…"


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema as a function's parameters: an object, without the `$schema` marker."""
    parameters = {k: v for k, v in schema.items() if k != "$schema"}
    parameters["type"] = "object"
    parameters.setdefault("properties", {})
    return parameters


def to_result(result: Any, server: str, ctx: ToolContext) -> ToolResult:
    """A CallToolResult as text: text blocks as they are, images, audio and binary resources as a
    short placeholder, structured content as JSON when there is nothing else."""
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    text = "\n".join(parts) if parts else "(the tool returned nothing)"
    outcome = ToolOutcome(server=server)
    if ctx.archive is not None and len(text) > ctx.result_chars:
        archive_id = ctx.archive.new_id()
        ctx.archive.write(archive_id, text)
        outcome.archive = archive_id
    if result.is_error:
        return ToolResult(f"error (reported by the tool): {text}", status="error", outcome=outcome)
    return ToolResult(text, outcome=outcome)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        data = block.data or ""
        size = len(data) * 3 // 4 - data[-2:].count("=")  # the decoded size of the base64 text
        return f"[{kind} {block.mime_type}, about {size:,} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link {block.uri}{f' ({block.name})' if block.name else ''}]"
    if kind == "resource":
        contents = block.resource
        text = getattr(contents, "text", None)
        if isinstance(text, str):
            return f"[resource {contents.uri}]\n{text}"
        return f"[binary resource {contents.uri} ({contents.mime_type or 'unknown type'}), not shown]"
    return f"[{kind or 'unknown'} content, not shown]"
