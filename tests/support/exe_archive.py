"""List and search what a PyInstaller one-file exe carries: `python tests/support/exe_archive.py EXE [NEEDLE...]`.

Prints JSON: `entries` (the archive's top-level names), `modules` (the PYZ's module names) and, for
each needle, the entries whose decompressed bytes contain it (PYZ modules and the members of
bundled zip files included). It needs PyInstaller's `CArchiveReader`, so tests run it with the
build venv's Python (see `tests/e2e/test_exe.py`), not the test runner's.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Iterator

from PyInstaller.archive.readers import CArchiveReader


def contents(path: str) -> tuple[list[str], list[str], Iterator[tuple[str, bytes]]]:
    archive = CArchiveReader(path)
    entries = sorted(archive.toc)
    pyz_name = next(name for name, entry in archive.toc.items() if entry[-1] == "z")
    pyz = archive.open_embedded_archive(pyz_name)

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

    return entries, sorted(pyz.toc), blobs()


def main(argv: list[str]) -> int:
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
