"""Journals of realistic turns for the context shaper's tests, and a summariser that answers from a
script: what tests of the shaper and of its wording share."""

from __future__ import annotations

import json

from core.context import ContextManager, ContextSettings, Shaped
from core.session.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    ToolOutcome,
    UserMessage,
)

# budget 10k tokens: trigger 8k, target 5k, protected window 2k
SMALL = ContextSettings(context_window=10_000, max_output_tokens=0, working_budget=None, safety_margin=0.0)
INSTRUCTIONS = "You are a coding agent."
TASK = "Port the parser to Rust. Use cargo nextest, never cargo test."


class Journal:
    """Builds a journal of realistic turns: reasoning, then calls, then their outputs."""

    def __init__(self) -> None:
        self.items: list[Item] = [UserMessage(TASK)]
        self.calls = 0

    def turn(self, *calls: tuple[str, dict, str, dict], text: str = "") -> list[Item]:
        start = len(self.items)
        self.items.append(Reasoning(id=f"rs{start}", text="Thinking about the next step."))
        if text:
            self.items.append(AssistantMessage(text))
        outputs = []
        for name, args, output, facts in calls:
            self.calls += 1
            cid = f"call_{self.calls}"
            self.items.append(FunctionCall(cid, name, json.dumps(args)))
            outputs.append(FunctionCallOutput(cid, output, ToolOutcome(tool=name, **facts)))
        self.items += outputs
        return self.items[start:]

    def read(
        self, path: str, chars: int = 4_000, sha: str = "sha-1", offset: int = 1, limit: int = 2000
    ) -> list[Item]:
        facts = {"path": path, "offset": offset, "limit": limit, "sha": sha}
        return self.turn(("read_file", {"path": path}, f"{path} " + "x" * chars, facts))

    def edit(self, path: str) -> list[Item]:
        args = {"path": path, "old_text": "a", "new_text": "b"}
        return self.turn(("edit_file", args, f"Edited {path}: replaced 1 occurrence.", {"path": path}))

    def write(self, path: str, chars: int) -> list[Item]:
        args = {"path": path, "content": "y" * chars}
        return self.turn(("write_file", args, f"Wrote {chars} bytes to {path}.", {"path": path}))

    def shell(self, command: str, chars: int = 2_000, archive: str | None = "out-1") -> list[Item]:
        facts = {"command": command, "archive": archive or ""}
        return self.turn(("run_shell", {"command": command}, "z" * chars, facts))


class Scripted:
    """A summariser that answers from a script: a text is returned, an exception raised."""

    def __init__(self, *script: str | Exception) -> None:
        self.script, self.calls = list(script), 0

    def __call__(self, items: list[Item]) -> str:
        step = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        if isinstance(step, Exception):
            raise step
        return step


def shape_until_it_acts(j: Journal, manager: ContextManager, force: bool = False) -> Shaped:
    for n in range(200):
        j.write(f"src/gen{n}.rs", 3_000)
        shaped = manager.shape(j.items, INSTRUCTIONS, force=force)
        if shaped.actions:
            return shaped
    raise AssertionError("shaping never acted")
