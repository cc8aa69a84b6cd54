"""The full-screen front end (prompt_toolkit + Rich).

Not built yet: it is its own issue. Until then `unavailable_reason()` says so and `agent.py` runs
the plain REPL instead. Importing this module also checks that rich and prompt_toolkit are there;
when they are not, `agent.py` falls back to plain mode rather than failing.
"""

from __future__ import annotations

import prompt_toolkit  # noqa: F401 - availability check
import rich  # noqa: F401 - availability check


def unavailable_reason() -> str | None:
    """Why the TUI cannot run here, or None when it can."""
    return "the full-screen TUI is not built yet"
