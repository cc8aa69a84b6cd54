"""Landlock through ctypes: a ruleset built in the agent, applied in the child just before exec.

The ruleset (and every O_PATH descriptor its rules need) is built in the parent, where it may take
its time and raise ordinary errors; the child only calls `prctl(PR_SET_NO_NEW_PRIVS)` and
`landlock_restrict_self`, two system calls with no allocation, so `preexec_fn` stays safe in a
process with threads. Landlock binds the command and everything it starts, and cannot be undone.

Landlock only allows. Reading is granted on "/" except the denied places and the hidden folders
(the home folders, the workspace's parent), and then on what the policy lets commands read inside
those: a grant whose folder holds a denied or hidden path is split into its entries, recursively
along that path, so it gets no rule at all (`split_grants`). The folders on the way keep listing:
names in the home folder can be listed, their contents not read. Rules attach to inodes, so renaming or hard-linking a
denied file does not make it readable (linking across folders needs REFER, which the kernel only
allows when the target gains no right).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.network.door import Door
from core.sandbox import caps, mountns, seccomp
from core.sandbox.policy import Policy

# System call numbers: the same on every architecture that has Landlock (the generic table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights, by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
# The only rights a rule on a file (not a folder) may carry.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
DEVICE = READ_FILE | WRITE_FILE | IOCTL_DEV | TRUNCATE


def fs_rights(abi: int) -> int:
    """Every filesystem right the running kernel's ABI knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True) if platform.system() == "Linux" else None
if _libc is not None:
    _libc.syscall.restype = ctypes.c_long
    _libc.prctl.restype = ctypes.c_int


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (or it is disabled)."""
    if _libc is None:
        return 0
    version = _libc.syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0),
                            ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


@dataclass(frozen=True)
class Grant:
    path: Path
    rights: int


def split_grants(grants: list[Grant], denied: list[Path]) -> list[Grant]:
    """The grants, with every folder that holds a denied path replaced by its other entries.

    The folder itself keeps every right but reading and executing files, so the denied path gets
    no readable rule; inside a writable folder it stays writable (the user made that folder the
    workspace), and an entry made there during the command can be written but not read until
    the next command, whose rules list it. Symlinked entries are left out: access through them is
    checked on their target's own path."""
    out: list[Grant] = []
    for grant in grants:
        out.extend(_split(grant.path, grant.rights, denied))
    return out


def _split(path: Path, rights: int, denied: list[Path]) -> Iterator[Grant]:
    if any(path == d or path.is_relative_to(d) for d in denied):
        return
    inside = [d for d in denied if d.is_relative_to(path)]
    if not inside:
        yield Grant(path, rights)
        return
    yield Grant(path, rights & ~(READ_FILE | EXECUTE))
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():
            continue
        yield from _split(Path(entry.path), rights, denied)


def _add_rules(ruleset: int, grants: list[Grant], handled: int) -> None:
    for grant in grants:
        try:
            fd = os.open(grant.path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # gone since it was listed, or unreachable: no rule, so no access
        try:
            rights = grant.rights & handled
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= FILE_RIGHTS
            if not rights:
                continue
            attr = _PathBeneathAttr(rights, fd)
            if _libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                             ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"landlock_add_rule({grant.path}): {os.strerror(err)}")
        finally:
            os.close(fd)


def _attr_size(version: int) -> int:
    """How much of the ruleset attribute this ABI reads: fs; + net (ABI 4); + scoped (ABI 6)."""
    return 8 if version < 4 else 16 if version < 6 else 24


def network_namespace(policy: Policy) -> bool:
    """Whether a command under `policy` gets a network namespace of its own (the proxied network,
    or none at all, where the kernel lets the agent make one)."""
    own_pids = mountns.available() and mountns.available(own_pids=True)
    return (policy.proxied or not policy.network) and mountns.available(own_pids=own_pids, own_net=True)


@contextmanager
def ruleset(policy: Policy, version: int, door: Door | None = None) -> Iterator[Callable[[], None]]:
    """A Landlock ruleset for `policy`, and the function the child calls before exec to enter it.
    With the proxied network the child enters a network namespace whose only way out is `door`;
    where it cannot have one, TCP connections go only to the proxy's port (ABI 4).

    The ruleset's descriptor is closed when the block ends (it is close-on-exec, so the command
    never holds it)."""
    if _libc is None or version < 1:
        raise OSError(errno.ENOSYS, "this kernel has no Landlock")
    handled = fs_rights(version)
    attr = _RulesetAttr(handled, 0, 0)
    own_net = network_namespace(policy)
    proxy_port = door.port if door is not None and policy.proxied and not own_net else 0
    if (not policy.network or (policy.proxied and not own_net)) and version >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # no port rule: every port denied
        if proxy_port:
            attr.handled_access_net = NET_CONNECT_TCP  # binding stays free: servers the command starts
    if version >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    fd = _libc.syscall(ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(_attr_size(version)),
                       ctypes.c_uint32(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        grants = split_grants([Grant(Path("/"), READ)], [*policy.denied, *policy.hidden])
        granted = [Grant(p, READ) for p in policy.readable]
        granted += [Grant(p, handled & ~(MAKE_CHAR | MAKE_BLOCK)) for p in policy.writable]
        granted += [Grant(p, DEVICE) for p in policy.devices]
        in_namespace = mountns.available()
        own_pids = in_namespace and mountns.available(own_pids=True)
        _add_rules(fd, grants + split_grants(granted, list(policy.denied)), handled)
        if proxy_port:
            _add_port_rule(fd, proxy_port)
        filter_in = seccomp.installer(_libc, unix_sockets=bool(policy.sockets))
        net_step = (door or Door(None)).child_step(_libc) if own_net else None  # no door: no way out
        bind = (_in_namespace(fd, policy, handled & ~(MAKE_CHAR | MAKE_BLOCK), own_pids, net_step) if in_namespace
                else (lambda: True))
        # raw sockets go around Landlock's TCP rules; in a namespace of its own they reach nothing
        raw = policy.network and (own_net or not policy.proxied)
        yield _enter(fd, bind, caps.dropper(_libc, raw), filter_in or (lambda: True))
    finally:
        os.close(fd)


def _add_port_rule(ruleset: int, port: int) -> None:
    attr = _NetPortAttr(NET_CONNECT_TCP, port)
    if _libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_NET_PORT),  # type: ignore[union-attr]
                     ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_add_rule(port {port}): {os.strerror(err)}")


def _in_namespace(fd: int, policy: Policy, rights: int, own_pids: bool,
                  own_net: Callable[[], bool] | None = None) -> Callable[[], bool]:
    """The mount namespace (`core.sandbox.mountns`), then rules letting the command write the empty
    /dev/shm it mounted, use its own devpts and read its own /proc: added in the child, since the
    new mounts' roots do not exist before (a rule on the folder a mount covers does not reach
    through it)."""
    own_pts = ctypes.c_int(0)
    bind = mountns.binder(_libc, policy.protected, policy.pinned, own_pts, own_pids, own_net)  # type: ignore[arg-type]
    syscall, open_, close = _libc.syscall, _libc.open, _libc.close  # type: ignore[union-attr]
    add, ruleset_fd, kind, zero = (ctypes.c_long(_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                   ctypes.c_uint32(0))
    flags = ctypes.c_int(os.O_PATH | os.O_CLOEXEC)
    mounted = [(mountns.SHM, rights, False), (mountns.PTS, DEVICE | READ_DIR, True), (mountns.PTMX, DEVICE, True)]
    if own_pids:
        mounted.append((mountns.PROC, READ, False))
    rules = [(ctypes.c_char_p(os.fsencode(path)), _PathBeneathAttr(granted, -1), needs_pts)
             for path, granted, needs_pts in mounted]
    refs = [(path, attr, ctypes.byref(attr), needs_pts) for path, attr, needs_pts in rules]

    def enter_namespace() -> bool:
        if not bind():
            return False
        for path, attr, attr_ref, needs_pts in refs:
            if needs_pts and not own_pts.value:
                continue
            rule_fd = open_(path, flags)
            if rule_fd < 0:
                return False
            attr.parent_fd = rule_fd
            added = syscall(add, ruleset_fd, kind, attr_ref, zero) == 0
            close(rule_fd)
            if not added:
                return False
        return True

    return enter_namespace


def _enter(fd: int, bind: Callable[[], bool], drop_capabilities: Callable[[], bool],
           filter_in: Callable[[], bool]) -> Callable[[], None]:
    """The `preexec_fn`: everything it needs is bound now, so the child allocates nothing. The
    mount namespace comes first (it needs the capabilities dropped next; /dev/shm is granted only
    when it holds), the seccomp filter last (it refuses nothing the steps before it make)."""
    syscall, prctl = _libc.syscall, _libc.prctl  # type: ignore[union-attr]
    restrict, ruleset_fd, flags = ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)
    no_new_privs, one, zero = ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0)

    def enter() -> None:
        if (not bind() or not drop_capabilities() or prctl(no_new_privs, one, zero, zero, zero) != 0
                or syscall(restrict, ruleset_fd, flags) != 0 or not filter_in()):
            raise OSError(ctypes.get_errno(), "the sandbox could not be entered")

    return enter
