"""The item model: what a conversation is made of, in the Responses API's vocabulary.

The journal stores these items exactly as they happened; the request builder turns them into
Responses `input` items. Every item can round-trip through JSON (`to_record` / `item_from_record`)
so that a session can be resumed from its journal.

A tool result's `ToolOutcome` holds typed facts for shaping and display (the tool's name, the path a
`read_file` touched, the content hash it saw, the archive id of a shell output...). It is never sent to
the provider.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal

# How a tool call ended: "interrupted" when the user stopped the turn before or while it ran.
OutcomeStatus = Literal["ok", "error", "refused", "interrupted"]


@dataclass
class UserMessage:
    """A message the user typed (pinned: never dropped by shaping)."""

    text: str
    kind: ClassVar[str] = "user"

    def to_input(self) -> dict[str, Any]:
        return {"role": "user", "content": self.text}


@dataclass
class AssistantMessage:
    """Text the model wrote. `status`: "completed", "incomplete" (the stream broke or the server cut it
    off) or "interrupted" (the user stopped it)."""

    text: str
    status: str = "completed"
    kind: ClassVar[str] = "assistant"

    def to_input(self) -> dict[str, Any]:
        # The easy form: accepted by DeepSeek, OpenAI and llama.cpp alike (no id/status needed).
        return {"type": "message", "role": "assistant", "content": self.text}


@dataclass
class Reasoning:
    """A reasoning item. DeepSeek needs it replayed before the calls of the same turn.

    `text` is the raw chain of thought (DeepSeek's `reasoning_text`), `summary` the summary text
    (OpenAI's `summary_text`); `encrypted_content` is opaque and replayed untouched.
    """

    id: str
    text: str = ""
    summary: str = ""
    encrypted_content: str | None = None
    kind: ClassVar[str] = "reasoning"

    def to_input(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": self.id,
            "summary": [{"type": "summary_text", "text": self.summary}] if self.summary else [],
        }
        if self.text:
            item["content"] = [{"type": "reasoning_text", "text": self.text}]
        if self.encrypted_content is not None:
            item["encrypted_content"] = self.encrypted_content
        return item


@dataclass
class FunctionCall:
    """A tool call the model made; `arguments` is the raw JSON string as the model wrote it."""

    call_id: str
    name: str
    arguments: str
    kind: ClassVar[str] = "function_call"

    def to_input(self) -> dict[str, Any]:
        return {"type": "function_call", "call_id": self.call_id, "name": self.name, "arguments": self.arguments}


@dataclass
class ToolOutcome:
    """What is known about a tool result besides its text: read by the context shaper (what a result
    was, so it can be cleared, superseded or cut with a pointer back) and by the front ends. Each
    tool fills the fields that apply to it; the rest keep their empty defaults."""

    tool: str = ""
    status: OutcomeStatus = "ok"
    command: str = ""  # run_shell: the command line
    exit_code: int | None = None
    archive: str = ""  # run_shell, read_output, a long MCP result: the id of the full output
    sandbox: str = ""  # run_shell: the backend that confined it ("none" when it ran unconfined)
    sandbox_blocked: str = ""  # run_shell: what the sandbox blocked, when it did
    pruned_from: int | None = None  # run_shell: characters before and after pruning
    pruned_to: int | None = None
    path: str = ""  # the file tools: the workspace-relative path
    offset: int | None = None  # read_file: the first line shown (1-based) and how many were asked for
    limit: int | None = None
    total_lines: int | None = None
    sha: str = ""  # read_file, write_file, the edits: the file's content hash afterwards
    server: str = ""  # an MCP tool: its server
    fingerprint: str = ""  # the normalised hash of the result, for judging repeats (core.context.repeats)

    def to_record(self) -> dict[str, Any]:
        """The journal form: only the fields that say something."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) != f.default}

    @classmethod
    def from_record(cls, record: object) -> ToolOutcome:
        """Rebuild from the journal form (older journals' `meta` too); unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        given = record if isinstance(record, dict) else {}
        return cls(**{k: v for k, v in given.items() if k in known and v is not None})


@dataclass
class FunctionCallOutput:
    """The result of a tool call: `output` is the text the model sees, `outcome` the facts beside it."""

    call_id: str
    output: str
    outcome: ToolOutcome = field(default_factory=ToolOutcome)
    kind: ClassVar[str] = "function_call_output"

    def to_input(self) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": self.call_id, "output": self.output}


@dataclass
class Summary:
    """A compaction summary that stands in for an older span of the conversation.

    Sent as a user-role message so every server accepts it; the text is visibly marked.
    """

    text: str
    kind: ClassVar[str] = "summary"

    def to_input(self) -> dict[str, Any]:
        return {"role": "user", "content": self.text}


Item = UserMessage | AssistantMessage | Reasoning | FunctionCall | FunctionCallOutput | Summary

_KINDS: dict[str, type] = {
    cls.kind: cls for cls in (UserMessage, AssistantMessage, Reasoning, FunctionCall, FunctionCallOutput, Summary)
}


def to_record(item: Item) -> dict[str, Any]:
    """The journal form of an item: its fields plus a `kind` discriminator."""
    if isinstance(item, FunctionCallOutput):
        return {"kind": item.kind, "call_id": item.call_id, "output": item.output, "outcome": item.outcome.to_record()}
    return {"kind": item.kind, **asdict(item)}


def item_from_record(record: dict[str, Any]) -> Item:
    """Rebuild an item from its journal form; unknown keys are ignored (newer journals)."""
    cls = _KINDS.get(record.get("kind", ""))
    if cls is None:
        raise ValueError(f"unknown item kind {record.get('kind')!r}")
    if cls is FunctionCallOutput:
        outcome = ToolOutcome.from_record(record.get("outcome", record.get("meta")))
        return FunctionCallOutput(str(record.get("call_id", "")), str(record.get("output", "")), outcome)
    known = cls.__dataclass_fields__
    return cls(**{k: v for k, v in record.items() if k in known and k != "kind"})
