"""A write that breaks a file's syntax says so in its result; one that does not, or a file that was
already broken, says nothing more."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.files import edit_file, multi_edit, write_file
from core.tools.syntax import broken_note
from tests.support.tools import tool_context as ctx

BROKEN = {
    "an unclosed bracket": ("greet.py", "print((1)\n", "line 1: '(' was never closed"),
    "bad indentation": ("m.py", "def f():\nreturn 1\n", "line 2: expected an indented block"),
    "a trailing comma in JSON": ("package.json", '{"a": 1,}', "Expecting property name"),
    "a TOML value missing": ("pyproject.toml", "[project]\nname =\n", "Invalid value"),
    "chinese text in Python": ("说明.py", "print('你好'\n", "was never closed"),
}


@pytest.mark.parametrize("rel, text, problem", BROKEN.values(), ids=BROKEN.keys())
def test_a_new_file_that_does_not_parse_is_named(rel: str, text: str, problem: str) -> None:
    note = broken_note(rel, None, text.encode())
    assert note.startswith(f"{rel} is not valid ") and problem in note and note.endswith("Fix it before going on")


def test_a_write_that_breaks_a_file_says_so_and_one_that_does_not_stays_quiet(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text("print('hi')\n")
    broken = write_file({"path": "greet.py", "content": "print(('hi')\n"}, ctx(tmp_path))
    assert "; note: greet.py is no longer valid Python (to Python 3." in broken.output
    fine = write_file({"path": "greet.py", "content": "print('hello')\n"}, ctx(tmp_path))
    assert "note" not in fine.output
    (tmp_path / "c.json").write_text('{"port": 80}\n')
    edited = edit_file({"path": "c.json", "old_text": "80}", "new_text": "8080,}"}, ctx(tmp_path))
    assert edited.output.splitlines()[-1].startswith("note: c.json is no longer valid JSON: Expecting property")
    multi = multi_edit({"path": "c.json", "edits": [{"old_text": "8080,}", "new_text": "8080}"}]}, ctx(tmp_path))
    assert "note" not in multi.output


@pytest.mark.parametrize("rel, before, after", [
    ("old.py", b"def f(:\n", b"def g(:\n"),  # already broken: a step of a larger fix
    ("notes.txt", b"", b"def f(:\n"),  # a format not judged
    ("data.json", b"\xff\xfe", b"\xff\xfe\x00"),  # not UTF-8
    ("ok.py", b"x = 1\n", b"x = 2\n"),
    ("bom.json", b"{}", b'\xef\xbb\xbf{"a": 1}'),
    ("warn.py", b"", b"x = '\\d'\n"),  # an invalid escape is a warning, not a break
])
def test_what_is_not_judged_or_still_parses_says_nothing(rel: str, before: bytes, after: bytes) -> None:
    assert broken_note(rel, before, after) == ""
