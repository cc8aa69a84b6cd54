"""Windows Job Objects: the process tree of one command, which Windows has no process group for.

`taskkill /T` walks parent process ids, so it misses a tree whose root has already exited (the
background job a shell left behind when it returned) and any process whose parent died. A job
holds every process the command starts, however they are related; made with
KILL_ON_JOB_CLOSE, it ends them all when it is terminated, and when its last handle closes, even
if the agent itself is killed. Imported on Windows only.
"""

from __future__ import annotations

import ctypes
import subprocess
from ctypes import wintypes
from functools import lru_cache
from typing import Any

_EXTENDED_LIMIT_INFORMATION = 9
_BASIC_ACCOUNTING_INFORMATION = 1
_KILL_ON_JOB_CLOSE = 0x2000


class _IoCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in
                ("ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
                 "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class _BasicLimits(ctypes.Structure):
    _fields_ = [("PerProcessUserTimeLimit", ctypes.c_longlong), ("PerJobUserTimeLimit", ctypes.c_longlong),
                ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD), ("SchedulingClass", wintypes.DWORD)]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [("BasicLimitInformation", _BasicLimits), ("IoInfo", _IoCounters),
                ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]


class _Accounting(ctypes.Structure):
    _fields_ = [("TotalUserTime", ctypes.c_longlong), ("TotalKernelTime", ctypes.c_longlong),
                ("ThisPeriodTotalUserTime", ctypes.c_longlong), ("ThisPeriodTotalKernelTime", ctypes.c_longlong),
                ("TotalPageFaultCount", wintypes.DWORD), ("TotalProcesses", wintypes.DWORD),
                ("ActiveProcesses", wintypes.DWORD), ("TotalTerminatedProcesses", wintypes.DWORD)]


@lru_cache(maxsize=1)
def _kernel32() -> Any:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    handle, info = wintypes.HANDLE, ctypes.c_void_p
    for name, args, result in (
            ("CreateJobObjectW", [ctypes.c_void_p, wintypes.LPCWSTR], handle),
            ("SetInformationJobObject", [handle, ctypes.c_int, info, wintypes.DWORD], wintypes.BOOL),
            ("QueryInformationJobObject", [handle, ctypes.c_int, info, wintypes.DWORD, ctypes.c_void_p],
             wintypes.BOOL),
            ("AssignProcessToJobObject", [handle, handle], wintypes.BOOL),
            ("TerminateJobObject", [handle, wintypes.UINT], wintypes.BOOL),
            ("CloseHandle", [handle], wintypes.BOOL)):
        function = getattr(kernel32, name)
        function.argtypes, function.restype = args, result
    return kernel32


class Job:
    """One command's processes. `add` right after the process starts: what it spawned before
    that instant is not in the job (a shell takes milliseconds to start its first child)."""

    def __init__(self) -> None:
        kernel32 = _kernel32()
        self._handle = kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise ctypes.WinError(ctypes.get_last_error())  # type: ignore[attr-defined]
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _KILL_ON_JOB_CLOSE
        if not kernel32.SetInformationJobObject(self._handle, _EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits),
                                                ctypes.sizeof(limits)):
            error = ctypes.get_last_error()  # type: ignore[attr-defined]
            self.close()
            raise ctypes.WinError(error)  # type: ignore[attr-defined]

    def add(self, proc: subprocess.Popen) -> bool:
        """Put the process in the job; False when Windows refuses (then taskkill is the fallback)."""
        handle = getattr(proc, "_handle", None)
        return bool(self._handle and handle and _kernel32().AssignProcessToJobObject(self._handle, int(handle)))

    def active(self) -> int:
        """How many of the job's processes are still running."""
        if not self._handle:
            return 0
        info = _Accounting()
        if not _kernel32().QueryInformationJobObject(self._handle, _BASIC_ACCOUNTING_INFORMATION, ctypes.byref(info),
                                                     ctypes.sizeof(info), None):
            return 0
        return int(info.ActiveProcesses)

    def terminate(self) -> None:
        """End every process in the job, at once (Windows has no SIGTERM to offer first)."""
        if self._handle:
            _kernel32().TerminateJobObject(self._handle, 1)

    def close(self) -> None:
        """Let the handle go; with KILL_ON_JOB_CLOSE whatever still runs in the job ends too."""
        if self._handle:
            _kernel32().CloseHandle(self._handle)
            self._handle = None
