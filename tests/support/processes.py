"""Whether a process by pid still runs, and ending one hard, on POSIX and Windows alike: os.kill
with signal 0 would end a Windows process (it becomes TerminateProcess), and Windows has no SIGKILL."""

from __future__ import annotations

import os
import signal
import sys

STILL_ACTIVE = 259
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000


def alive(pid: int) -> bool:
    if sys.platform != "win32":
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def kill_hard(pid: int) -> None:
    """SIGKILL; on Windows any other signal number is TerminateProcess, just as final."""
    os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
