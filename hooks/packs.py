"""Build side of core/frozen_imports.py: moves modules and binaries out of the exe's usual places into
xz packs, written as modules for the exe's module archive (read in place, never unpacked at start).

deepseek-agent.spec calls `pack()` on the Analysis' lists. Pure modules become one solid stream per
top-level package (marshalled code, compiled as PyInstaller does with `optimize`); each binary
becomes one pack of its own, with the packed libraries it needs listed so the finder loads them
first.
"""

from __future__ import annotations

import hashlib
import lzma
import marshal
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from core.frozen_imports import INDEX_MODULE

TocEntry = tuple[str, str, str]
XZ = {"format": lzma.FORMAT_XZ, "preset": 9 | lzma.PRESET_EXTREME}


@dataclass
class Packs:
    """What `pack()` writes: the index's three tables, and the pack modules' files."""

    folder: Path
    modules: dict[str, tuple[str, bool, int, int]] = field(default_factory=dict)
    extensions: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[str, str, str, int, tuple[str, ...]]] = field(default_factory=dict)
    written: list[TocEntry] = field(default_factory=list)

    def write(self, name: str, body: str) -> None:
        path = self.folder / f"{name}.py"
        path.write_text(body, encoding="utf-8")
        self.written.append((name, str(path), "PYMODULE"))

    def write_data(self, name: str, raw: bytes) -> None:
        self.write(name, f"DATA = {lzma.compress(raw, **XZ)!r}\n")

    def write_index(self) -> None:
        self.write(INDEX_MODULE, f"MODULES = {self.modules!r}\nEXTENSIONS = {self.extensions!r}\n"
                                 f"FILES = {self.files!r}\n")


def pack_name(owner: str) -> str:
    """The module holding one pack; exe_archive.py's costs table reads the owner back from it."""
    return f"{INDEX_MODULE}__{re.sub(r'[^A-Za-z0-9_]', '_', owner)}"


def extension_module(source: str, suffixes: Iterable[str]) -> str | None:
    """The module an extension file provides, found as the import system would: its name less the
    suffix, under each folder above it that is a package (`pydantic_core/_pydantic_core.abi3.so` is
    `pydantic_core._pydantic_core`; pywin32's `win32/win32api.pyd` is `win32api`, `win32` being a
    folder on the path, not a package)."""
    path = Path(source)
    suffix = max((s for s in suffixes if path.name.endswith(s)), key=len, default=None)
    if suffix is None:
        return None
    parts = [path.name.removesuffix(suffix)]
    folder = path.parent
    while (folder / "__init__.py").is_file() or (folder / "__init__.pyc").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def pack(pure: list[TocEntry], binaries: list[TocEntry], folder: Path, *, pure_packages: Iterable[str],
         packed_pure: Callable[[str], bool], packed_binary: Callable[[str, str], bool],
         needs: Callable[[str], Iterable[str]], read: Callable[[str], bytes], suffixes: Iterable[str],
         optimize: int) -> tuple[list[TocEntry], list[TocEntry]]:
    """The module and binary lists less what is packed, plus the pack modules and their index.

    `packed_pure(name)` and `packed_binary(dest, module or "")` choose; `needs(source path)` names the
    libraries a binary loads (PyInstaller's bindepend), so that packed ones are extracted first;
    `read(source path)` gives a binary's bytes as the exe would carry them (stripped on Linux)."""
    folder.mkdir(parents=True, exist_ok=True)
    packs = Packs(folder)
    suffixes = list(suffixes)
    for top in pure_packages:
        chosen = sorted(e for e in pure if e[0].split(".")[0] == top and packed_pure(e[0]))
        stream = bytearray()
        for name, source, _ in chosen:
            is_package = PurePath(source).stem == "__init__"
            relative = name.replace(".", "/") + ("/__init__.py" if is_package else ".py")
            code = compile(Path(source).read_bytes(), relative, "exec", optimize=optimize, dont_inherit=True)
            start = len(stream)
            stream += marshal.dumps(code)
            packs.modules[name] = (pack_name(top), is_package, start, len(stream))
        if chosen:
            packs.write_data(pack_name(top), bytes(stream))
    gone = {e[0] for e in pure if e[0] in packs.modules}

    chosen_binaries = {}
    for dest, source, kind in binaries:
        module = extension_module(source, suffixes) if kind == "EXTENSION" else None
        if packed_binary(dest, module or ""):
            chosen_binaries[PurePath(dest.replace("\\", "/")).name] = (source, module)
    by_name = {filename.lower(): filename for filename in chosen_binaries}  # Windows names ignore case
    for filename, (source, module) in sorted(chosen_binaries.items()):
        raw = read(source)
        owner = module.split(".")[0] if module and "." in module else filename.split(".")[0]
        name = pack_name(f"{owner}_{filename}")
        loads = {PurePath(n).name.lower() for n in needs(source)}
        wanted = tuple(sorted({by_name[n] for n in loads if n in by_name} - {filename}))
        packs.files[filename] = (name, filename, hashlib.sha256(raw).hexdigest(), len(raw), wanted)
        packs.write_data(name, raw)
        if module:
            packs.extensions[module] = filename
    packs.write_index()
    kept_binaries = [e for e in binaries if PurePath(e[0].replace("\\", "/")).name not in chosen_binaries]
    return [e for e in pure if e[0] not in gone] + packs.written, kept_binaries
