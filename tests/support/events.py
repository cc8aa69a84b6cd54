"""One recorder for the events a test collects: pass it wherever an emit callback goes, then ask
for the events of one type, typed, or for the order of their kinds."""

from __future__ import annotations

from typing import TypeVar

from core.protocol import Event, TextDelta

E = TypeVar("E", bound=Event)


class Recorder:
    """An emit callback that keeps every event, in order."""

    def __init__(self) -> None:
        self.all: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.all.append(event)

    def of(self, kind: type[E]) -> list[E]:
        return [event for event in self.all if isinstance(event, kind)]

    def kinds(self) -> list[str]:
        """Each event's wire type, in order."""
        return [event.type for event in self.all]

    def text(self) -> str:
        """The answer's text as it streamed."""
        return "".join(delta.delta for delta in self.of(TextDelta))
