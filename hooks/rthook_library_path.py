"""PyInstaller runtime hook: the library path back to the user's, for every program the exe starts,
and nothing left of what only the bootloader needed.

On Linux PyInstaller's bootloader points LD_LIBRARY_PATH at the exe's own libraries (libz, libffi,
libpython) and keeps the user's value in LD_LIBRARY_PATH_ORIG. This process's loader read it when it
started; a command the agent runs, git, an MCP server must find the system's libraries, as they
would outside the agent. DEEPSEEK_AGENT_RUNTIME_CHECKED is what the agent tells the exe it starts
inside its sandbox (hooks/bootloader/pyi_persistent.c), kept through the bootloader's restart; the
command that exe becomes must not inherit it."""

import os
import sys

if sys.platform.startswith("linux"):
    _original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if _original is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = _original
    os.environ.pop("DEEPSEEK_AGENT_RUNTIME_CHECKED", None)
