"""The tools the model can call, and `run_tool`: the run step of every call (core/agent/results.py).

Invalid JSON, unknown tools, bad arguments and tool exceptions all become a clear error *result*
for the model (never a crash), so it can correct itself on the next step.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from typing import Any

from core import protocol as ev
from core.session.items import FunctionCall, ToolOutcome
from core.tools.base import Tool, ToolContext, ToolError, ToolResult, ToolRun, params, parse_arguments
from core.tools.files import edit_file, list_files, multi_edit, read_file, write_file
from core.tools.output import read_output
from core.tools.search import search
from core.tools.shell import detect_shell, run_shell

__all__ = ["TOOLS", "Tool", "ToolContext", "ToolError", "ToolResult", "ToolRun", "run_tool", "tool_schemas"]

_PATH = {"type": "string", "description": "Path relative to the workspace root."}


def _shell_description() -> str:
    return (f"Run a command in {detect_shell().dialect} in the workspace root and get its exit code and output "
            "(stdout and stderr together). Long output is pruned to what matters (errors, failures, summaries); "
            "the full output is kept and can be paged with read_output. No stdin: commands must not prompt. "
            "Prefer the file tools for reading and editing files.")


TOOLS: dict[str, Tool] = {tool.name: tool for tool in (
    Tool("run_shell", _shell_description(), params({
        "command": {"type": "string", "description": "The command line to run."},
        "timeout": {"type": "integer", "description": "Seconds before the command is killed (default and maximum: "
                                                      "the user's AGENT_SHELL_TIMEOUT)."},
    }, ["command"]), run_shell, checkpointed=True),
    Tool("read_file", "Read a text file with line numbers. Use offset/limit (in lines) to page through big files.",
         params({
             "path": _PATH,
             "offset": {"type": "integer", "description": "First line to show, 1-based (default 1)."},
             "limit": {"type": "integer", "description": "How many lines to show (default 2000)."},
         }, ["path"]), read_file),
    Tool("write_file", "Create a file, or replace one whole, with the given content (parent folders are "
         "created). An existing file must have been read in this session first; to change part of a file "
         "use edit_file.",
         params({"path": _PATH, "content": {"type": "string", "description": "The complete new file content."}},
                ["path", "content"]), write_file),
    Tool("edit_file", "Replace a passage of a file. Copy old_text from read_file output without the line "
         "numbers; it must name exactly one place (unless replace_all is true). Small differences in "
         "whitespace, indentation and line endings are forgiven when the place is still unambiguous; the "
         "result says what was forgiven. To change several places in one file use multi_edit.",
         params({
             "path": _PATH,
             "old_text": {"type": "string", "description": "The text to replace, copied from the file."},
             "new_text": {"type": "string", "description": "The replacement text."},
             "replace_all": {"type": "boolean", "description": "Replace every exact occurrence (default false)."},
         }, ["path", "old_text", "new_text"]), edit_file),
    Tool("multi_edit", "Make several replacements in one file, in order, all or nothing: if any old_text "
         "does not name exactly one place, the file is left unchanged. Each edit works like edit_file.",
         params({
             "path": _PATH,
             "edits": {"type": "array", "description": "The replacements, applied one after another.",
                       "items": {"type": "object", "properties": {
                           "old_text": {"type": "string", "description": "The text to replace."},
                           "new_text": {"type": "string", "description": "The replacement text."},
                       }, "required": ["old_text", "new_text"], "additionalProperties": False}},
         }, ["path", "edits"]), multi_edit),
    Tool("list_files", "List files and folders under a path (folders end with /). Skips .git, node_modules, "
         "virtualenvs and caches.",
         params({
             "path": {"type": "string", "description": "Folder relative to the workspace root (default '.')."},
             "max_depth": {"type": "integer", "description": "How many levels to descend (default 3)."},
         }, []), list_files),
    Tool("search", "Search file contents with a regular expression; returns path:line:text for each match. "
         "Searches hidden and git-ignored files too, not .git, node_modules, virtualenvs or caches.",
         params({
             "pattern": {"type": "string", "description": "Regular expression (RE2/ripgrep syntax: no lookaround or backreferences)."},
             "path": {"type": "string", "description": "File or folder to search (default '.')."},
             "glob": {"type": "string", "description": "Only files matching this glob, e.g. '*.py'."},
             "ignore_case": {"type": "boolean", "description": "Case-insensitive (default false)."},
         }, ["pattern"]), search),
    Tool("read_output", "Page through or search the full output of an earlier run_shell command, which was "
         "pruned to what matters; its id is in the [pruned …; full output: out-N] line.",
         params({
             "id": {"type": "string", "description": "The output id, e.g. 'out-7'."},
             "offset": {"type": "integer", "description": "First line, 1-based (default 1)."},
             "limit": {"type": "integer", "description": "How many lines (default 200)."},
             "grep": {"type": "string", "description": "Only lines matching this regular expression (RE2 syntax)."},
         }, ["id"]), read_output),
)}


def tool_schemas() -> list[dict[str, Any]]:
    return [tool.schema() for tool in TOOLS.values()]


def run_tool(call: FunctionCall, ctx: ToolContext, extra: Mapping[str, Tool] | None = None) -> ToolRun:
    """Run one call (emitting `ToolStarted`) and say what it produced; the loop's finish step shapes
    it and emits `ToolFinished`. `extra`: the session's other tools (its MCP servers')."""
    ctx.call_id = call.call_id
    tool = TOOLS.get(call.name) or (extra or {}).get(call.name)
    shown_args: Any = call.arguments
    try:
        shown_args = json.loads(call.arguments)
    except ValueError:
        pass
    server = tool.server if tool is not None else ""
    ctx.emit(ev.ToolStarted(call_id=call.call_id, name=call.name, arguments=shown_args, server=server))
    start = time.monotonic()
    if tool is None:
        result = ToolResult(f"error: there is no tool named {call.name!r}; available: {', '.join([*TOOLS, *(extra or {})])}",
                            status="error")
    else:
        try:
            args = parse_arguments(call.arguments, tool)
            if tool.checkpointed and ctx.checkpoints is not None:
                # what it changes can be undone; the checkpoint is named by its command line
                with ctx.checkpoints.command(str(args.get("command") or call.name)):
                    result = tool.handler(args, ctx)
            else:
                result = tool.handler(args, ctx)
        except ToolError as exc:
            result = ToolResult(f"error: {exc}", status="error", outcome=ToolOutcome(path=exc.path))
        except (OSError, UnicodeError) as exc:
            result = ToolResult(f"error: {call.name} failed: {exc}", status="error")
        except Exception as exc:  # a bug in a tool must not end the session
            result = ToolResult(f"error: {call.name} crashed ({type(exc).__name__}: {exc})", status="error")
    outcome = dataclasses.replace(result.outcome, tool=call.name, status=result.status)
    return ToolRun(call.call_id, call.name, shown_args, result.output, outcome,
                   round(time.monotonic() - start, 3), server, result.printed)
