"""write_file and edit_file replace a file through a temporary file and a rename: never through a
hard link, a FIFO or a folder swapped for a symlink; mode bits kept; a full disk loses nothing."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.tools.atomic import WriteFailed, write_atomically
from core.tools.base import ToolContext, ToolError
from core.tools.files import edit_file, write_file
from tests.support.paths import ROOT
from tests.support.tools import tool_context


def ctx(root: Path) -> ToolContext:
    return tool_context(root, approve=True)


posix_only = pytest.mark.skipif(os.name != "posix", reason="hard links, FIFOs and modes as POSIX has them")
REPO = ROOT


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@posix_only
def test_a_hard_link_to_a_file_outside_is_not_written_through(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    os.link(outside, ws / "linked.txt")
    edit_file({"path": "linked.txt", "old_text": "keep me", "new_text": "changed"}, ctx(ws))
    write_file({"path": "linked.txt", "content": "written\n"}, ctx(ws))
    assert outside.read_text() == "keep me\n" and (ws / "linked.txt").read_text() == "written\n"


@posix_only
def test_a_fifo_at_the_path_is_replaced_not_opened(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    # Opening a FIFO for writing blocks until a reader comes; a subprocess with a timeout proves it does not.
    code = ("from tests.support.tools import tool_context; from core.tools.files import write_file; "
            f"from pathlib import Path; print(write_file({{'path': 'pipe', 'content': 'x'}}, tool_context(Path({str(ws)!r}), approve=True)).output)")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISREG((ws / "pipe").lstat().st_mode) and (ws / "pipe").read_text() == "x"


@posix_only
def test_mode_bits_are_kept_and_no_temporary_file_is_left(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o751)
    edit_file({"path": "run.sh", "old_text": "echo old", "new_text": "echo new"}, ctx(ws))
    write_file({"path": "run.sh", "content": "echo newer\n"}, ctx(ws))
    assert stat.S_IMODE(script.stat().st_mode) == 0o751 and script.read_text() == "echo newer\n"
    write_file({"path": "fresh/new.txt", "content": "n"}, ctx(ws))
    assert sorted(p.name for p in ws.rglob("*")) == ["fresh", "new.txt", "run.sh"]


@posix_only
def test_a_folder_swapped_for_a_symlink_after_the_check_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    # The workspace guard resolved ws/sub/f.txt while sub was a folder; the write sees the link.
    with pytest.raises(WriteFailed, match=r"no longer a plain folder.*unchanged"):
        write_atomically(ws, ws / "sub" / "f.txt", b"x")
    with pytest.raises(WriteFailed, match="no longer a plain folder"):
        write_atomically(ws, ws / "sub" / "deeper" / "f.txt", b"x", make_parents=True)
    assert list(outside.iterdir()) == []


FULL_DISK = textwrap.dedent("""
    import errno, os, subprocess, sys
    from pathlib import Path
    mount = Path(sys.argv[1])
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], check=True)
    ws = mount / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\\n")
    try:
        with open(mount / "filler", "wb") as handle:
            while True:
                handle.write(b"\\0" * 4096)
                handle.flush()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    from core.tools.base import ToolError
    from core.tools.files import edit_file, write_file
    from tests.support.tools import tool_context
    ctx = lambda root: tool_context(root, approve=True)
    for call in (lambda: write_file({"path": "a.py", "content": "y = 2\\n" * 50_000}, ctx(ws)),
                 lambda: edit_file({"path": "a.py", "old_text": "x = 1", "new_text": "y = 2\\n" * 50_000}, ctx(ws))):
        try:
            call()
        except ToolError as exc:
            print(exc)
    print("after:", (ws / "a.py").read_text().strip(), sorted(p.name for p in ws.iterdir()))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("unshare") is None,
                    reason="needs Linux user namespaces to mount a tiny tmpfs")
def test_a_full_disk_gives_one_clear_error_and_keeps_the_file(tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    run = subprocess.run(["unshare", "-rm", sys.executable, "-c", FULL_DISK, str(mount)], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    if run.returncode != 0 and "unshare" in run.stderr:
        pytest.skip(f"no user namespace here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines == ["could not write a.py: the disk is full (no space left on the device); a.py is unchanged"] * 2 \
        + ["after: x = 1 ['a.py']"]


def test_write_failures_become_tool_errors(ws: Path) -> None:
    (ws / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        write_file({"path": "d", "content": "x"}, ctx(ws))
