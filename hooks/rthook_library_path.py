"""PyInstaller runtime hook: the library path back to the user's, for every program the exe starts.

On Linux PyInstaller's bootloader points LD_LIBRARY_PATH at the exe's own libraries (libz, libffi,
libpython) and keeps the user's value in LD_LIBRARY_PATH_ORIG. This process's loader read it when it
started; a command the agent runs, git, an MCP server must find the system's libraries, as they
would outside the agent."""

import os
import sys

if sys.platform.startswith("linux"):
    _original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if _original is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = _original
