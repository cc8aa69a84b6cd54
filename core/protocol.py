"""The one seam between the UI-free core and every front end: events out, ops in.

The core never prints. Everything a person should see is an `Event`, a frozen dataclass handed to
one callback (`Emit`); front ends dispatch on its type with `match`. Everything a front end asks of
the core is an `Op` sent to the `Runtime` (`core.runtime.runtime`): submit a prompt, do what a slash
command names (`SetMode`, `Undo`, `ListSessions`, …), answer an approval, interrupt, shut down. A slash
command's answer is a typed event that carries data (`ModeChanged`, `ContextReport`, …) with the `id` of
the op that asked; each front end words it itself. `to_wire` is an event as JSON,
`{"type": …, "v": PROTOCOL_VERSION, …fields}`, and `from_wire` reads it back (v1 lines too).

The `--one --json` stream publishes a projection of the events (`publish`): the runtime's and the
HTTP client's bookkeeping (`INTERNAL`) and a bug's traceback stay inside, so they may change without
changing the published interface. `docs/events.schema.json` is generated from the published
classes (`python3 -m ui.jsonl --schema`) and a test keeps it current.

Threads. Every event is emitted on the runtime's worker thread (the one running the agent or a
slash command), except `ToolOutput`, which comes from the reader thread of a running command. A
front end with its own UI loop must therefore only queue events in its callback and draw them on
its own thread, and must never block there.

Statuses use one vocabulary everywhere: "ok", "error", "refused", "incomplete", "aborted",
"step_limit" (see `STATUSES`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

from core.i18n import N_
from core.protocol_commands import (  # noqa: F401 - re-exported: one protocol, one import
    CommandAnswer,
    CommandFailed,
    CommandOp,
    Compact,
    Compacted,
    ContextReport,
    DiffShown,
    ListSessions,
    McpAllow,
    McpChanged,
    McpReport,
    McpRestart,
    McpServerRow,
    McpToolRow,
    Mode,
    ModeChanged,
    ModelChanged,
    NewSession,
    PathWhy,
    Resume,
    SessionRow,
    SessionsListed,
    SessionSwitched,
    SetMode,
    SetModel,
    ShowContext,
    ShowDiff,
    ShowMcp,
    Undo,
    UndoFinished,
)

# The published stream's version. 2: version 1 without the internal kinds (request_sent, first_byte,
# job_started, job_ended), with internal_error's trace always empty, and with fields added; a reader
# of version 1 that ignores fields it does not know reads every line of it.
PROTOCOL_VERSION = 2
READ_VERSIONS = (1, 2)  # the versions `from_wire` reads

OK, ERROR_STATUS, REFUSED, INCOMPLETE, ABORTED_STATUS, STEP_LIMIT = (
    "ok", "error", "refused", "incomplete", "aborted", "step_limit")
STATUSES = (OK, ERROR_STATUS, REFUSED, INCOMPLETE, ABORTED_STATUS, STEP_LIMIT)

# The values of the enum-like fields, as types: a checker sees them, and the schema lists them.
ToolStatus = Literal["ok", "error", "refused"]
TaskStatus = Literal["ok", "error", "step_limit", "aborted"]
CompactionStatus = Literal["ok", "error", "aborted"]
Decision = Literal["once", "session", "workspace", "deny", "deny_reason"]  # the ids of DECISIONS
ApprovalKind = Literal["command", "tool", "unconfined", "network"]
ResolvedBy = Literal["user", "policy", "session", "interrupt"]
NoticeKind = Literal["info", "warning", "retry", "context"]
# Why a request or a task failed (core/provider/errors.py:ApiError.kind, and the loop's own stops).
ErrorKind = Literal["auth", "balance", "rate_limit", "server", "invalid_request", "context_overflow", "network",
                    "stream", "model_output", "incomplete", "aborted", "stuck", "step_limit"]



@dataclass(frozen=True)
class Choice:
    """A decision as a question offers it: its id (what `Answer` sends back), the key and the alias a
    person may type for it, and its label (marked for translation; each front end translates it)."""

    id: Decision
    key: str
    alias: str
    label: str


# Every decision a question can offer, numbered the same in every front end; `ApprovalRequested.decisions`
# lists those a question offers (decision 5 only with a rule to keep).
DECISIONS = (
    Choice("once", "1", "y", N_("run once")),
    Choice("session", "2", "a", N_("always, for this session")),
    Choice("deny", "3", "n", N_("deny")),
    Choice("deny_reason", "4", "", N_("deny, and tell the model why")),
    Choice("workspace", "5", "w", N_("always, in this workspace")),
)

# -- events: the core to a front end ------------------------------------------------------------
@dataclass(frozen=True)
class SessionOpened:
    """A session was opened or switched to (/resume, /clear). `history` is what to draw, oldest first:
    {"kind": "user" | "assistant" | "reasoning" | "summary", "text"} or
    {"kind": "tool", "call_id", "name", "arguments", "result", "status"}."""

    type: ClassVar[str] = "session"
    id: str
    model: str
    workspace: str
    window: int
    budget_tokens: int
    max_steps: int
    resumed: bool = False
    session_cost_usd: float | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    folder: str = ""  # the session's folder (journal, outputs, logs)
    mode: Mode | Literal[""] = ""  # the approval mode
    sandbox: str = ""  # what confines commands, in a few words ("none" when nothing does)


@dataclass(frozen=True)
class TurnStarted:
    """One model request is about to be made (step `step` of the task's at most `max_steps`)."""

    type: ClassVar[str] = "turn_started"
    step: int
    max_steps: int
    estimated_tokens: int
    budget_tokens: int
    window: int
    model: str


@dataclass(frozen=True)
class RequestSent:
    """The HTTP request went out."""

    type: ClassVar[str] = "request_sent"
    attempt: int
    max_attempts: int


@dataclass(frozen=True)
class FirstByte:
    """The first bytes of the response arrived, `latency` seconds after the request."""

    type: ClassVar[str] = "first_byte"
    latency: float


@dataclass(frozen=True)
class ReasoningDelta:
    """Chain-of-thought text as it streams."""

    type: ClassVar[str] = "reasoning"
    delta: str
    item_id: str
    summary: bool = False


@dataclass(frozen=True)
class ReasoningDone:
    """One reasoning item is complete."""

    type: ClassVar[str] = "reasoning_done"
    text: str
    item_id: str


@dataclass(frozen=True)
class TextDelta:
    """Answer text as it streams."""

    type: ClassVar[str] = "text"
    delta: str
    item_id: str


@dataclass(frozen=True)
class TextDone:
    """One message item is complete."""

    type: ClassVar[str] = "text_done"
    text: str
    item_id: str


@dataclass(frozen=True)
class ToolStarted:
    """A tool is about to run; `arguments` is the parsed dict, or the raw text when it was not JSON."""

    type: ClassVar[str] = "tool_start"
    call_id: str
    name: str
    arguments: Any
    server: str = ""  # the MCP server whose tool it is (its configured name); empty for the built-in tools


@dataclass(frozen=True)
class ToolOutput:
    """Live output of a running command (progress only; from the command's reader thread)."""

    type: ClassVar[str] = "tool_output"
    call_id: str
    text: str


@dataclass(frozen=True)
class ToolFinished:
    """A tool finished: `result` is what it produced, `model_result` what the model received (capped
    to the context budget, redacted); `status` is "ok", "error" or "refused"."""

    type: ClassVar[str] = "tool"
    call_id: str
    name: str
    arguments: Any
    result: str
    status: ToolStatus
    duration: float
    model_result: str = ""
    server: str = ""  # as in ToolStarted
    # What the pruner made of a command's output, in characters (None for tools it does not prune).
    pruned_from: int | None = None
    pruned_to: int | None = None


@dataclass(frozen=True)
class ApprovalRequested:
    """Something waits for a person; answer with the `Answer` op (decision ids: "once", "session",
    "workspace", "deny", "deny_reason"; `decisions` lists those offered). `kind` says what is asked: "command" (a risky command or write), "tool"
    (a tool whose server does not say it is read-only), "unconfined" (run a command the sandbox
    blocked outside it) or "network" (let commands connect to a host the network proxy does not
    allow, asked by `network` while the command waits)."""

    type: ClassVar[str] = "approval"
    id: str
    call_id: str
    tool: str
    action: str
    reason: str
    cwd: str
    decisions: list[dict[str, str]]
    command: str | None = None
    path: str | None = None
    kind: ApprovalKind = "command"
    rule: str | None = None  # what "always, in this workspace" (decision 5) would allow: `pytest`, `npm run`


@dataclass(frozen=True)
class ApprovalResolved:
    """How a question was decided, `by` "user" (an `Answer`), "policy" (--yes, or nobody can be
    asked), "session" (an "always" given earlier; no `ApprovalRequested` precedes it), or
    "interrupt" (the turn was interrupted)."""

    type: ClassVar[str] = "approval_done"
    id: str
    call_id: str
    decision: Decision
    reason: str
    by: ResolvedBy


@dataclass(frozen=True)
class CompactionStarted:
    """Older turns are being summarised."""

    type: ClassVar[str] = "compaction_started"
    items: int


@dataclass(frozen=True)
class CompactionDone:
    type: ClassVar[str] = "compaction_done"
    status: CompactionStatus
    message: str = ""
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class UsageReported:
    """What the last response cost, and the session so far."""

    type: ClassVar[str] = "usage"
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning_tokens: int
    context_tokens: int
    budget_tokens: int
    cost_usd: float | None = None
    session_cost_usd: float | None = None


@dataclass(frozen=True)
class Notice:
    """Something worth a line: `kind` "retry", "info", "warning" or "context". A retry also says
    when and how often (`delay`, `attempt`, `max_attempts`, `error_kind`)."""

    type: ClassVar[str] = "notice"
    message: str
    kind: NoticeKind = "info"
    delay: float | None = None
    attempt: int | None = None
    max_attempts: int | None = None
    error_kind: ErrorKind | None = None


@dataclass(frozen=True)
class Error:
    """The turn cannot go on; `kind` names the cause."""

    type: ClassVar[str] = "error"
    message: str
    kind: ErrorKind


@dataclass(frozen=True)
class Aborted:
    """The user interrupted the turn."""

    type: ClassVar[str] = "aborted"
    reason: str


@dataclass(frozen=True)
class Done:
    """The task ended: "ok", "error", "step_limit" or "aborted"."""

    type: ClassVar[str] = "done"
    status: TaskStatus
    text: str
    steps: int


@dataclass(frozen=True)
class CheckpointMade:
    """A turn's changes to these files were recorded; /undo can put them back."""

    type: ClassVar[str] = "checkpoint"
    turn: int
    source: str
    paths: list[str]
    not_restorable: list[str]


@dataclass(frozen=True)
class Undone:
    """/undo put these turns' files back; `not_restored` lists {"path", "why"}."""

    type: ClassVar[str] = "undo"
    turns: list[int]
    restored: list[str]
    not_restored: list[dict[str, str]]


@dataclass(frozen=True)
class JobStarted:
    """The runtime began a job: `kind` "task" (a prompt) or "command" (a slash command)."""

    type: ClassVar[str] = "job_started"
    kind: Literal["task", "command"]
    text: str  # the prompt, or the slash command's name
    op_id: str = ""  # the `id` of the op that started it


@dataclass(frozen=True)
class JobEnded:
    """The runtime finished a job and takes the next one."""

    type: ClassVar[str] = "job_ended"
    kind: Literal["task", "command"]
    op_id: str = ""


@dataclass(frozen=True)
class InternalError:
    """A bug: the job failed with an exception the core did not expect. The runtime goes on."""

    type: ClassVar[str] = "internal_error"
    message: str
    trace: str = ""  # published empty (see `publish`)


Event = Union[  # noqa: UP007 - the union is read at run time (schema, from_wire)
    SessionOpened, TurnStarted, RequestSent, FirstByte, ReasoningDelta, ReasoningDone, TextDelta, TextDone,
    ToolStarted, ToolOutput, ToolFinished, ApprovalRequested, ApprovalResolved, CompactionStarted,
    CompactionDone, UsageReported, Notice, Error, Aborted, Done, CheckpointMade, Undone, JobStarted,
    ModeChanged, ModelChanged, ContextReport, SessionsListed, SessionSwitched, Compacted, DiffShown,
    UndoFinished, McpReport, McpChanged, CommandFailed, JobEnded, InternalError,
]
EVENT_TYPES: dict[str, type] = {cls.type: cls for cls in typing.get_args(Event)}
Emit = Callable[[Event], None]


def discard(event: Event) -> None:
    """An emitter that shows nothing (for compaction requests and tests)."""


def fields_of(event: Event) -> dict[str, Any]:
    """The event's fields as a dict (shallow: lists and dicts are the event's own)."""
    return {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}


def to_wire(event: Event) -> dict[str, Any]:
    """The event as JSON: type and protocol version first, then every field (rows as objects)."""
    return {"type": event.type, "v": PROTOCOL_VERSION, **{k: _plain(v) for k, v in fields_of(event).items()}}


# -- the published stream: a projection of the events -------------------------------------------
# Bookkeeping of the runtime (jobs) and of the HTTP client (requests, first bytes): no part of what a
# task did, and free to change with the code.
INTERNAL: tuple[type, ...] = (RequestSent, FirstByte, JobStarted, JobEnded)
PUBLISHED: tuple[type, ...] = tuple(cls for cls in typing.get_args(Event) if cls not in INTERNAL)
# Fields published empty: a traceback shows the code's insides and the machine's paths (the field stays,
# empty, for the readers of version 1, which required it).
_KEPT_INSIDE: dict[type, dict[str, Any]] = {InternalError: {"trace": ""}}


def publish(event: Event) -> dict[str, Any] | None:
    """The `--json` line of `event`, or None for an internal one."""
    if isinstance(event, INTERNAL):
        return None
    return to_wire(dataclasses.replace(event, **_KEPT_INSIDE.get(type(event), {})))


def _plain(value: Any) -> Any:
    if isinstance(value, list) and value and dataclasses.is_dataclass(value[0]):
        return [dataclasses.asdict(row) for row in value]
    return value


def from_wire(data: dict[str, Any]) -> Event:
    """The event a wire dict describes; ValueError for an unknown type or wrong fields."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown event type {data.get('type')!r}")
    if data.get("v") not in READ_VERSIONS:
        raise ValueError(f"protocol version {data.get('v')!r}; this build reads {READ_VERSIONS}")
    try:
        return _decode(cls, {k: v for k, v in data.items() if k not in ("type", "v")})
    except TypeError as exc:
        raise ValueError(f"{cls.type}: {exc}") from None


def _decode(hint: Any, value: Any) -> Any:
    """`value` from JSON as `hint` says: the rows inside an event become their dataclasses again."""
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        hints = typing.get_type_hints(hint)
        return hint(**{k: _decode(hints.get(k, Any), v) for k, v in value.items()})
    if typing.get_origin(hint) is list and isinstance(value, list):
        (item,) = typing.get_args(hint) or (Any,)
        return [_decode(item, v) for v in value]
    return value


# -- ops: a front end to the core ----------------------------------------------------------------
# Every op has an `id`: the front end may set one; the runtime gives one to an op sent without
# (`Runtime.send` returns it), and the events the op causes carry it as `op_id`.
@dataclass(frozen=True)
class Submit:
    """Run a task (a prompt) in the current session."""

    text: str
    id: str = ""


@dataclass(frozen=True)
class Answer:
    """Answer the approval with this id."""

    approval_id: str
    decision: Decision
    reason: str = ""


@dataclass(frozen=True)
class Interrupt:
    """Stop the running job (the stream is closed, commands' process trees are ended)."""

    reason: str = "interrupted by the user"


@dataclass(frozen=True)
class Shutdown:
    """Finish: no more jobs are taken, the session is closed."""


Op = Union[Submit, CommandOp, Answer, Interrupt, Shutdown]  # noqa: UP007


# -- the JSON Schema of the wire form ------------------------------------------------------------
def _json_type(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin is Literal:
        return {"enum": list(typing.get_args(hint))}
    if dataclasses.is_dataclass(hint):
        return _object(hint, {}, [])
    if origin in (Union, types.UnionType):
        options = [_json_type(arg) for arg in typing.get_args(hint)]
        return {"anyOf": options}
    if hint is type(None):
        return {"type": "null"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is str:
        return {"type": "string"}
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return {"type": "array", "items": _json_type(item)}
    if origin is dict:
        _, value = typing.get_args(hint) or (str, Any)
        return {"type": "object", "additionalProperties": _json_type(value)}
    if hint is dict:
        return {"type": "object"}
    return {}  # Any


def _object(cls: type, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The schema of one dataclass (an event, or a row inside one), after `props`/`required` given."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        props[f.name] = _json_type(hints[f.name])
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return {"title": cls.__name__, "description": (cls.__doc__ or "").split("\n")[0],
            "type": "object", "properties": props, "required": required, "additionalProperties": False}


def schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) for one line of `--one --json`: exactly one published event kind."""
    variants = [_object(cls, {"type": {"const": cls.type}, "v": {"const": PROTOCOL_VERSION}}, ["type", "v"])
                for cls in PUBLISHED]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "deepseek-agent/events.schema.json",
            "title": f"deepseek-agent --json event stream, protocol version {PROTOCOL_VERSION}",
            "oneOf": variants}
