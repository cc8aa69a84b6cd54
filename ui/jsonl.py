"""`--one --json`: every published event as one JSON line on stdout (`core.protocol.publish`: its type
and the protocol version first; internal events are left out; see docs/events.schema.json)."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from core import protocol as ev


class JsonEmitter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: ev.Event) -> None:
        line = ev.publish(event)
        if line is not None:
            self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
            self.out.flush()


if __name__ == "__main__":
    if sys.argv[1:] != ["--schema"]:
        sys.exit("usage: python3 -m ui.jsonl --schema   (prints the JSON Schema of the --json stream)")
    print(json.dumps(ev.schema(), indent=2, ensure_ascii=False))
