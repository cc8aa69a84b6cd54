"""`--one --json`: every event as one JSON line on stdout, in the published wire form
(`core.protocol.to_wire`: its type and the protocol version first; see docs/events.schema.json)."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from core import protocol as ev


class JsonEmitter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: ev.Event) -> None:
        self.out.write(json.dumps(ev.to_wire(event), ensure_ascii=False) + "\n")
        self.out.flush()


if __name__ == "__main__":
    if sys.argv[1:] != ["--schema"]:
        sys.exit("usage: python3 -m ui.jsonl --schema   (prints the JSON Schema of the --json stream)")
    print(json.dumps(ev.schema(), indent=2, ensure_ascii=False))
