"""The workspace guard with Windows path forms: drive letters, `\\` and `/`, case-insensitive names,
UNC paths and `..` escapes. Runs under wine (`python3 tests/windows.py tests/unit/tools/test_workspace_windows.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.tools.workspace import OutsideWorkspace, Workspace

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="Windows path forms (runs under wine: tests/windows.py)")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    (tmp_path / "ws" / "sub" / "a.txt").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return tmp_path / "ws"


def test_both_separators_and_any_case_name_the_same_file_inside(ws: Path) -> None:
    guard = Workspace(ws)
    inside = ws / "sub" / "a.txt"
    for path in ("sub\\a.txt", "sub/a.txt", "SUB\\A.TXT", str(inside).upper(), str(inside).lower(),
                 str(inside).replace("\\", "/"), ".\\sub\\..\\sub\\a.txt"):
        assert guard.resolve(path) == inside, path


def test_other_drives_unc_paths_and_escapes_are_refused(ws: Path) -> None:
    """Also the forms Win32 rewrites: device and \\\\?\\ prefixes, trailing dots and spaces, streams."""
    guard = Workspace(ws)
    other_drive = "D:" if str(ws)[:1].upper() != "D" else "E:"
    for path in (other_drive + "\\x.txt", other_drive + "x.txt", "\\\\server.invalid\\share\\x.txt",
                 "//server.invalid/share/x.txt", "..\\secret.txt", "sub\\..\\..\\secret.txt",
                 str(ws.parent / "secret.txt").upper(), "\\Windows\\win.ini", str(ws) + "-sibling\\x.txt",
                 "\\\\?\\" + str(ws.parent / "secret.txt"), "\\\\.\\" + str(ws.parent / "secret.txt"),
                 "\\\\?\\UNC\\server.invalid\\share\\x", "..\\secret.txt.", "..\\secret.txt ", "..\\secret.txt::$DATA",
                 "NUL", "sub\\COM1.txt"):
        with pytest.raises(OutsideWorkspace, match="outside the workspace"):
            guard.resolve(path)
