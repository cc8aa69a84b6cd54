"""`deepseek-agent sandbox-exec [SETTING=VALUE …] WORKSPACE -- PROGRAM ARGS…`: become PROGRAM inside
the sandbox (how MCP stdio servers start confined; core/sandbox/trampoline.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from core.sandbox.trampoline import SETTINGS, CannotStart, become

USAGE = "usage: deepseek-agent sandbox-exec [SETTING=VALUE …] WORKSPACE -- PROGRAM [ARGS…]"


def main(argv: list[str]) -> int:
    given = {}
    while argv and "=" in argv[0] and argv[0].split("=", 1)[0] in SETTINGS:
        name, _, value = argv.pop(0).partition("=")
        given[name] = value
    if len(argv) < 3 or argv[1] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        become(Path(argv[0]), argv[2:], given)
    except CannotStart as exc:
        print(f"sandbox-exec: {exc}", file=sys.stderr)
        return 127
    return 0
