"""`read_output`: page or search the full output of an earlier command, which the pruner shortened."""

from __future__ import annotations

from typing import Any

from core.session.items import ToolOutcome
from core.tools.base import ToolContext, ToolError, ToolResult


def read_output(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if ctx.archive is None:
        raise ToolError("this session keeps no command outputs")
    try:
        text = ctx.archive.read(args["id"], offset=args.get("offset", 1), limit=args.get("limit", 200),
                                grep=args.get("grep"))
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    return ToolResult(text, outcome=ToolOutcome(archive=args["id"]))
