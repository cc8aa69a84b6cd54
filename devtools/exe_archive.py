"""List and search what a PyInstaller one-file exe carries: `python devtools/exe_archive.py EXE [NEEDLE...]`.

Prints JSON: `entries` (the archive's top-level names), `modules` (the names the exe can import:
the PYZ's modules and what its packs hold, see core/frozen_imports.py) and, for each needle, the
entries whose decompressed bytes contain it (PYZ modules, the members of bundled zip files, packed
modules and packed binaries included). Reading the packs unmarshals every packed module, so a pack
that would not load fails here. With `--costs EXE` it prints, per package, the bytes it adds to the
exe, the bytes unpacked to disk at every start and the bytes written once to the user's cache
(bench/startup.py's table). It needs PyInstaller's `CArchiveReader`, so tests run it with the build
venv's Python (see `tests/e2e/test_exe.py`), not the test runner's.
"""

from __future__ import annotations

import io
import json
import lzma
import marshal
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

from PyInstaller.archive.readers import CArchiveReader

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as a script, by the build venv's Python

from core.frozen_imports import INDEX_MODULE


def packs_index(pyz) -> SimpleNamespace:
    """The packs' index (empty tables for an exe without packs)."""
    if INDEX_MODULE not in pyz.toc:
        return SimpleNamespace(MODULES={}, EXTENSIONS={}, FILES={})
    tables: dict[str, object] = {}
    exec(pyz.extract(INDEX_MODULE), tables)
    return SimpleNamespace(**tables)


def unpacked(pyz, pack: str) -> bytes:
    tables: dict[str, object] = {}
    exec(pyz.extract(pack), tables)
    return lzma.decompress(tables["DATA"])  # type: ignore[arg-type]


def contents(path: str) -> tuple[list[str], list[str], Iterator[tuple[str, bytes]]]:
    archive = CArchiveReader(path)
    entries = sorted(archive.toc)
    pyz_name = next(name for name, entry in archive.toc.items() if entry[-1] == "z")
    pyz = archive.open_embedded_archive(pyz_name)
    index = packs_index(pyz)

    def blobs() -> Iterator[tuple[str, bytes]]:
        for name in entries:
            if name == pyz_name:
                continue
            data = archive.extract(name)
            if data is None:  # an entry without bytes of its own (a link)
                continue
            yield name, data
            if name.endswith(".zip"):
                with zipfile.ZipFile(io.BytesIO(data)) as bundled:
                    for member in bundled.namelist():
                        yield f"{name}/{member}", bundled.read(member)
        for module in pyz.toc:
            code = pyz.extract(module, raw=True)  # raw: marshalled code, strings intact
            if code is not None:  # a namespace package (mcp's dependencies have some) has none
                yield f"PYZ/{module}", code
        streams = {pack: unpacked(pyz, pack) for pack in {entry[0] for entry in index.MODULES.values()}}
        for module, (pack, _, start, end) in index.MODULES.items():
            code = streams[pack][start:end]
            marshal.loads(code)
            yield f"packed/{module}", code
        for filename, (pack, *_) in index.FILES.items():
            yield f"packed/{filename}", unpacked(pyz, pack)

    return entries, sorted({*pyz.toc, *index.MODULES, *index.EXTENSIONS}), blobs()


SYSTEM = "(Python, its standard library, system libraries)"
OWN = ("agent", "tui", "core", "ui")  # this project's modules, which no installed distribution names


def owner(top: str, distributions: dict[str, list[str]]) -> str:
    """The distribution a top-level module or folder of the archive comes from."""
    if top in OWN:
        return "deepseek-agent"
    found = distributions.get(top)
    return found[0].lower().replace("_", "-") if found else SYSTEM


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower().replace("_", "-")  # type: ignore[union-attr]


def only_needed_by(root: str) -> set[str]:
    """`root` and the distributions installed only for it: its requirements, walked, less what the
    project's other requirements (pyproject.toml) need."""
    from importlib import metadata

    import tomllib  # Python 3.11+, as the build venvs are

    def requires(name: str) -> set[str]:
        try:
            listed = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            return set()
        return {_name(r) for r in listed if "extra ==" not in r}

    def closure(names: set[str]) -> set[str]:
        seen: set[str] = set()
        while names:
            name = names.pop()
            if name not in seen:
                seen.add(name)
                names |= requires(name)
        return seen

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    mine = {_name(r) for r in tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]}
    return closure({root}) - closure(mine - {root})


def costs(path: str) -> dict[str, object]:
    """Per distribution: `archived` (compressed bytes in the exe), `unpacked` (bytes written to disk
    at every start: binaries and data, not the modules, which are read in place) and `cached` (packed
    binaries, written once to the user's cache when first imported)."""
    from importlib import metadata

    distributions = metadata.packages_distributions()
    archive = CArchiveReader(path)
    found: dict[str, dict[str, int]] = {}

    def add(name: str, archived: int, unpacked: int, cached: int = 0) -> None:
        row = found.setdefault(name, {"archived": 0, "unpacked": 0, "cached": 0})
        row["archived"] += archived
        row["unpacked"] += unpacked
        row["cached"] += cached

    for name, entry in archive.toc.items():
        _, length, unpacked_length, _, kind = entry
        if kind == "z":
            pyz = archive.open_embedded_archive(name)
            index = packs_index(pyz)
            packs = {entry[0]: module.split(".")[0] for module, entry in index.MODULES.items()}
            packs |= {index.FILES[file][0]: module.split(".")[0] for module, file in index.EXTENSIONS.items()}
            sizes = {fields[0]: fields[3] for fields in index.FILES.values()}
            for module, (_, _, size) in pyz.toc.items():
                top = packs.get(module, module).split(".")[0]
                add(owner(top, distributions), size, 0, sizes.get(module, 0))
        elif kind in "bx":
            folder, _, _ = name.replace("\\", "/").rpartition("/")  # a Windows exe names them with backslashes
            add(owner(folder.split("/")[0], distributions), length, unpacked_length)
        else:
            add(SYSTEM, length, 0)  # the bootloader's own scripts and options
    return {"packages": found, "mcp": sorted(only_needed_by("mcp"))}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--costs"]:
        json.dump(costs(argv[1]), sys.stdout)
        return 0
    path, needles = argv[0], [n.encode() for n in argv[1:]]
    entries, modules, blobs = contents(path)
    found: dict[str, list[str]] = {n.decode(): [] for n in needles}
    for name, data in blobs:
        for needle in needles:
            if needle in data:
                found[needle.decode()].append(name)
    json.dump({"entries": entries, "modules": modules, "found": found}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
