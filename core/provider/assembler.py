"""Turn a stream of Responses-API events into items, emitting what the user should see.

Tolerant by design (real servers deviate): dispatch is on the payload's `type`; unknown events are
ignored; `sequence_number`, `name` on `function_call_arguments.done` and the `.done` events
themselves are optional (llama.cpp sends no `arguments.done`); name and `call_id` come from
`output_item.added`/`.done`; items are keyed by `output_index`, falling back to `item_id`.
`output_item.done` and the terminal event's `output` are authoritative over the deltas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core import protocol as ev
from core.protocol import Emit
from core.provider.errors import ApiError, from_stream
from core.session.items import AssistantMessage, FunctionCall, Item, Reasoning


@dataclass
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def from_payload(cls, usage: Any) -> Usage | None:
        if not isinstance(usage, dict):
            return None

        def num(value: Any) -> int:
            return value if isinstance(value, int) else 0

        in_details = usage.get("input_tokens_details") or {}
        out_details = usage.get("output_tokens_details") or {}
        return cls(
            input_tokens=num(usage.get("input_tokens")),
            cached_tokens=num(in_details.get("cached_tokens")) if isinstance(in_details, dict) else 0,
            output_tokens=num(usage.get("output_tokens")),
            reasoning_tokens=num(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0,
        )


@dataclass
class TurnResult:
    """What one model response produced.

    `status` (the vocabulary of core/protocol.py): "ok", "incomplete" (cut off by the server; see
    `incomplete_reason`), "error" (see `error`) or "aborted" (the user interrupted). `items` are in replay order:
    reasoning, then text, then function calls. `emitted` tells whether anything reached the user.
    """

    items: list[Item] = field(default_factory=list)
    status: str = "ok"
    usage: Usage | None = None
    error: ApiError | None = None
    incomplete_reason: str = ""
    emitted: bool = False

    @property
    def calls(self) -> list[FunctionCall]:
        return [item for item in self.items if isinstance(item, FunctionCall)]

    @property
    def text(self) -> str:
        return "\n\n".join(item.text for item in self.items if isinstance(item, AssistantMessage) and item.text)


@dataclass
class _Building:
    """An output item while it streams."""

    index: int
    type: str
    id: str = ""
    call_id: str = ""
    name: str = ""
    text: str = ""
    reasoning: str = ""
    summary: list[str] = field(default_factory=list)
    arguments: str = ""
    encrypted_content: str | None = None
    done: bool = False
    status: str = "in_progress"
    _key: str = ""

    @property
    def key(self) -> str:
        """The id front ends tell streamed items apart by: the server's id, else type and position;
        fixed at first use so that a delta and its `_done` always agree."""
        if not self._key:
            self._key = self.id or f"{self.type}-{self.index}"
        return self._key

    def apply(self, item: dict[str, Any]) -> None:
        """Take the authoritative fields of an `output_item.added`/`.done` item."""
        self.id = str(item.get("id") or self.id)
        self.status = str(item.get("status") or self.status)
        if self.type == "function_call":
            self.call_id = str(item.get("call_id") or self.call_id or self.id)
            self.name = str(item.get("name") or self.name)
            if isinstance(item.get("arguments"), str) and item["arguments"]:
                self.arguments = item["arguments"]
        elif self.type == "message":
            parts = [p.get("text") or p.get("refusal") or "" for p in _parts(item.get("content"))]
            if any(parts):
                self.text = "".join(parts)
        elif self.type == "reasoning":
            texts = [p.get("text") or "" for p in _parts(item.get("content"))]
            if any(texts):
                self.reasoning = "".join(texts)
            summaries = [p.get("text") or "" for p in _parts(item.get("summary"))]
            if any(summaries):
                self.summary = summaries
            if item.get("encrypted_content") is not None:
                self.encrypted_content = str(item["encrypted_content"])

    def to_item(self, cut_off: bool = False) -> Item | None:
        if self.type == "message":
            if not self.text and cut_off:
                return None
            incomplete = cut_off or self.status == "incomplete"
            return AssistantMessage(text=self.text, status="incomplete" if incomplete else "completed")
        if self.type == "reasoning":
            return Reasoning(id=self.id or f"rs_{self.index}", text=self.reasoning,
                             summary="\n\n".join(s for s in self.summary if s),
                             encrypted_content=self.encrypted_content)
        if self.type == "function_call" and not cut_off and self.name:
            return FunctionCall(call_id=self.call_id or self.id or f"call_{self.index}", name=self.name,
                                arguments=self.arguments or "{}")
        return None


def _parts(value: Any) -> list[dict[str, Any]]:
    return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []


_ORDER = {"reasoning": 0, "message": 1, "function_call": 2}


class TurnAssembler:
    """Feed decoded event payloads with `handle()`; read `result()` at the end."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._items: dict[int, _Building] = {}
        self._by_id: dict[str, int] = {}
        self.result_ = TurnResult()
        self.terminal = False

    # -- public -------------------------------------------------------------------------
    def handle(self, payload: dict[str, Any]) -> bool:
        """Process one event; True once a terminal event arrived."""
        kind = payload.get("type")
        if kind is None and "error" in payload:
            kind = "error"  # llama.cpp ends a failed stream with a bare `data: {"error": ...}`
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, payload)
        return self.terminal

    def result(self, cut_off: bool = False) -> TurnResult:
        """The items so far. With `cut_off`, unfinished text is kept (marked incomplete) and
        unfinished calls are dropped: a half-written call must never be executed."""
        built = sorted(self._items.values(), key=lambda b: (_ORDER.get(b.type, 9), b.index))
        items = []
        for building in built:
            item = building.to_item(cut_off=cut_off and not building.done)
            if item is not None:
                items.append(item)
        self.result_.items = items
        return self.result_

    # -- helpers --------------------------------------------------------------------------
    def _say(self, event: ev.Event) -> None:
        self.result_.emitted = True
        self._emit(event)

    def _building(self, payload: dict[str, Any], kind: str) -> _Building:
        index = payload.get("output_index")
        if not isinstance(index, int):
            index = self._by_id.get(str(payload.get("item_id", "")), -1)
        if index not in self._items:
            # A delta for an item never announced (some servers skip `added`).
            index = index if index >= 0 else len(self._items)
            self._items[index] = _Building(index=index, type=kind, id=str(payload.get("item_id") or ""))
        return self._items[index]

    def _finish(self, building: _Building) -> None:
        if building.done:
            return
        building.done = True
        if building.type == "message":
            self._say(ev.TextDone(text=building.text, item_id=building.key))
        elif building.type == "reasoning" and (building.reasoning or building.summary):
            self._say(ev.ReasoningDone(text=building.reasoning or "\n\n".join(building.summary),
                                          item_id=building.key))

    # -- event handlers -------------------------------------------------------------------
    def _item_added(self, payload: dict[str, Any]) -> _Building | None:
        item = payload.get("item")
        if not isinstance(item, dict) or item.get("type") not in _ORDER:
            return None
        index = self._index_of(item, payload.get("output_index"))
        building = self._items.setdefault(index, _Building(index=index, type=item["type"]))
        building.apply(item)
        if building.id:
            self._by_id[building.id] = index
        return building

    def _item_done(self, payload: dict[str, Any]) -> None:
        building = self._item_added(payload)
        if building is not None:
            self._finish(building)

    def _index_of(self, item: dict[str, Any], index: Any) -> int:
        """Where an announced item belongs: its output_index, else the item it repeats, else new."""
        if isinstance(index, int):
            return index
        if item.get("id") and str(item["id"]) in self._by_id:
            return self._by_id[str(item["id"])]
        for building in self._items.values():
            if building.type == "function_call" and item.get("call_id") and building.call_id == item["call_id"]:
                return building.index
        return max(self._items, default=-1) + 1

    def _text_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, str) and delta:
            building = self._building(payload, "message")
            building.text += delta
            self._say(ev.TextDelta(delta=delta, item_id=building.key))

    def _text_done(self, payload: dict[str, Any]) -> None:
        text = payload.get("text", payload.get("refusal"))
        if isinstance(text, str):
            self._building(payload, "message").text = text

    def _reasoning_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, str) and delta:
            building = self._building(payload, "reasoning")
            building.reasoning += delta
            self._say(ev.ReasoningDelta(delta=delta, summary=False, item_id=building.key))

    def _reasoning_done(self, payload: dict[str, Any]) -> None:
        if isinstance(payload.get("text"), str):
            self._building(payload, "reasoning").reasoning = payload["text"]

    def _summary_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        building = self._building(payload, "reasoning")
        index = payload.get("summary_index", 0)
        index = index if isinstance(index, int) and index >= 0 else 0
        while len(building.summary) <= index:
            if building.summary:
                self._say(ev.ReasoningDelta(delta="\n\n", summary=True, item_id=building.key))
            building.summary.append("")
        building.summary[index] += delta
        self._say(ev.ReasoningDelta(delta=delta, summary=True, item_id=building.key))

    def _summary_done(self, payload: dict[str, Any]) -> None:
        text = payload.get("text")
        index = payload.get("summary_index", 0)
        if isinstance(text, str) and isinstance(index, int) and index >= 0:
            building = self._building(payload, "reasoning")
            while len(building.summary) <= index:
                building.summary.append("")
            building.summary[index] = text

    def _args_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, str):
            self._building(payload, "function_call").arguments += delta

    def _args_done(self, payload: dict[str, Any]) -> None:
        building = self._building(payload, "function_call")
        if isinstance(payload.get("arguments"), str):
            building.arguments = payload["arguments"]
        if payload.get("name"):
            building.name = str(payload["name"])

    def _terminal(self, payload: dict[str, Any]) -> None:
        self.terminal = True
        response = payload.get("response") if isinstance(payload.get("response"), dict) else {}
        self.result_.usage = Usage.from_payload(response.get("usage"))
        # Items the server never streamed (or only streamed in part) come from the final output.
        # Items already finished by `output_item.done` keep that version (OpenAI's encrypted reasoning
        # differs between the two, and `.done` is the one documented for replay).
        output = response.get("output")
        for position, item in enumerate(output if isinstance(output, list) else []):
            if isinstance(item, dict):
                known = self._by_id.get(str(item.get("id") or ""))
                index = position if known is None else known
                if not (index in self._items and self._items[index].done):
                    self._item_done({"item": item, "output_index": index})
        for building in self._items.values():
            self._finish(building)
        kind = payload.get("type")
        status = str(response.get("status") or "")
        if kind == "response.failed" or status == "failed":
            self.result_.status = "error"
            self.result_.error = from_stream(response.get("error") or {})
        elif kind == "response.incomplete" or status == "incomplete":
            self.result_.status = "incomplete"
            details = response.get("incomplete_details") or {}
            self.result_.incomplete_reason = str(details.get("reason") or "unknown") if isinstance(
                details, dict) else "unknown"

    def _error(self, payload: dict[str, Any]) -> None:
        self.terminal = True
        self.result_.status = "error"
        self.result_.error = from_stream(payload)


_HANDLERS = {
    "response.output_item.added": TurnAssembler._item_added,
    "response.output_item.done": TurnAssembler._item_done,
    "response.output_text.delta": TurnAssembler._text_delta,
    "response.refusal.delta": TurnAssembler._text_delta,
    "response.output_text.done": TurnAssembler._text_done,
    "response.refusal.done": TurnAssembler._text_done,
    "response.reasoning_text.delta": TurnAssembler._reasoning_delta,
    "response.reasoning_text.done": TurnAssembler._reasoning_done,
    "response.reasoning_summary_text.delta": TurnAssembler._summary_delta,
    "response.reasoning_summary_text.done": TurnAssembler._summary_done,
    "response.function_call_arguments.delta": TurnAssembler._args_delta,
    "response.function_call_arguments.done": TurnAssembler._args_done,
    "response.completed": TurnAssembler._terminal,
    "response.incomplete": TurnAssembler._terminal,
    "response.failed": TurnAssembler._terminal,
    "error": TurnAssembler._error,
}
