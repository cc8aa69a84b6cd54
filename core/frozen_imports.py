"""Modules the one-file exe carries xz-compressed, loaded only when something imports them.

A one-file exe writes every binary it carries to a fresh folder at every start, and keeps each
module zlib-compressed on its own. Two kinds of module cost more than they must that way:

- Pygments' lexers and styles: hundreds of modules that a session imports one or two of, when a
  code fence in that language shows. As one solid xz stream they take a third less room; the first
  lexer imported decompresses them all, once per process (the stream stays in memory).
- Extension modules, and the libraries only they load (OpenSSL, the C++ runtime): written out at
  every start though many sessions load few of them (a session without MCP servers never loads
  pydantic's core). Packed, each is written once to a per-user cache folder named after its
  content hash, and loaded from there.

The build (hooks/packs.py) writes `INDEX_MODULE` and the pack modules it names into the exe's module
archive; `install()` (run by the runtime hook) puts the finder on `sys.meta_path`. From source none
of it exists and `install()` does nothing. docs/exe.md has the figures and the reasons.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections import namedtuple

# Imported at every start of the exe, before the program: only what Python has loaded by then and
# what the program loads anyway (dataclasses would bring inspect, pathlib urllib: 20 ms of a 50 ms
# `--version`). The rest is imported where it is used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import importlib.machinery
    from collections.abc import Callable
    from pathlib import Path
    from types import CodeType, ModuleType

INDEX_MODULE = "_deepseek_agent_packs"
# How long the cache keeps a folder that the running build does not use and nothing wrote to: two
# versions used side by side keep theirs; an upgraded one's go at the new one's first write.
STALE_AFTER = 7 * 24 * 3600
# The extension modules the finder itself loads (xz, SHA-256, and ctypes for the libraries), which
# the exe must therefore keep unpacked, as PyInstaller's own loader keeps zlib and _struct.
NEEDED_UNPACKED = ("zlib", "_struct", "_lzma", "_sha256", "_sha2", "_ctypes")
# In an unpacked runtime: its time is that of the runtime's last start.
USED_MARKER = ".used"


class PackedModule(namedtuple("PackedModule", "pack package start end")):
    """A module's marshalled code: bytes `start:end` of its pack's decompressed stream."""

    __slots__ = ()


class PackedFile(namedtuple("PackedFile", "pack filename sha256 size needs", defaults=((),))):
    """A binary: its pack's `DATA` is the xz-compressed file, `filename` its name on disk, `needs` the
    packed libraries it loads (extracted and loaded before it, so the system's loader finds them by
    name among the loaded ones)."""

    __slots__ = ()


def _module(name: str) -> ModuleType:
    """The module imported by name, without importlib (not loaded yet when the exe starts)."""
    __import__(name)
    return sys.modules[name]


def cache_root() -> Path:
    """Where extracted binaries live: private to the user, kept across runs and builds."""
    from pathlib import Path

    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "deepseek-agent" / "native"


def private_path(path: str) -> bool:
    """Whether no one but this user (or root) can change what `path` names: each folder on the way
    to it that exists, below "/", is owned by one of them, is no link, and is writable by nobody
    else, or sticky as /tmp is (only an entry's owner may rename it). The bootloader holds the
    runtime to the same rule (hooks/bootloader/pyi_persistent.c): root running with a user's HOME,
    or a cache under a shared folder, must not load a library someone else could have put there.
    Windows: the user's LOCALAPPDATA is theirs by its ACL."""
    if sys.platform == "win32":
        return True
    if not path.startswith("/"):
        return False
    import stat

    me = os.geteuid()
    parts = path.rstrip("/").split("/")
    for depth in range(2, len(parts) + 1):
        folder = "/".join(parts[:depth])
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            return True  # the rest is made by this process, private (mode 0700)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode) or info.st_uid not in (me, 0) or \
                (info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX):
            return False
    return True


def usable_cache_root() -> Path | None:
    """The extension cache the exe uses (`cache_root`), or None where others could change it."""
    cache = cache_root()
    return cache if private_path(str(cache)) else None


def sha256(data: bytes) -> str:
    """The standard library's own SHA-256, not OpenSSL's: loading OpenSSL may be what is verified."""
    try:
        from _sha256 import sha256 as hasher
    except ImportError:  # Python 3.12+
        from _sha2 import sha256 as hasher  # type: ignore[no-redef]
    return hasher(data).hexdigest()


def _present(path: Path, entry: PackedFile) -> bool:
    """Whether the file is there whole. Its content was checked when it was written: the folder is
    the user's own and the file appears by an atomic rename, so its size is what can still be wrong
    (another tool truncating it); hashing at every start would cost what unpacking does."""
    try:
        return path.stat().st_size == entry.size
    except OSError:
        return False


def prune(root: Path, keep: set[str], now: float) -> None:
    """Remove what other builds wrote to the cache and no longer use: each folder this exe does not
    name and that nothing was written to for `STALE_AFTER`, and temporary files a crash left behind.
    Run after this exe wrote a file (a new build's first use), so an ordinary start lists nothing; a
    build still in use whose folder went writes it again. Only `os` calls: shutil's imports may be
    packed extensions themselves. Whatever cannot be removed (a library another process has loaded, on
    Windows) stays."""
    try:
        folders = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for folder in folders:
        try:
            files = list(os.scandir(folder.path))
            stale = folder.name not in keep and now - folder.stat(follow_symlinks=False).st_mtime > STALE_AFTER
        except OSError:
            continue
        for file in files:  # one at a time: what cannot go must not keep the rest
            try:
                if stale or (file.name.endswith(".part") and now - file.stat(follow_symlinks=False).st_mtime > 3600):
                    os.unlink(file.path)
            except OSError:
                continue
        if stale:
            try:
                os.rmdir(folder.path)
            except OSError:
                continue


def _remove_tree(path: str) -> None:
    """Remove a folder and what it holds, with `os` alone (see `prune`); what cannot go stays."""
    for folder, folders, files in os.walk(path, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
        for name in folders:
            try:
                os.rmdir(os.path.join(folder, name))
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


def _mapped_by_a_process(folder: str) -> bool:
    """Linux: whether a running process has a file of `folder` mapped (every process started from a
    runtime maps its libpython). Elsewhere False: on Windows a runtime in use cannot be renamed."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return False
    needle = folder.rstrip(os.sep) + os.sep
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
                if needle in maps.read():
                    return True
        except OSError:
            continue
    return False


def runtime_root() -> str | None:
    """The folder the bootloader unpacks runtimes to (hooks/bootloader/pyi_persistent.c, whose rules
    these are), or None where it would not."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA", "")
        return os.path.join(base, "deepseek-agent", "runtime") if base[1:2] == ":" else None
    xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, "deepseek-agent", "runtime")
    return os.path.join(home, ".cache", "deepseek-agent", "runtime") if home.startswith("/") else None


def prune_runtimes(root: str, keep: str, now: float) -> None:
    """Remove the runtimes (hooks/bootloader) other builds unpacked to `root` that nothing started for
    `STALE_AFTER`, and what an unpacking that crashed left (`.<id>.<pid>.part`, `.old`) an hour on.
    A runtime goes by a rename first: a start that finds it half deleted would unpack it again
    rather than run from it; one a process still runs from stays (Linux: it maps its libpython; on
    Windows its loaded DLLs keep it from being renamed)."""
    try:
        entries = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False) and entry.name != keep]
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith("."):
                if now - entry.stat(follow_symlinks=False).st_mtime > 3600:
                    _remove_tree(entry.path)
                continue
            used = os.path.join(entry.path, USED_MARKER)
            last = os.stat(used).st_mtime if os.path.exists(used) else entry.stat(follow_symlinks=False).st_mtime
            if now - last > STALE_AFTER and not _mapped_by_a_process(entry.path):
                aside = os.path.join(root, f".{entry.name}.{os.getpid()}.old")
                os.rename(entry.path, aside)
                _remove_tree(aside)
        except OSError:
            continue


def started_from_runtime() -> str | None:
    """The unpacked runtime (hooks/bootloader) the running exe was started from, in the runtime
    root; None for a temporary folder, deleted at exit, or when not the exe."""
    home, root = getattr(sys, "_MEIPASS", None), runtime_root()
    if not home or not root or os.path.normcase(os.path.dirname(home)) != os.path.normcase(root) or \
            len(os.path.basename(home)) != 32:
        return None
    return home


def mark_runtime_used() -> None:
    """At every start of an exe that runs from its unpacked runtime (hooks/bootloader): its marker's
    time says when it was last started; the first start of a new runtime prunes the old ones."""
    home = started_from_runtime()
    if home is None:
        return
    marker = os.path.join(home, USED_MARKER)
    try:
        os.utime(marker)
        return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        return
    import time

    prune_runtimes(os.path.dirname(home), os.path.basename(home), time.time())


def _make_private(folder: Path) -> None:
    """`folder` and the missing ones above it, each private (mode 0700, which a umask of 002 keeps;
    `mkdir(parents=True)` would give the parents the umask's mode, and `private_path` refuse them)."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=0o700)
        except FileExistsError:
            continue


def extract(entry: PackedFile, data: bytes, root: Path, wrote: Callable[[], None] | None = None) -> Path:
    """The extension's file under `root`, written first when missing or not what the build packed
    (then `wrote` is called).

    The folder is named after the content hash, so two builds share a file only when it is the same
    file; it is written to a private temporary name and renamed into place, so a reader sees either
    nothing or the whole file."""
    folder = root / entry.sha256[:32]
    path = folder / entry.filename
    if _present(path, entry):
        return path
    import lzma

    _make_private(folder)
    content = lzma.decompress(data)
    if len(content) != entry.size or sha256(content) != entry.sha256:
        raise ImportError(f"the exe's packed {entry.filename} is damaged")
    temporary = folder / f".{entry.filename}.{os.getpid()}.part"  # the import lock keeps threads apart
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600)
        with os.fdopen(handle, "wb") as extracted:
            extracted.write(content)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        if not _present(path, entry):  # on Windows a file another process has loaded cannot be replaced
            raise
        return path
    if wrote is not None:
        wrote()
    return path


class _PackedLoader:
    """A loader by protocol (importlib.abc would import tempfile, whose extensions may be packed)."""

    def __init__(self, code: CodeType) -> None:
        self._code = code

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(self._code, module.__dict__)


class PackedFinder:
    """Finds the modules and extensions the index lists; everything else is left to the other finders."""

    def __init__(self, modules: dict[str, PackedModule], extensions: dict[str, str],
                 files: dict[str, PackedFile], roots: list[Path] | None = None) -> None:
        self.modules, self.extensions, self.files, self._roots = modules, extensions, files, roots
        self._streams: dict[str, bytes] = {}
        self._loaded: dict[str, Path] = {}
        self._pruned: set[Path] = set()

    def _stream(self, pack: str) -> bytes:
        if pack not in self._streams:
            import lzma

            self._streams[pack] = lzma.decompress(_module(pack).DATA)
        return self._streams[pack]

    @property
    def roots(self) -> list[Path]:
        """The user's cache where only the user can change it (`private_path`), then this run's unpack
        folder (where the cache cannot be written); found on first use, as pathlib is imported then."""
        if self._roots is None:
            from pathlib import Path

            cache = usable_cache_root()
            self._roots = (([cache] if cache is not None else [])
                           + ([Path(sys._MEIPASS) / "_packed"] if hasattr(sys, "_MEIPASS") else []))
        return self._roots

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules and fullname not in self.extensions:
            return None
        # What importlib.util and importlib.machinery give, from the import system's own modules
        # (always loaded): importing those packages costs 1.5 ms of the exe's start.
        import _frozen_importlib
        import _frozen_importlib_external

        if fullname in self.modules:
            entry = self.modules[fullname]
            code = marshal.loads(self._stream(entry.pack)[entry.start:entry.end])
            return _frozen_importlib.spec_from_loader(fullname, _PackedLoader(code), is_package=entry.package)
        try:
            where = str(self._file(self.extensions[fullname], library=False))
        except OSError as error:
            raise ImportError(f"cannot write {fullname}'s file: {error}", name=fullname) from error
        loader = _frozen_importlib_external.ExtensionFileLoader(fullname, where)
        return _frozen_importlib_external.spec_from_file_location(fullname, where, loader=loader)

    def _prune(self, root: Path) -> None:
        """Once per process and folder: what other builds left there goes (`prune`)."""
        if root not in self._pruned:
            self._pruned.add(root)
            import time

            prune(root, {entry.sha256[:32] for entry in self.files.values()}, time.time())

    def _file(self, filename: str, library: bool) -> Path:
        """The file extracted, the libraries it needs extracted and loaded first."""
        if filename in self._loaded:
            return self._loaded[filename]
        entry = self.files[filename]
        for needed in entry.needs:
            self._file(needed, library=True)
        data = _module(entry.pack).DATA
        failures: list[str] = []
        for root in self.roots:  # the user's cache; where it cannot be written, this run's unpack folder
            try:
                path = extract(entry, data, root, wrote=lambda root=root: self._prune(root))
                break
            except OSError as error:
                failures.append(f"{root}: {error}")
        else:
            raise OSError("; ".join(failures))
        if library:
            import ctypes

            ctypes.CDLL(str(path))
        self._loaded[filename] = path
        return path


def install() -> None:
    """Put the finder on `sys.meta_path` when the running exe carries packs (never from source)."""
    mark_runtime_used()
    try:
        index = _module(INDEX_MODULE)
    except ImportError:
        return
    modules = {name: PackedModule(*fields) for name, fields in index.MODULES.items()}
    files = {name: PackedFile(*fields) for name, fields in index.FILES.items()}
    sys.meta_path.append(PackedFinder(modules, index.EXTENSIONS, files))
