"""The item model: what a conversation is made of, in the Responses API's vocabulary.

The journal stores these items exactly as they happened; the request builder turns them into
Responses `input` items. Every item can round-trip through JSON (`to_record` / `item_from_record`)
so that a session can be resumed from its journal.

`meta` holds facts for shaping and display (the tool's name, the path a `read_file` touched, the
content hash it saw, the archive id of a shell output...). It is never sent to the provider.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


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
class FunctionCallOutput:
    """The result of a tool call, as the model will see it.

    `meta` carries: `tool` (name), `status` ("ok" / "error"), and tool-specific facts used by the
    context shaper (for example `path`, `range`, `sha` for reads; `archive` for shell outputs).
    """

    call_id: str
    output: str
    meta: dict[str, Any] = field(default_factory=dict)
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
    return {"kind": item.kind, **asdict(item)}


def item_from_record(record: dict[str, Any]) -> Item:
    """Rebuild an item from its journal form; unknown keys are ignored (newer journals)."""
    cls = _KINDS.get(record.get("kind", ""))
    if cls is None:
        raise ValueError(f"unknown item kind {record.get('kind')!r}")
    fields = cls.__dataclass_fields__
    return cls(**{k: v for k, v in record.items() if k in fields and k != "kind"})
