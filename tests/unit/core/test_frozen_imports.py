"""The exe's packs (hooks/packs.py builds them, core/frozen_imports.py loads them), round-tripped here
without PyInstaller: a package's modules packed and imported back, an extension module extracted to
a private cache once and loaded from there."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import lzma
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.frozen_imports import (
    INDEX_MODULE,
    STALE_AFTER,
    USED_MARKER,
    PackedFile,
    PackedFinder,
    extract,
    install,
    mark_runtime_used,
    private_path,
    sha256,
)
from hooks.packs import extension_module, pack

SUFFIXES = importlib.machinery.EXTENSION_SUFFIXES


def _write(folder: Path, files: dict[str, str]) -> list[tuple[str, str, str]]:
    """A package on disk, and its modules as PyInstaller's Analysis lists them."""
    toc = []
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        name = ".".join(Path(relative).with_suffix("").parts).removesuffix(".__init__")
        toc.append((name, str(path), "PYMODULE"))
    return toc


@pytest.fixture
def importable(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path for the pack modules; what the test imported is forgotten afterwards."""
    folder = tmp_path / "packs"
    folder.mkdir()
    sys.path.insert(0, str(folder))
    before, finders = set(sys.modules), list(sys.meta_path)
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.meta_path[:] = finders
        for name in set(sys.modules) - before:
            del sys.modules[name]
        importlib.invalidate_caches()


def test_packed_modules_import_from_the_stream_and_the_rest_stays(tmp_path: Path, importable: Path) -> None:
    source = tmp_path / "src"
    toc = _write(source, {
        "packdemo/__init__.py": "",
        "packdemo/lexers/__init__.py": "def get(name):\n"
                                       "    return __import__('packdemo.lexers.' + name, None, None, ['X']).X\n",
        "packdemo/lexers/_mapping.py": "NAMES = ['one', 'two']\n",
        "packdemo/lexers/one.py": '"""Docstring."""\nfrom packdemo.lexers.two import X as Y\nX = Y + "一"\n',
        "packdemo/lexers/two.py": "X = 'two'\nassert __doc__ is None\n",
        "packdemo/lexers/deep/__init__.py": "from .inner import X\n",
        "packdemo/lexers/deep/inner.py": "X = 'inner'\n",
        "other/__init__.py": "",
    })
    pure, binaries = pack(toc, [], importable, pure_packages=["packdemo"],
                          packed_pure=lambda n: n.startswith("packdemo.lexers.") and "_mapping" not in n,
                          packed_binary=lambda dest, module: False, needs=lambda source: [],
                          read=lambda source: b"", suffixes=SUFFIXES, optimize=2)
    names = [entry[0] for entry in pure]
    assert {"packdemo", "packdemo.lexers", "packdemo.lexers._mapping", "other"} < set(names)
    assert not {"packdemo.lexers.one", "packdemo.lexers.two", "packdemo.lexers.deep.inner"} & set(names)
    assert INDEX_MODULE in names and binaries == []
    sys.path.insert(0, str(source))  # the kept modules, as the exe's archive would hold them
    try:
        for removed in ("one.py", "two.py", "deep/inner.py", "deep/__init__.py"):  # only in the pack now
            (source / "packdemo" / "lexers" / removed).unlink()
        (source / "packdemo" / "lexers" / "deep").rmdir()  # else a namespace package by that name
        install()
        lexers = importlib.import_module("packdemo.lexers")
        assert lexers.get("one") == "two一"
        assert lexers.get("deep") == "inner"
        one = sys.modules["packdemo.lexers.one"]
        assert one.__doc__ is None  # compiled as the exe compiles (optimize=2)
        assert importlib.util.find_spec("packdemo.lexers.three") is None
    finally:
        sys.path.remove(str(source))


def _extension_file() -> Path:
    """A real extension module of the standard library that loads twice in one process."""
    for name in ("unicodedata", "_decimal", "pyexpat", "select", "_socket"):
        module = importlib.import_module(name)
        found = getattr(module, "__file__", None)
        if found and found.endswith(tuple(SUFFIXES)):
            return Path(found)
    pytest.skip("this Python has its extension modules built in")


def _entry(raw: bytes, filename: str) -> tuple[PackedFile, bytes]:
    return PackedFile("pack", filename, sha256(raw), len(raw)), lzma.compress(raw)


def test_an_extension_is_extracted_once_privately_and_loads(tmp_path: Path) -> None:
    original = _extension_file()
    raw = original.read_bytes()
    entry, data = _entry(raw, original.name)
    path = extract(entry, data, tmp_path / "cache")
    assert path.read_bytes() == raw and path.parent.name == entry.sha256[:32]
    assert [p.name for p in path.parent.iterdir()] == [original.name]  # no temporary file left
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    written = path.stat().st_mtime_ns
    assert extract(entry, data, tmp_path / "cache") == path and path.stat().st_mtime_ns == written

    name = original.name.split(".")[0]
    finder = PackedFinder({}, {name: original.name}, {original.name: entry}, [tmp_path / "cache"])
    finder_pack = type(sys)("pack")
    finder_pack.DATA = data
    sys.modules["pack"] = finder_pack
    try:
        spec = finder.find_spec(name)
    finally:
        del sys.modules["pack"]
    assert spec is not None and spec.origin == str(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert module.__file__ == str(path) and module is not sys.modules[name]


def test_a_damaged_file_is_written_again_and_a_damaged_pack_is_refused(tmp_path: Path) -> None:
    raw = bytes(range(256)) * 64
    entry, data = _entry(raw, "_thing.so")
    path = extract(entry, data, tmp_path)
    path.write_bytes(raw[:100])  # truncated by some other tool
    assert extract(entry, data, tmp_path).read_bytes() == raw
    wrong = PackedFile("pack", "_other.so", sha256(raw), len(raw))
    with pytest.raises(ImportError, match="damaged"):
        extract(wrong, lzma.compress(raw[:-1] + b"x"), tmp_path)
    assert not (tmp_path / wrong.sha256[:32] / "_other.so").exists()


def test_an_unwritable_cache_falls_back_to_the_next_folder(tmp_path: Path) -> None:
    raw = b"\x7fELF not really" * 100
    entry, data = _entry(raw, "_x.so")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    finder = PackedFinder({}, {}, {"_x.so": entry}, [blocked / "cache", tmp_path / "run"])
    pack_module = type(sys)("pack")
    pack_module.DATA = data
    sys.modules["pack"] = pack_module
    try:
        path = finder._file("_x.so", library=False)
    finally:
        del sys.modules["pack"]
    assert path.parent.parent == tmp_path / "run" and path.read_bytes() == raw


posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes (Windows: the ACL of LOCALAPPDATA)")


@posix_only
def test_a_cache_only_the_user_can_change_is_private(tmp_path: Path) -> None:
    cache = tmp_path / "home" / ".cache"
    cache.mkdir(parents=True, mode=0o700)
    assert private_path(str(cache / "deepseek-agent" / "native"))  # what does not exist yet is made private
    (tmp_path / "home").chmod(0o775)
    assert not private_path(str(cache / "deepseek-agent" / "native"))  # the group could swap .cache
    (tmp_path / "home").chmod(0o1777)
    assert private_path(str(cache))  # sticky, as /tmp: only an entry's owner may rename it
    (tmp_path / "home").chmod(0o700)
    (tmp_path / "link").symlink_to(cache)
    assert not private_path(str(tmp_path / "link" / "deepseek-agent"))
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    assert not private_path(str(tmp_path / "file" / "native"))
    assert not private_path("relative/cache")


@posix_only
def test_the_folders_made_for_an_extension_are_private_under_any_umask(tmp_path: Path) -> None:
    raw = b"\x7fELF not really" * 100
    entry, data = _entry(raw, "_x.so")
    root = tmp_path / "cache" / "deepseek-agent" / "native"
    old = os.umask(0o002)
    try:
        path = extract(entry, data, root)
    finally:
        os.umask(old)
    made = [tmp_path / "cache", tmp_path / "cache" / "deepseek-agent", root, path.parent]
    assert [oct(folder.stat().st_mode & 0o777) for folder in made] == ["0o700"] * 4
    assert private_path(str(root)) and path.read_bytes() == raw


@posix_only
def test_root_does_not_load_what_another_user_s_cache_holds(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    cache = tmp_path / "user-home" / ".cache"
    cache.mkdir(parents=True, mode=0o700)
    os.chown(tmp_path / "user-home", 65534, 65534)
    assert not private_path(str(cache / "deepseek-agent" / "native"))


@posix_only
def test_the_finder_skips_a_cache_others_can_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "cache"))
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "run"), raising=False)
    raw = b"\x7fELF not really" * 100
    entry, data = _entry(raw, "_x.so")
    finder = PackedFinder({}, {}, {"_x.so": entry})
    assert finder.roots == [tmp_path / "run" / "_packed"]
    path = _finder_file(finder, "_x.so", data)
    assert path.is_relative_to(tmp_path / "run") and not (shared / "cache").exists()
    shared.chmod(0o755)
    assert PackedFinder({}, {}, {"_x.so": entry}).roots[0] == shared / "cache" / "deepseek-agent" / "native"


def _aged(path: Path, seconds: float) -> Path:
    os.utime(path, (os.path.getmtime(path) - seconds,) * 2)
    return path


def _finder_file(finder: PackedFinder, filename: str, data: bytes) -> Path:
    pack_module = type(sys)("pack")
    pack_module.DATA = data
    sys.modules["pack"] = pack_module
    try:
        return finder._file(filename, library=False)
    finally:
        del sys.modules["pack"]


def test_a_new_build_s_first_write_prunes_what_older_builds_left(tmp_path: Path) -> None:
    """Upgrades would fill the cache with every build's libraries: the first file a build writes
    prunes folders it does not use that nothing wrote to for a week, and a crash's temporary files;
    a folder in use by this build, a recent one (another version used side by side) and what cannot
    be removed stay."""
    cache = tmp_path / "cache"
    raw, other = b"\x7fELF new build" * 100, b"\x7fELF kept" * 100
    entry, data = _entry(raw, "_new.so")
    kept, kept_data = _entry(other, "_kept.so")
    in_use = extract(kept, kept_data, cache)
    crashed, fresh_part = in_use.parent / "._kept.so.123.part", in_use.parent / "._kept.so.456.part"
    for part in (crashed, fresh_part):
        part.write_bytes(b"half")
    _aged(crashed, 7200)
    old = [cache / name for name in ("a" * 32, "b" * 32)]
    for folder in old:
        folder.mkdir()
        (folder / "_old.so").write_bytes(b"old")
    (old[1] / "busy").mkdir()  # what cannot be unlinked, as a loaded DLL on Windows
    recent = cache / ("c" * 32)
    recent.mkdir()
    (recent / "_side.so").write_bytes(b"side by side")
    for folder in (*old, in_use.parent):
        _aged(folder, STALE_AFTER + 60)

    finder = PackedFinder({}, {}, {"_new.so": entry, "_kept.so": kept}, [cache])
    assert _finder_file(finder, "_kept.so", kept_data) == in_use  # present: nothing written, nothing pruned
    assert old[0].exists() and crashed.exists()
    path = _finder_file(finder, "_new.so", data)
    assert path.read_bytes() == raw
    assert not old[0].exists() and not crashed.exists()
    assert in_use.exists() and fresh_part.exists() and (recent / "_side.so").exists()
    assert (old[1] / "busy").exists() and not (old[1] / "_old.so").exists()


def test_binaries_are_packed_with_the_packed_libraries_they_need(tmp_path: Path, importable: Path) -> None:
    ext = SUFFIXES[0]
    files = {"lib/libcrypto.so.3": b"crypto" * 50, f"lib/_ssl{ext}": b"ssl" * 50, "lib/libkept.so": b"k" * 50,
             f"lib/_kept{ext}": b"kept" * 50}
    for relative, raw in files.items():
        (tmp_path / relative).parent.mkdir(exist_ok=True)
        (tmp_path / relative).write_bytes(raw)
    binaries = [("libcrypto.so.3", str(tmp_path / "lib/libcrypto.so.3"), "BINARY"),
                (f"python3.11/lib-dynload/_ssl{ext}", str(tmp_path / f"lib/_ssl{ext}"), "EXTENSION"),
                ("libkept.so", str(tmp_path / "lib/libkept.so"), "BINARY"),
                (f"python3.11/lib-dynload/_kept{ext}", str(tmp_path / f"lib/_kept{ext}"), "EXTENSION")]
    needs = {f"_ssl{ext}": ["/usr/lib/LIBCRYPTO.so.3", "libc.so.6"], f"_kept{ext}": ["libkept.so"]}
    pure, kept = pack([], binaries, importable, pure_packages=[], packed_pure=lambda n: False,
                      packed_binary=lambda dest, module: module == "_ssl" or dest.startswith("libcrypto"),
                      needs=lambda source: needs.get(Path(source).name, []),
                      read=lambda source: Path(source).read_bytes()[::-1], suffixes=SUFFIXES, optimize=2)
    assert [entry[0] for entry in kept] == ["libkept.so", f"python3.11/lib-dynload/_kept{ext}"]
    index = importlib.import_module(INDEX_MODULE)
    assert {"_ssl": f"_ssl{ext}"} == index.EXTENSIONS
    ssl_file = PackedFile(*index.FILES[f"_ssl{ext}"])
    assert ssl_file.needs == ("libcrypto.so.3",)  # found by name, whatever its case
    assert PackedFile(*index.FILES["libcrypto.so.3"]).needs == ()
    stored = lzma.decompress(importlib.import_module(ssl_file.pack).DATA)
    assert stored == files[f"lib/_ssl{ext}"][::-1] and ssl_file.sha256 == sha256(stored)  # as `read` gave it
    crypto_pack = PackedFile(*index.FILES["libcrypto.so.3"]).pack
    assert {entry[0] for entry in pure} == {INDEX_MODULE, ssl_file.pack, crypto_pack}


@pytest.mark.parametrize(("relative", "module"), [
    ("site/pydantic_core/_pydantic_core.cpython-311-x86_64-linux-gnu.so", "pydantic_core._pydantic_core"),
    ("lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so", "_ssl"),
    ("DLLs/_ssl.pyd", "_ssl"),
    ("site/pydantic_core/_pydantic_core.cp311-win_amd64.pyd", "pydantic_core._pydantic_core"),
    ("site/win32/win32api.pyd", "win32api"),  # pywin32's folder is on the path, not a package
    ("site/outer/inner/_deep.abi3.so", "outer.inner._deep"),
    ("site/re2/_re2.abi3.so", "re2._re2"),
    ("lib/libcrypto.so.3", None),
])
def test_the_module_an_extension_file_provides(tmp_path: Path, relative: str, module: str | None) -> None:
    for package in ("site/pydantic_core", "site/outer", "site/outer/inner", "site/re2"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / relative).write_bytes(b"")
    suffixes = [".cpython-311-x86_64-linux-gnu.so", ".abi3.so", ".so", ".cp311-win_amd64.pyd", ".pyd"]
    assert extension_module(str(tmp_path / relative), suffixes) == module


def test_install_does_nothing_from_source() -> None:
    finders = list(sys.meta_path)
    install()
    assert sys.meta_path == finders and INDEX_MODULE not in sys.modules



def _runtime(root: Path, name: str, last_started: float | None) -> Path:
    folder = root / name
    (folder / "python3.11").mkdir(parents=True)
    (folder / "python3.11" / "libpython.so").write_bytes(b"\x7fELF")
    if last_started is not None:
        (folder / USED_MARKER).write_bytes(b"")
        _aged(folder / USED_MARKER, last_started)
    return folder


@pytest.fixture
def runtimes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache here, by POSIX's name and Windows': its runtime folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path))
    return tmp_path / "deepseek-agent" / "runtime"


def test_a_new_runtime_s_first_start_prunes_runtimes_not_started_for_a_week(
        runtimes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each build whose unpacked files differ gets a runtime folder (hooks/bootloader): the first start
    of a new one removes those nothing started for a week and what a crashed unpacking left; a
    runtime started recently (another version used side by side) stays, and later starts only mark
    their own as used."""
    root = runtimes
    ours = _runtime(root, "a" * 32, None)
    _runtime(root, "b" * 32, STALE_AFTER + 60)
    _aged(_runtime(root, "c" * 32, None), STALE_AFTER + 60)  # never marked: the folder's own time counts
    side_by_side = _runtime(root, "d" * 32, 3600)
    crashed, unpacking = root / f".{'e' * 32}.123.part", root / f".{'e' * 32}.456.part"
    crashed.mkdir()
    (crashed / "base_library.zip").write_bytes(b"PK")
    _aged(crashed, 7200)
    unpacking.mkdir()
    monkeypatch.setattr(sys, "_MEIPASS", str(ours), raising=False)
    mark_runtime_used()
    assert sorted(p.name for p in root.iterdir()) == sorted([ours.name, side_by_side.name, unpacking.name])
    assert (ours / USED_MARKER).is_file()
    _aged(ours / USED_MARKER, 600)
    again = _runtime(root, "f" * 32, STALE_AFTER + 60)
    mark_runtime_used()  # not a first start: marks, prunes nothing
    assert again.exists() and time.time() - (ours / USED_MARKER).stat().st_mtime < 60


@pytest.mark.parametrize("unpacked_to", ["tmp/_MEI1234", "tmp/runtime/_MEI1234", "tmp/runtime/" + "a" * 32])
def test_a_temporary_unpack_folder_is_left_alone(runtimes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 unpacked_to: str) -> None:
    """A one-file exe that unpacked to a temporary folder (no cache), even one named like a runtime,
    marks and prunes nothing."""
    home = tmp_path / unpacked_to
    home.mkdir(parents=True)
    old = [_runtime(runtimes, "b" * 32, STALE_AFTER + 60), _runtime(home.parent, "c" * 32, STALE_AFTER + 60)]
    monkeypatch.setattr(sys, "_MEIPASS", str(home), raising=False)
    mark_runtime_used()
    assert all(folder.exists() for folder in old) and not (home / USED_MARKER).exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc: elsewhere a runtime in use "
                    "cannot be renamed (Windows) or is not looked for")
def test_a_runtime_a_process_still_runs_from_stays(runtimes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session of an older build left open for over a week still maps its libpython: its runtime
    is not removed under it."""
    import mmap

    ours = _runtime(runtimes, "a" * 32, None)
    running = _runtime(runtimes, "b" * 32, STALE_AFTER + 60)
    stale = _runtime(runtimes, "c" * 32, STALE_AFTER + 60)
    with open(running / "python3.11" / "libpython.so", "rb") as library, \
            mmap.mmap(library.fileno(), 0, access=mmap.ACCESS_READ):
        monkeypatch.setattr(sys, "_MEIPASS", str(ours), raising=False)
        mark_runtime_used()
        assert running.exists() and not stale.exists()
