"""The output archive's cap holds while a command runs: a command printing without end never
grows the archive past its cap on disk, and a write that fails stops the archive, not the command."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from core.cancel import Cancel
from core.prune.archive import MiB, OutputArchive
from core.tools.shell import run_command

CAP = 3 * MiB
# Endless output of several shapes: short lines, one line without end, binary bytes.
PRINTERS = {
    "short lines": "import sys\nwhile True: sys.stdout.write('y\\n' * 4096)",
    "one endless line": "import sys\nwhile True: sys.stdout.write('x' * 65536)",
    "binary": "import os, sys\nwhile True: sys.stdout.buffer.write(os.urandom(65536))",
}


def _endless(tmp_path: Path, name: str) -> str:
    script = tmp_path / "print.py"
    script.write_text(PRINTERS[name])
    return f'"{sys.executable}" "{script}"'


def _folder_size(folder: Path) -> int:
    """The folder's size at one moment, from a listing that is not atomic: a file counts only if it
    is still listed after every file was measured, so it existed all along (ids are never reused)
    and its size then is at least the size measured (archives only grow)."""
    measured: dict[str, int] = {}
    for p in folder.iterdir():
        try:
            measured[p.name] = p.stat().st_size
        except FileNotFoundError:
            pass  # dropped while the folder was being listed
    still = {p.name for p in folder.iterdir()}
    return sum(size for name, size in measured.items() if name in still)


# Under wine the folder was once in three quiet runs seen over the cap (the earlier output still
# listed beside a full one); not yet understood, so not claimed there until it is.
@pytest.mark.xfail(sys.platform == "win32", reason="under wine the folder is sometimes seen over its cap "
                   "(under investigation)", strict=False)
@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "raw"])
@pytest.mark.parametrize("printer", list(PRINTERS))
def test_an_endless_printer_never_grows_the_archive_past_its_cap(tmp_path: Path, printer: str, redact: bool) -> None:
    archive = OutputArchive(tmp_path / "outputs", max_total_bytes=CAP, redact=(lambda text: text) if redact else None)
    earlier = archive.new_id()
    archive.write(earlier, b"earlier output\n" * 100_000)  # 1.5 MB already there
    sizes: list[int] = []
    done = threading.Event()

    def watch() -> None:  # the folder's size on disk, sampled while the command runs
        while not done.is_set():
            sizes.append(_folder_size(archive.folder))
            done.wait(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    out_id = archive.new_id()
    try:
        with archive.writer(out_id) as sink:
            run = run_command(_endless(tmp_path, printer), tmp_path, timeout=3, cancel=Cancel(), sink=sink)
    finally:
        done.set()
        watcher.join()
    assert run.timed_out and len(run.output) > 2 * CAP  # it printed far more than the cap
    assert len(sizes) > 10 and max(sizes) <= CAP + 4096, max(sizes)  # sampled while it ran (fewer on a busy machine)
    assert archive.ids() == [out_id] and sink.skipped > CAP
    assert sink.notice is not None and f"dropped {earlier}" in sink.notice and "reached the 3.0 MB archive cap" in sink.notice
    assert archive.read(out_id, offset=1, limit=1).startswith(f"{out_id}: lines 1-1")
    assert archive.path(out_id).read_bytes().endswith(b"[the archive stops here: see the session's notice]\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_failing_archive_write_stops_the_archive_not_the_command(tmp_path: Path) -> None:
    """Writes to /dev/full fail with ENOSPC, as on a full disk: the command still runs to its end at
    full speed (the reader never dies and the pipe never fills), and the notice says why."""
    archive = OutputArchive(tmp_path / "outputs")
    out_id = archive.new_id()
    sink = archive.writer(out_id)
    sink._file.close()
    sink._file = open("/dev/full", "wb", buffering=0)  # noqa: SIM115 - the writer owns and closes it
    command = f'"{sys.executable}" -c "import sys; sys.stdout.write(\'z\' * 5_000_000); print(); print(\'end\')"'
    run = run_command(command, tmp_path, timeout=20, cancel=Cancel(), sink=sink)
    sink.close()
    assert run.exit_code == 0 and not run.timed_out and run.output.replace(b"\r\n", b"\n").endswith(b"end\n")
    assert sink.notice is not None and "could not be written (No space left on device)" in sink.notice
    assert sink.skipped > 4_000_000
