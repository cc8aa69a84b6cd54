"""What every tool shares: its schema, its result, its context, and argument checking."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core.cancel import Cancel
from core.config import Settings
from core.modes import AUTO
from core.protocol import Emit
from core.prune.archive import OutputArchive
from core.session.items import ToolOutcome
from core.tools.workspace import Workspace

if TYPE_CHECKING:
    from core.checkpoints import Checkpoints
    from core.network.session import SessionNetwork

# (what is about to happen, why it needs a yes) -> None when allowed, else why it was refused.
Approve = Callable[[str, str], str | None]


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model as the result, and
    `path` (a file it showed the model part of) into the outcome."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class Printed:
    """What a command printed, inside a tool's text, left for the finish step to prune
    (core/agent/results.py): where it sits in the text (`start`, `end`) and what the pruner goes by."""

    start: int
    end: int
    command: str
    exit_code: int | None
    archive: str = ""  # the id of the full output, which the pruner's stamp names


@dataclass
class ToolResult:
    """What a handler returns: the text, and the facts beside it (`run_tool` fills `tool` and `status`).
    A tool whose text holds a command's output declares where (`printed`); the finish step prunes it."""

    output: str
    status: Literal["ok", "error", "refused"] = "ok"
    outcome: ToolOutcome = field(default_factory=ToolOutcome)
    printed: Printed | None = None


@dataclass
class ToolRun:
    """A call that ran, before the loop shapes its text for the model (core/agent/results.py)."""

    call_id: str
    name: str
    arguments: Any  # as shown to the user: the decoded JSON, or the raw text when it is not JSON
    output: str
    outcome: ToolOutcome  # with `tool` and `status` filled in
    duration: float
    server: str = ""
    printed: Printed | None = None  # as the tool declared it


@dataclass
class ToolContext:
    workspace: Workspace
    settings: Settings
    emit: Emit
    approve: Approve
    cancel: Cancel
    call_id: str = ""
    archive: OutputArchive | None = None  # where run_shell keeps full outputs, when there is one
    checkpoints: Checkpoints | None = None  # records every change to the workspace, when there is a session
    result_chars: int = 12_000  # the context's per-result cap, in characters (the pruner's budget)
    # Asks whether a command the sandbox blocked may run again outside it; None: `approve` is asked.
    approve_unconfined: Approve | None = None
    mode: str = AUTO  # the approval mode (core.modes): which commands ask before they run
    allowed: Callable[[str, str], bool] = lambda command, dialect: False  # the workspace's allow rules
    network: SessionNetwork | None = None  # the session's proxy, for the proxied network (AGENT_NETWORK)
    # Whether the model was shown a file's content in this session (it read, wrote or edited it): a
    # write over a file it never saw is refused once, with the content shown. The loop answers from
    # the session's history; elsewhere every file counts as seen.
    seen: Callable[[str], bool] = lambda rel: True


Handler = Callable[[dict[str, Any], ToolContext], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    server: str = ""  # the MCP server that serves it; empty for the built-in tools
    checkpointed: bool = False  # it may change the workspace in ways only a snapshot records (for /undo)

    def schema(self) -> dict[str, Any]:
        """The flat Responses-API function tool shape."""
        return {"type": "function", "name": self.name, "description": self.description,
                "parameters": self.parameters}


def params(properties: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def parse_arguments(raw: str, tool: Tool) -> dict[str, Any]:
    """Decode and check a call's JSON arguments; ToolError with a fix-it message otherwise."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise ToolError(f"the arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
                        f"send a JSON object matching the {tool.name} schema") from None
    if not isinstance(args, dict):
        raise ToolError(f"the arguments must be a JSON object, got {type(args).__name__}")
    props = tool.parameters.get("properties", {})
    missing = [name for name in tool.parameters.get("required", []) if args.get(name) is None]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    unknown = [name for name in args if name not in props]
    if unknown and tool.parameters.get("additionalProperties") is False:
        raise ToolError(f"unknown argument(s): {', '.join(unknown)}; {tool.name} takes {', '.join(props)}")
    return {name: _coerce(name, value, props[name]) for name, value in args.items() if value is not None}


def _coerce(name: str, value: Any, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int | str | float):
            raise ToolError(f"{name} must be an integer")
        try:
            number = float(value)
            whole = int(number)
        except (ValueError, OverflowError):
            raise ToolError(f"{name} must be an integer, got {value!r}") from None
        if number != whole:
            raise ToolError(f"{name} must be an integer, got {value!r}")
        return whole
    if kind == "number":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ToolError(f"{name} must be a number, got {value!r}") from None
    if kind == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            raise ToolError(f"{name} must be true or false")
        return value
    if kind == "string" and not isinstance(value, str):
        raise ToolError(f"{name} must be a string")
    return value
