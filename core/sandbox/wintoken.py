"""Windows confinement an unprivileged process can give its commands: a low-integrity token.

The command runs with a restricted copy of the agent's own token (every privilege but
SeChangeNotify removed, Administrators deny-only) at low integrity (S-1-16-4096). Windows' mandatory integrity policy then
keeps it from writing any object labelled above low: everything the user owns is medium unless
labelled otherwise. The policy's writable folders (the workspace, the temp folder, the user's
extra folders) get a low "no write up" label that their files inherit. Reads are not limited, nor
is the network.

CreateProcessAsUserW takes a restricted copy of the caller's own token without any privilege
(CreateProcessWithTokenW would need SeImpersonate), and subprocess.Popen cannot pass a token:
`TokenPopen` is a Popen whose process is started that way, with the pipes, handle, wait and kill
of any Popen, so a Job Object holds it as it holds any command.

Labels are not reverted: a folder once labelled low stays writable by low-integrity programs.
Imported on Windows only (the probe and tests import it elsewhere to say it is not there).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from ctypes import wintypes
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.i18n import N_, Deferred

LOW_INTEGRITY = "S-1-16-4096"
ADMINISTRATORS = "S-1-5-32-544"
# A mandatory label: low integrity, inherited by files and folders, no write from below.
LOW_LABEL = "S:(ML;OICI;NW;;;LW)"
MEDIUM_LABEL = "S:(ML;OICI;NW;;;ME)"
PROBE_TIMEOUT_SECONDS = 30.0

_TOKEN_ALL_ACCESS = 0xF01FF
_DISABLE_MAX_PRIVILEGE = 0x1
_TOKEN_INTEGRITY_LEVEL = 25
_SE_GROUP_INTEGRITY = 0x20
_SE_FILE_OBJECT = 1
_LABEL_SECURITY_INFORMATION = 0x10
_SDDL_REVISION_1 = 1
_STARTF_USESTDHANDLES = 0x100
_CREATE_UNICODE_ENVIRONMENT = 0x400
_EXTENDED_STARTUPINFO_PRESENT = 0x80000
_PROC_THREAD_ATTRIBUTE_HANDLE_LIST = 0x20002
_HANDLE, _DWORD, _BOOL, _PVOID = wintypes.HANDLE, wintypes.DWORD, wintypes.BOOL, ctypes.c_void_p


class _SidAndAttributes(ctypes.Structure):
    _fields_ = [("Sid", _PVOID), ("Attributes", _DWORD)]


class _MandatoryLabel(ctypes.Structure):
    _fields_ = [("Label", _SidAndAttributes)]


class _StartupInfo(ctypes.Structure):
    _fields_ = [("cb", _DWORD), ("lpReserved", wintypes.LPWSTR), ("lpDesktop", wintypes.LPWSTR),
                ("lpTitle", wintypes.LPWSTR), *((name, _DWORD) for name in (
                    "dwX", "dwY", "dwXSize", "dwYSize", "dwXCountChars", "dwYCountChars", "dwFillAttribute",
                    "dwFlags")),
                ("wShowWindow", wintypes.WORD), ("cbReserved2", wintypes.WORD), ("lpReserved2", _PVOID),
                ("hStdInput", _HANDLE), ("hStdOutput", _HANDLE), ("hStdError", _HANDLE)]


class _StartupInfoEx(ctypes.Structure):
    _fields_ = [("StartupInfo", _StartupInfo), ("lpAttributeList", _PVOID)]


class _ProcessInformation(ctypes.Structure):
    _fields_ = [("hProcess", _HANDLE), ("hThread", _HANDLE), ("dwProcessId", _DWORD), ("dwThreadId", _DWORD)]


@lru_cache(maxsize=1)
def _api() -> tuple[Any, Any]:
    """kernel32 and advapi32, with the signatures this module calls them by."""
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)  # type: ignore[attr-defined]
    ref = ctypes.POINTER
    for dll, name, args, result in (
            (kernel32, "GetCurrentProcess", [], _HANDLE),
            (kernel32, "CloseHandle", [_HANDLE], _BOOL),
            (kernel32, "LocalFree", [_PVOID], _PVOID),
            (kernel32, "InitializeProcThreadAttributeList", [_PVOID, _DWORD, _DWORD, ref(ctypes.c_size_t)], _BOOL),
            (kernel32, "UpdateProcThreadAttribute", [_PVOID, _DWORD, ctypes.c_size_t, _PVOID, ctypes.c_size_t,
                                                     _PVOID, _PVOID], _BOOL),
            (kernel32, "DeleteProcThreadAttributeList", [_PVOID], None),
            (advapi32, "OpenProcessToken", [_HANDLE, _DWORD, ref(_HANDLE)], _BOOL),
            (advapi32, "CreateRestrictedToken", [_HANDLE, _DWORD, _DWORD, _PVOID, _DWORD, _PVOID, _DWORD, _PVOID,
                                                 ref(_HANDLE)], _BOOL),
            (advapi32, "ConvertStringSidToSidW", [wintypes.LPCWSTR, ref(_PVOID)], _BOOL),
            (advapi32, "ConvertSidToStringSidW", [_PVOID, ref(wintypes.LPWSTR)], _BOOL),
            (advapi32, "GetLengthSid", [_PVOID], _DWORD),
            (advapi32, "SetTokenInformation", [_HANDLE, ctypes.c_int, _PVOID, _DWORD], _BOOL),
            (advapi32, "GetTokenInformation", [_HANDLE, ctypes.c_int, _PVOID, _DWORD, ref(_DWORD)], _BOOL),
            (advapi32, "ConvertStringSecurityDescriptorToSecurityDescriptorW",
             [wintypes.LPCWSTR, _DWORD, ref(_PVOID), _PVOID], _BOOL),
            (advapi32, "GetSecurityDescriptorSacl", [_PVOID, ref(_BOOL), ref(_PVOID), ref(_BOOL)], _BOOL),
            (advapi32, "SetNamedSecurityInfoW", [wintypes.LPCWSTR, ctypes.c_int, _DWORD, _PVOID, _PVOID, _PVOID,
                                                 _PVOID], _DWORD),
            (advapi32, "CreateProcessAsUserW", [_HANDLE, wintypes.LPCWSTR, wintypes.LPWSTR, _PVOID, _PVOID, _BOOL,
                                                _DWORD, _PVOID, wintypes.LPCWSTR, _PVOID,
                                                ref(_ProcessInformation)], _BOOL)):
        function = getattr(dll, name)
        function.argtypes, function.restype = args, result
    return kernel32, advapi32


def _check(ok: Any, what: str) -> None:
    if not ok:
        error = ctypes.get_last_error()  # type: ignore[attr-defined]
        raise ctypes.WinError(error, f"{what} failed: {ctypes.FormatError(error).strip()}")  # type: ignore[attr-defined]


@contextmanager
def low_token(integrity: str = LOW_INTEGRITY) -> Iterator[int]:
    """A restricted copy of this process's token at `integrity` (a SID string), closed when the
    block ends."""
    kernel32, advapi32 = _api()
    own, restricted, sid, admins = _HANDLE(), _HANDLE(), _PVOID(), _PVOID()
    _check(advapi32.OpenProcessToken(kernel32.GetCurrentProcess(), _TOKEN_ALL_ACCESS, ctypes.byref(own)),
           "OpenProcessToken")
    try:
        _check(advapi32.ConvertStringSidToSidW(ADMINISTRATORS, ctypes.byref(admins)), "ConvertStringSidToSidW")
        # An elevated agent's Administrators membership becomes deny-only: it grants the command nothing.
        disabled = (_SidAndAttributes * 1)(_SidAndAttributes(admins, 0))
        _check(advapi32.CreateRestrictedToken(own, _DISABLE_MAX_PRIVILEGE, 1, disabled, 0, None, 0, None,
                                              ctypes.byref(restricted)), "CreateRestrictedToken")
        _check(advapi32.ConvertStringSidToSidW(integrity, ctypes.byref(sid)), "ConvertStringSidToSidW")
        label = _MandatoryLabel(_SidAndAttributes(sid, _SE_GROUP_INTEGRITY))
        _check(advapi32.SetTokenInformation(restricted, _TOKEN_INTEGRITY_LEVEL, ctypes.byref(label),
                                            ctypes.sizeof(label) + advapi32.GetLengthSid(sid)),
               "SetTokenInformation(TokenIntegrityLevel)")
        yield int(restricted.value or 0)
    finally:
        for handle in (own, restricted):
            if handle.value:
                kernel32.CloseHandle(handle)
        for allocated in (sid, admins):
            if allocated.value:
                kernel32.LocalFree(allocated)


def integrity_of(token: int) -> str:
    """The token's integrity level as a SID string ("S-1-16-4096" is low)."""
    kernel32, advapi32 = _api()
    needed = _DWORD()
    advapi32.GetTokenInformation(token, _TOKEN_INTEGRITY_LEVEL, None, 0, ctypes.byref(needed))
    buffer = ctypes.create_string_buffer(max(needed.value, ctypes.sizeof(_MandatoryLabel)))
    _check(advapi32.GetTokenInformation(token, _TOKEN_INTEGRITY_LEVEL, buffer, len(buffer), ctypes.byref(needed)),
           "GetTokenInformation(TokenIntegrityLevel)")
    text = wintypes.LPWSTR()
    _check(advapi32.ConvertSidToStringSidW(_MandatoryLabel.from_buffer(buffer).Label.Sid, ctypes.byref(text)),
           "ConvertSidToStringSidW")
    try:
        return str(text.value)
    finally:
        kernel32.LocalFree(text)


def label(path: Path, sddl: str = LOW_LABEL) -> None:
    """Give `path` the mandatory label in `sddl`; Windows passes it on to what the folder holds."""
    kernel32, advapi32 = _api()
    descriptor, sacl, present, defaulted = _PVOID(), _PVOID(), _BOOL(), _BOOL()
    _check(advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, _SDDL_REVISION_1,
                                                                        ctypes.byref(descriptor), None),
           "ConvertStringSecurityDescriptorToSecurityDescriptorW")
    try:
        _check(advapi32.GetSecurityDescriptorSacl(descriptor, ctypes.byref(present), ctypes.byref(sacl),
                                                  ctypes.byref(defaulted)), "GetSecurityDescriptorSacl")
        error = advapi32.SetNamedSecurityInfoW(str(path), _SE_FILE_OBJECT, _LABEL_SECURITY_INFORMATION, None, None,
                                               None, sacl)
        if error:
            raise ctypes.WinError(error, f"labelling {path} failed: {ctypes.FormatError(error).strip()}")  # type: ignore[attr-defined]
    finally:
        kernel32.LocalFree(descriptor)


_labelled: set[Path] = set()


class LabelError(subprocess.SubprocessError):
    """A writable folder could not be labelled (a FAT drive, a folder owned by someone else): the
    command cannot enter the sandbox, and nothing ran."""


def label_writable(folders: Iterable[Path]) -> None:
    """Label the folders a confined command may write, once per process (it walks their contents)."""
    for folder in folders:
        if folder not in _labelled:
            try:
                label(folder)
            except OSError as error:
                raise LabelError(str(error)) from None
            _labelled.add(folder)


def _environment_block(env: Mapping[str, str]) -> ctypes.Array:
    """The UTF-16 block CreateProcess wants: NAME=value entries sorted by name, ended by an empty one."""
    entries = [f"{name}={value}" for name, value in sorted(env.items(), key=lambda item: item[0].upper())]
    return ctypes.create_unicode_buffer("\0".join(entries) + "\0\0")


class TokenPopen(subprocess.Popen):
    """A Popen whose process runs with a restricted token at `integrity` (`low_token`): pipes,
    wait, poll and kill as for any Popen."""

    def __init__(self, args: Any, *, integrity: str, **kwargs: Any) -> None:
        self._integrity = integrity
        super().__init__(args, **kwargs)

    def _execute_child(self, args: Any, executable: Any, preexec_fn: Any, close_fds: bool, pass_fds: Any,
                       cwd: Any, env: Mapping[str, str] | None, startupinfo: Any, creationflags: int, shell: bool,
                       p2cread: Any, p2cwrite: Any, c2pread: Any, c2pwrite: Any, errread: Any, errwrite: Any,
                       *unused: Any) -> None:
        if shell or startupinfo is not None or pass_fds:
            raise ValueError("a confined command takes neither shell=True, a startupinfo nor pass_fds")
        command_line = args if isinstance(args, str) else subprocess.list2cmdline(args)
        kernel32, advapi32 = _api()
        info = _StartupInfoEx()
        info.StartupInfo.cb = ctypes.sizeof(info)
        inherited = self._filter_handle_list([int(h) for h in (p2cread, c2pwrite, errwrite) if h != -1])
        if -1 not in (p2cread, c2pwrite, errwrite):
            info.StartupInfo.dwFlags = _STARTF_USESTDHANDLES
            info.StartupInfo.hStdInput, info.StartupInfo.hStdOutput, info.StartupInfo.hStdError = (
                int(p2cread), int(c2pwrite), int(errwrite))
        handles = (_HANDLE * len(inherited))(*inherited)
        size = ctypes.c_size_t()
        flags = creationflags | _CREATE_UNICODE_ENVIRONMENT | _EXTENDED_STARTUPINFO_PRESENT
        kernel32.InitializeProcThreadAttributeList(None, 1, 0, ctypes.byref(size))
        attributes = ctypes.create_string_buffer(size.value)
        process = _ProcessInformation()
        try:
            _check(kernel32.InitializeProcThreadAttributeList(attributes, 1, 0, ctypes.byref(size)),
                   "InitializeProcThreadAttributeList")
            try:
                if inherited:  # only the standard handles reach the child, whatever else is inheritable now
                    _check(kernel32.UpdateProcThreadAttribute(attributes, 0, _PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                                                              handles, ctypes.sizeof(handles), None, None),
                           "UpdateProcThreadAttribute")
                    info.lpAttributeList = ctypes.cast(attributes, _PVOID)
                with low_token(self._integrity) as token:
                    _check(advapi32.CreateProcessAsUserW(
                        token, None if executable is None else os.fsdecode(executable),
                        ctypes.create_unicode_buffer(command_line), None, None, bool(inherited), flags,
                        None if env is None else _environment_block(env),
                        None if cwd is None else os.fsdecode(cwd), ctypes.byref(info), ctypes.byref(process)),
                        "CreateProcessAsUserW")
            finally:
                kernel32.DeleteProcThreadAttributeList(attributes)
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)  # type: ignore[attr-defined]
        self._child_created = True
        self._handle = subprocess.Handle(process.hProcess)  # type: ignore[attr-defined]
        self.pid = process.dwProcessId
        kernel32.CloseHandle(process.hThread)


def works() -> str:
    """Try it for real, once: a low-integrity command writes a file in a folder labelled low and
    one in a folder labelled medium. "" when only the first lands, else why this machine gives no
    confinement (under wine both land: it does not enforce integrity levels)."""
    folder = Path(tempfile.mkdtemp(prefix="agent-wintoken-"))
    inside, outside = folder / "inside", folder / "outside"
    try:
        inside.mkdir()
        outside.mkdir()
        unlabelled = _try_label({inside: LOW_LABEL, outside: MEDIUM_LABEL})
        with low_token() as token:
            level = integrity_of(token)
        shell = os.environ.get("COMSPEC") or r"C:\Windows\System32\cmd.exe"
        command = f'"{shell}" /d /s /c "(echo x>"{outside}\\probe") & (echo x>"{inside}\\probe")"'
        child = TokenPopen(command, integrity=LOW_INTEGRITY, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, creationflags=subprocess.CREATE_NO_WINDOW)
        try:
            child.communicate(timeout=PROBE_TIMEOUT_SECONDS)
        finally:
            child.kill()
        landed = (outside / "probe").exists(), (inside / "probe").exists()
    except (OSError, subprocess.SubprocessError) as error:
        return Deferred(N_("a low-integrity command could not be started here: {problem}"),
                        problem=str(error))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if landed[0]:
        return N_("integrity levels are not enforced here")
    if unlabelled:
        return unlabelled
    if level != LOW_INTEGRITY:
        return Deferred(N_("the restricted token is at integrity {level}, not low"), level=level)
    if not landed[1]:
        return N_("a low-integrity command cannot write a folder labelled for it here")
    return ""


def _try_label(labels: Mapping[Path, str]) -> str:
    """Label each folder; the first failure in words, "" when all took. The probe goes on after
    one: whether the outside write lands is what it must find out."""
    failed = ""
    for path, sddl in labels.items():
        try:
            label(path, sddl)
        except OSError as error:
            failed = failed or Deferred(N_("folders cannot be labelled for low integrity here: {problem}"),
                                        problem=error.strerror or str(error))
    return failed
