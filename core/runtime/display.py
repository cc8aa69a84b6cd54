"""What a front end needs of the engine to show what the runtime hands it, beyond the events
themselves: the one sanitiser, for text the front end draws of its own, and the gate's judgement of
one part of a command, so a long question can keep its risky parts in view. How it is shown is the
front end's."""

from __future__ import annotations

from pathlib import Path

from core.sanitize import defuse  # noqa: F401 - re-exported: the one sanitiser
from core.tools.safety import destructive_reason


def risky_alone(command: str, cwd: str = ".") -> bool:
    """True when the gate would ask for `command` (a line, or one segment of one) on its own."""
    return bool(command.strip()) and bool(destructive_reason(command, Path(cwd or ".")))
