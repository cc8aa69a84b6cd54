"""A heartbeat process: it rewrites a file every 0.1 s, so a test can see whether it still lives
(a process tree's grandchild that must end with its command or its session)."""

from __future__ import annotations

import time
from pathlib import Path

# Run as `python beat.py FILE`: writes a growing counter to FILE for two minutes.
BEAT = """import sys, time
for n in range(1200):
    with open(sys.argv[1], "w") as f:
        f.write(str(n))
    time.sleep(0.1)
"""


def beating(beat: Path, within: float = 30.0) -> bool:
    """Whether the heartbeat file is still being rewritten (it starts within `within` seconds)."""
    deadline = time.monotonic() + within
    while not beat.exists() or not beat.read_text():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    first = beat.read_text()
    time.sleep(1.5)
    return beat.read_text() != first
