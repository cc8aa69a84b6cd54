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

import contextlib
import importlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

INDEX_MODULE = "_deepseek_agent_packs"
# How long the cache keeps a folder that the running build does not use and nothing wrote to: two
# versions used side by side keep theirs; an upgraded one's go at the new one's first write.
STALE_AFTER = 7 * 24 * 3600
# The extension modules the finder itself loads (xz, SHA-256, and ctypes for the libraries), which
# the exe must therefore keep unpacked, as PyInstaller's own loader keeps zlib and _struct.
NEEDED_UNPACKED = ("zlib", "_struct", "_lzma", "_sha256", "_sha2", "_ctypes")


@dataclass(frozen=True)
class PackedModule:
    """A module's marshalled code: bytes `start:end` of its pack's decompressed stream."""

    pack: str
    package: bool
    start: int
    end: int


@dataclass(frozen=True)
class PackedFile:
    """A binary: its pack's `DATA` is the xz-compressed file, `filename` its name on disk, `needs` the
    packed libraries it loads (extracted and loaded before it, so the system's loader finds them by
    name among the loaded ones)."""

    pack: str
    filename: str
    sha256: str
    size: int
    needs: tuple[str, ...] = ()


def cache_root() -> Path:
    """Where extracted binaries live: private to the user, kept across runs and builds."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "deepseek-agent" / "native"


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
            with contextlib.suppress(OSError):
                os.rmdir(folder.path)


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

    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
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
                 files: dict[str, PackedFile], roots: list[Path]) -> None:
        self.modules, self.extensions, self.files, self.roots = modules, extensions, files, roots
        self._streams: dict[str, bytes] = {}
        self._loaded: dict[str, Path] = {}
        self._pruned: set[Path] = set()

    def _stream(self, pack: str) -> bytes:
        if pack not in self._streams:
            import lzma

            self._streams[pack] = lzma.decompress(importlib.import_module(pack).DATA)
        return self._streams[pack]

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in self.modules:
            entry = self.modules[fullname]
            code = marshal.loads(self._stream(entry.pack)[entry.start:entry.end])
            return importlib.util.spec_from_loader(fullname, _PackedLoader(code), is_package=entry.package)
        if fullname in self.extensions:
            try:
                where = str(self._file(self.extensions[fullname], library=False))
            except OSError as error:
                raise ImportError(f"cannot write {fullname}'s file: {error}", name=fullname) from error
            loader = importlib.machinery.ExtensionFileLoader(fullname, where)
            return importlib.util.spec_from_file_location(fullname, where, loader=loader)
        return None

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
        data = importlib.import_module(entry.pack).DATA
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
    try:
        index = importlib.import_module(INDEX_MODULE)
    except ImportError:
        return
    modules = {name: PackedModule(*fields) for name, fields in index.MODULES.items()}
    files = {name: PackedFile(*fields) for name, fields in index.FILES.items()}
    roots = [cache_root()] + ([Path(sys._MEIPASS) / "_packed"] if hasattr(sys, "_MEIPASS") else [])
    sys.meta_path.append(PackedFinder(modules, index.EXTENSIONS, files, roots))
