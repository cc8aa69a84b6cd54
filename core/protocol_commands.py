"""The slash-command half of the protocol (`core.protocol` re-exports every name here; import them
from there): the typed ops for what a slash command does, and the typed answers, which carry data and
the `op_id` of the op that asked. Each op names its slash command (`command`) for the front ends'
one parser (`core/runtime/slash.py`); the words for the answers are each front end's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal, Union

Mode = Literal["auto", "ask", "yes"]  # the approval modes (core.modes)


# -- the answers to slash-command ops: data, each with the id of the op that asked ---------------
@dataclass(frozen=True)
class ModeChanged:
    """The approval mode (`changed` false when `SetMode()` only asked), the modes this machine can
    use (`auto` needs a working sandbox) and what confines commands."""

    type: ClassVar[str] = "mode"
    op_id: str
    mode: Mode
    changed: bool
    usable: list[Mode]
    sandbox: str


@dataclass(frozen=True)
class ModelChanged:
    """The model the next request uses (`changed` false when `SetModel()` only asked)."""

    type: ClassVar[str] = "model"
    op_id: str
    model: str
    changed: bool


@dataclass(frozen=True)
class ContextReport:
    """What the next request holds: tokens by source (largest first) against the budget, and the
    session's usage so far (`cost_usd` null when the model's prices are unknown)."""

    type: ClassVar[str] = "context"
    op_id: str
    total: int
    budget: int
    window: int
    parts: dict[str, int]
    input_tokens: int
    output_tokens: int
    cache_hit_share: float
    cost_usd: float | None
    mcp_tools: int
    mcp_tools_tokens: int


@dataclass(frozen=True)
class SessionRow:
    """One saved session; `size` and `checkpoints_size` in bytes (the checkpoints are part of the size)."""

    id: str
    created: str
    size: int
    checkpoints_size: int
    first_prompt: str


@dataclass(frozen=True)
class SessionsListed:
    """The saved sessions in `folder`, newest first (at most `limit`; `more` older ones left out)."""

    type: ClassVar[str] = "sessions"
    op_id: str
    folder: str
    sessions: list[SessionRow]
    more: int
    current: str  # the open session's id ("" outside a session)


@dataclass(frozen=True)
class SessionSwitched:
    """`NewSession` or `Resume` switched to session `id` (its `SessionOpened` came first); `previous` is
    kept and can be resumed; `items` is the history's length, `notices` what loading it found."""

    type: ClassVar[str] = "session_switched"
    op_id: str
    id: str
    previous: str
    resumed: bool
    items: int
    notices: list[str]


@dataclass(frozen=True)
class Compacted:
    """`Compact` ran: `message` is the context shaping's account of what it did (or that there was
    nothing to compact yet)."""

    type: ClassVar[str] = "compacted"
    op_id: str
    message: str


@dataclass(frozen=True)
class DiffShown:
    """What the agent changed: a unified diff of the session's (or, `last`, the last turn's) files;
    empty when nothing changed; `checkpoints` false when this session keeps none."""

    type: ClassVar[str] = "diff"
    op_id: str
    last: bool
    diff: str
    checkpoints: bool


@dataclass(frozen=True)
class PathWhy:
    """A file undo could not put back, and why."""

    path: str
    why: str


@dataclass(frozen=True)
class UndoFinished:
    """How an `Undo` ended. `outcome`: "restored" (`restored` came back, `not_restored` could not),
    "nothing" (no turn left to undo; `elsewhere` names workspaces whose turns can be undone there),
    "nothing_to_restore", "cannot_restore" (`not_restored` says why), "cancelled" or
    "conflict_refused" (`reason` is the refusal; `conflicts` the files changed outside the agent),
    "no_checkpoints". `turns` names the undone turns by their prompts."""

    type: ClassVar[str] = "undo_finished"
    op_id: str
    outcome: Literal["restored", "nothing", "nothing_to_restore", "cannot_restore", "cancelled",
                     "conflict_refused", "no_checkpoints"]
    turns: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    not_restored: list[PathWhy] = field(default_factory=list)
    reason: str = ""
    conflicts: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class McpToolRow:
    """One tool of an MCP server: its name there, the name the model sees, whether it asks first."""

    name: str
    offered_as: str
    read_only: bool
    description: str


@dataclass(frozen=True)
class McpServerRow:
    """One configured MCP server: its state ("starting", "ready", "failed", …, with `reason`), a
    one-line `summary` of it, where it was configured, and its tools."""

    name: str
    state: str
    reason: str
    summary: str
    transport: str
    source: str
    from_workspace: bool
    tools: list[McpToolRow]


@dataclass(frozen=True)
class McpReport:
    """The MCP servers and their tools (empty: none is configured)."""

    type: ClassVar[str] = "mcp"
    op_id: str
    servers: list[McpServerRow]


@dataclass(frozen=True)
class McpChanged:
    """`McpRestart` or `McpAllow` acted on server `server`; `message` is the manager's account of it."""

    type: ClassVar[str] = "mcp_changed"
    op_id: str
    action: Literal["restart", "allow"]
    server: str
    message: str


@dataclass(frozen=True)
class CommandFailed:
    """A slash-command op could not be done. `kind`: "not_found" (no such session), "busy" (open in
    another agent), "unavailable" (this machine or session cannot: no sandbox for auto, no MCP
    servers), "failed" (it was tried and failed: the journal could not be written)."""

    type: ClassVar[str] = "command_failed"
    op_id: str
    command: str
    kind: Literal["not_found", "busy", "unavailable", "failed"]
    detail: str


@dataclass(frozen=True)
class SetMode:
    """Switch the approval mode (`"next"`: the next one this machine can use); without `mode`, report it."""

    command: ClassVar[str] = "/mode"
    mode: Literal["auto", "ask", "yes", "next"] | None = None
    id: str = ""


@dataclass(frozen=True)
class SetModel:
    """Switch the model from the next request on; without `model`, report it."""

    command: ClassVar[str] = "/model"
    model: str | None = None
    id: str = ""


@dataclass(frozen=True)
class ShowContext:
    """Report what the next request holds against the budget (`ContextReport`)."""

    command: ClassVar[str] = "/context"
    id: str = ""


@dataclass(frozen=True)
class Compact:
    """Summarise older turns now to free context (`Compacted`)."""

    command: ClassVar[str] = "/compact"
    id: str = ""


@dataclass(frozen=True)
class ShowDiff:
    """The diff of what the agent changed in this session, or in its last turn (`DiffShown`)."""

    command: ClassVar[str] = "/diff"
    last: bool = False
    id: str = ""


@dataclass(frozen=True)
class Undo:
    """Put the files back as they were before the last `turns` turns that changed files, after asking
    (an `ApprovalRequested`; the session's policy applies); answered by `UndoFinished`."""

    command: ClassVar[str] = "/undo"
    turns: int = 1
    id: str = ""


@dataclass(frozen=True)
class NewSession:
    """Start a new conversation; the current one stays saved (`SessionSwitched`)."""

    command: ClassVar[str] = "/clear"
    id: str = ""


@dataclass(frozen=True)
class Resume:
    """Continue the saved session whose id starts with `session` (the latest other one without it)."""

    command: ClassVar[str] = "/resume"
    session: str | None = None
    id: str = ""


@dataclass(frozen=True)
class ListSessions:
    """List the saved sessions (`SessionsListed`)."""

    command: ClassVar[str] = "/sessions"
    id: str = ""


@dataclass(frozen=True)
class ShowMcp:
    """Report the MCP servers and their tools (`McpReport`)."""

    command: ClassVar[str] = "/mcp"
    id: str = ""


@dataclass(frozen=True)
class McpRestart:
    """Restart the MCP server named `server` (`McpChanged`)."""

    command: ClassVar[str] = "/mcp restart"
    server: str
    id: str = ""


@dataclass(frozen=True)
class McpAllow:
    """Start the workspace's MCP server named `server`, which waits for a yes (`McpChanged`)."""

    command: ClassVar[str] = "/mcp allow"
    server: str
    id: str = ""


CommandOp = Union[  # noqa: UP007 - what a slash command asks of the runtime; each has a `command` name
    SetMode, SetModel, ShowContext, Compact, ShowDiff, Undo, NewSession, Resume, ListSessions, ShowMcp,
    McpRestart, McpAllow,
]
CommandAnswer = Union[  # noqa: UP007 - what a slash-command op is answered with
    ModeChanged, ModelChanged, ContextReport, SessionsListed, SessionSwitched, Compacted, DiffShown,
    UndoFinished, McpReport, McpChanged, CommandFailed,
]
