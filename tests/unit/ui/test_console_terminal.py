"""Who is at the other end of stdin/stdout: a tty or console, or Git Bash's mintty, whose Windows
programs see a named pipe (isatty() False) although a person types into it."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from core import console
from tests.support.paths import ROOT

MSYS = r"\msys-1888ae32e00d56aa-pty0-from-master"
CYGWIN = r"\cygwin-e022582115c10879-pty3-to-master"


@pytest.mark.parametrize("name", [MSYS, CYGWIN, r"\Device\NamedPipe" + MSYS])
def test_mintty_pipes_are_recognised(name: str) -> None:
    assert console.is_pty_pipe_name(name)


@pytest.mark.parametrize("name", ["", r"\Winsock2\CatalogChangeListener-1a4-0", r"\msys-1888ae32e00d56aa-pipe-0x3",
                                  r"\cygwin-e022582115c10879-ptyX-from-master", r"C:\Users\me\input.txt"])
def test_other_pipes_and_files_are_not(name: str) -> None:
    assert not console.is_pty_pipe_name(name)


def test_a_mintty_pipe_counts_as_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipe's name decides; a tty still counts; a stream whose handle is gone does not crash."""
    pipe = io.BytesIO()
    monkeypatch.setattr(console, "_pipe_name", lambda stream: MSYS)
    assert console.is_terminal(pipe)
    monkeypatch.setattr(console, "_pipe_name", lambda stream: r"\Winsock2\x")
    assert not console.is_terminal(pipe)
    monkeypatch.setattr(console, "_pipe_name", lambda stream: None)
    assert not console.is_terminal(pipe)
    assert not console.is_terminal(None)

    def closed(stream: object) -> str:
        raise ValueError("I/O operation on closed file")

    monkeypatch.setattr(console, "_pipe_name", closed)
    assert not console.is_terminal(pipe)


def test_an_ordinary_pipe_is_not_a_terminal_on_this_platform() -> None:
    """The real query (GetFileInformationByHandleEx on Windows) on a plain pipe: no, and no crash."""
    probe = "import sys; from ui.terminal import stdin_is_interactive, use_color; " \
            "print(stdin_is_interactive(), use_color())"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, input=b"", capture_output=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.decode().split() == ["False", "False"]
