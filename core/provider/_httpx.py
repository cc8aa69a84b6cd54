"""httpx without its command-line client.

httpx's package imports its CLI, and with it rich, pygments and click, whenever they are
installed. The agent never uses that CLI; keeping it out makes plain and one-shot start faster and
keeps them free of the TUI's libraries. A None entry in sys.modules makes that one import fail
cleanly, which httpx handles by design.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx  # noqa: E402

__all__ = ["httpx"]
