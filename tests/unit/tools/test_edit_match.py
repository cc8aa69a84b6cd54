"""edit_file's forgiving matcher, one strategy at a time, each with twins that must refuse: two places
that match once relaxed, a one-character difference, and a passage that only matches across
unrelated lines. Every refusal leaves the file byte for byte as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.checkpoints import Checkpoints
from core.tools.base import ToolContext, ToolError
from core.tools.files import edit_file, multi_edit, read_file
from tests.support.tools import tool_context


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def ctx(root: Path, checkpoints: Checkpoints | None = None) -> ToolContext:
    return tool_context(root, approve=True, checkpoints=checkpoints)


def edit(ws: Path, content: str | bytes, old: str, new: str) -> tuple[str, bytes]:
    """Write `content` to f.py, edit it, and return the tool's answer and the file's new bytes."""
    data = content.encode() if isinstance(content, str) else content
    (ws / "f.py").write_bytes(data)
    result = edit_file({"path": "f.py", "old_text": old, "new_text": new}, ctx(ws))
    return result.output, (ws / "f.py").read_bytes()


def refuse(ws: Path, content: str | bytes, old: str, new: str = "CHANGED", match: str | None = None) -> str:
    data = content.encode() if isinstance(content, str) else content
    (ws / "f.py").write_bytes(data)
    with pytest.raises(ToolError, match=match) as caught:
        edit_file({"path": "f.py", "old_text": old, "new_text": new}, ctx(ws))
    assert (ws / "f.py").read_bytes() == data
    return str(caught.value)


# -- 1. exact ---------------------------------------------------------------------------------------
def test_exact_match_says_nothing_was_forgiven(ws: Path) -> None:
    out, data = edit(ws, "a = 1\nb = 2\n", "b = 2", "b = 3")
    assert data == b"a = 1\nb = 3\n" and out.splitlines()[0] == "edited f.py: replaced 1 occurrence(s) at line 2"


def test_exact_refuses_two_places_a_typo_and_a_gap(ws: Path) -> None:
    refuse(ws, "x = 1\ny = 1\n", "= 1", match=r"matches 2 times \(lines 1, 2\)")
    refuse(ws, "total = 1\n", "totl = 1", match="closest passage is at line 1")
    refuse(ws, "x = 1\n# note\ny = 2\n", "x = 1\ny = 2", match="not found")


# -- 2. line endings --------------------------------------------------------------------------------
def test_crlf_file_takes_lf_passage_and_stays_crlf(ws: Path) -> None:
    out, data = edit(ws, b"one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "uno\ndos\n")
    assert data == b"uno\r\ndos\r\nthree\r\n" and "CRLF" in out


def test_lf_file_takes_crlf_passage_and_stays_lf(ws: Path) -> None:
    out, data = edit(ws, "one\ntwo\n", "one\r\ntwo", "uno\r\ndos")
    assert data == b"uno\ndos\n" and "LF line endings" in out


def test_line_endings_refuse_two_places_a_typo_and_a_gap(ws: Path) -> None:
    refuse(ws, b"a\r\nb\r\na\r\nb\r\n", "a\nb", match="matches 2 times")
    refuse(ws, b"one\r\ntwo\r\n", "one\ntwp", match="not found")
    refuse(ws, b"one\r\nmid\r\ntwo\r\n", "one\ntwo", match="not found")


# -- 3. trailing whitespace -------------------------------------------------------------------------
def test_trailing_whitespace_is_forgiven(ws: Path) -> None:
    out, data = edit(ws, "a = 1   \nb = 2\t\nc = 3\n", "a = 1\nb = 2", "a = 10\nb = 20")
    assert data == b"a = 10\nb = 20\nc = 3\n" and "trailing whitespace" in out


def test_trailing_whitespace_refuses_two_places_a_typo_and_a_gap(ws: Path) -> None:
    message = refuse(ws, "a = 1 \nb = 2\na = 1\t\nb = 2 \n", "a = 1\nb = 2")
    assert "2 places when trailing whitespace is ignored (lines 1, 3)" in message
    refuse(ws, "a = 1  \nb = 2\n", "a = 1\nb = 3", match="not found")
    refuse(ws, "a = 1  \nx = 0\nb = 2\n", "a = 1\nb = 2", match="not found")


# -- 4. indentation re-based ------------------------------------------------------------------------
CLASS = "class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n"


def test_indentation_is_rebased_keeping_new_texts_relative_indentation(ws: Path) -> None:
    out, data = edit(ws, CLASS, "if x:\n    return 1", "if x and y:\n    return 1\nelse:\n    pass")
    assert data.decode() == ("class A:\n    def f(self):\n        if x and y:\n            return 1\n"
                             "        else:\n            pass\n        return 2\n")
    assert "matched ignoring indentation; re-indented by 8 spaces" in out


def test_indentation_moves_a_too_deep_passage_back(ws: Path) -> None:
    out, data = edit(ws, "def f():\n    return 1\n", "        def f():\n            return 1",
                     "        def f():\n            return 2")
    assert data == b"def f():\n    return 2\n" and "re-indented by -8 spaces" in out


def test_indentation_refuses_two_places_a_typo_a_gap_and_other_relative_indentation(ws: Path) -> None:
    twice = "def f():\n    if x:\n        go()\n\nclass B:\n    def g(self):\n        if x:\n            go()\n"
    assert "2 places when indentation is ignored (lines 2, 7)" in refuse(ws, twice, "if x:\n    go()")
    refuse(ws, CLASS, "if x:\n    return 7", match="not found")
    refuse(ws, "if x:\n    y = 1\n    return 1\n", "if x:\n    return 1", match="not found")
    # Flattened: the lines match stripped, but not their nesting; re-basing would break the block.
    refuse(ws, CLASS, "if x:\nreturn 1", match="whitespace is ignored")


# -- 5. tabs for spaces, spaces for tabs ------------------------------------------------------------
TABBED = "def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n"


def test_spaces_written_for_a_tab_indented_file_become_tabs(ws: Path) -> None:
    out, data = edit(ws, TABBED, "\tif x:\n        return 1", "\tif x:\n        return 3\n    # done")
    assert data.decode() == "def f():\n\tif x:\n\t\treturn 3\n\t# done\n\treturn 2\n"
    assert "converting indentation to the file's tabs" in out


def test_tabs_written_for_a_space_indented_file_become_its_unit(ws: Path) -> None:
    spaced = "def f():\n  if x:\n    return 1\n"
    out, data = edit(ws, spaced, "\tif x:\n\t\treturn 1", "\tif x:\n\t\treturn 5")
    assert data.decode() == "def f():\n  if x:\n    return 5\n" and "2-space indentation" in out


def test_tabs_refuse_two_places_a_typo_and_a_gap(ws: Path) -> None:
    twice = "def f():\n\tgo()\n\tstop()\ndef g():\n\tgo()\n\tstop()\n"
    refuse(ws, twice, "    go()\n    stop()", match="2 places")
    refuse(ws, TABBED, "    if x:\n        return 9", match="not found")
    refuse(ws, TABBED, "    if x:\n    return 2", match="not found")


# -- 6. read_file's line numbers --------------------------------------------------------------------
def test_line_numbers_copied_from_read_file_are_removed(ws: Path) -> None:
    (ws / "f.py").write_text("import os\n\ndef add(a, b):\n    return a - b\n")
    shown = read_file({"path": "f.py", "offset": 3, "limit": 2}, ctx(ws)).output
    assert shown == "     3\tdef add(a, b):\n     4\t    return a - b"
    out = edit_file({"path": "f.py", "old_text": shown, "new_text": shown.replace("-", "+")}, ctx(ws)).output
    assert (ws / "f.py").read_text() == "import os\n\ndef add(a, b):\n    return a + b\n"
    assert "removed read_file's line numbers" in out
    _, data = edit(ws, "x = 1\ny = 2\n", "1\tx = 1\n2\ty = 2", "x = 3\ny = 4")  # padding lost, new without
    assert data == b"x = 3\ny = 4\n"


def test_line_numbers_refuse_two_places_a_typo_and_a_gap(ws: Path) -> None:
    refuse(ws, "x = 1\nx = 1\n", "     7\tx = 1", match="2 places")
    refuse(ws, "x = 1\ny = 2\n", "     1\tx = 1\n     2\ty = 3", match="not found")
    refuse(ws, "x = 1\nz = 0\ny = 2\n", "     1\tx = 1\n     3\ty = 2", match="not found")



BLOCK = "x = 1\nif x:\n    y = 2\n    z = 3\n"


@pytest.mark.parametrize("old, new", [
    ("     3      y = 2\n     4      z = 3", "     3      y = 20\n     4      z = 3"),  # the tab shown as spaces
    ("3           y = 2\n4           z = 3", "    y = 20\n    z = 3"),  # padding lost too; new_text without
    ("3:    y = 2\n4:    z = 3", "3:    y = 20\n4:    z = 3"),  # grep -n
    ("f.py:3:    y = 2\nf.py:4:    z = 3", "    y = 20\n    z = 3"),  # search's path:line:text
    ("3 |     y = 2\n4 |     z = 3", "3 |     y = 20\n4 |     z = 3"),  # an editor's gutter
    ("  3 \u2502     y = 2\n  4 \u2502     z = 3", "  3 \u2502     y = 20\n  4 \u2502     z = 3"),
])
def test_other_spellings_of_copied_line_numbers_are_removed_where_they_point(ws: Path, old: str, new: str) -> None:
    out, data = edit(ws, BLOCK, old, new)
    assert data == b"x = 1\nif x:\n    y = 20\n    z = 3\n" and "removed the copied line numbers" in out


def test_new_text_with_copied_numbers_may_add_lines(ws: Path) -> None:
    _, data = edit(ws, BLOCK, "3:    y = 2\n4:    z = 3", "3:    y = 2\n4:    w = 9\n5:    z = 3")
    assert data == b"x = 1\nif x:\n    y = 2\n    w = 9\n    z = 3\n"


def test_other_line_number_spellings_refuse_wrong_lines_a_typo_two_places_and_content(ws: Path) -> None:
    told = refuse(ws, BLOCK, "7:    y = 2\n8:    z = 3", match="line numbers start at 7.*at line 3")
    assert "read the file again" in told
    refuse(ws, BLOCK, "3 |     y = 2\n4 |     z = 4", match="not found")  # one character differs
    refuse(ws, "if a:\n    y = 2\nif b:\n    y = 2\n", "2:    y = 2", match="2 places")
    refuse(ws, BLOCK, "3:    y = 2\n5:    z = 3", match="not found")  # numbers with a gap
    # Content that starts like a number is never taken for one away from the line it names.
    refuse(ws, "d = [\n    'a',\n    'b',\n]\n", "1: 'a',\n2: 'b',", match="line numbers start at 1")
    refuse(ws, BLOCK, "3 y = 2\n4 z = 3", match="not found")  # a number and a space: not read_file's tab


# -- 7. blank lines around the passage --------------------------------------------------------------
def test_blank_lines_around_the_passage_are_ignored(ws: Path) -> None:
    out, data = edit(ws, "a\nx = 1\nb\n", "\n\nx = 1\n\n", "\n\nx = 2\n\n")
    assert data == b"a\nx = 2\nb\n" and "blank lines around" in out


def test_blank_lines_refuse_two_places_a_typo_and_blank_lines_inside(ws: Path) -> None:
    refuse(ws, "x = 1\ny\nx = 1\n", "\nx = 1\n\n", match="2 places")
    refuse(ws, "a\nx = 1\nb\n", "\n\nx = 7\n", match="not found")
    refuse(ws, "x = 1\ny = 2\n", "x = 1\n\ny = 2", match="not found")


# -- 8. JSON-escaped newlines -----------------------------------------------------------------------
def test_json_escaped_newlines_are_unescaped_in_both_texts(ws: Path) -> None:
    out, data = edit(ws, "def add(a, b):\n    return a - b\n", "def add(a, b):\\n    return a - b",
                     "def add(a, b):\\n    return a + b")
    assert data == b"def add(a, b):\n    return a + b\n" and "unescaped JSON" in out


def test_json_escapes_refuse_two_places_a_typo_a_gap_and_a_real_backslash_n(ws: Path) -> None:
    refuse(ws, "a\nb\na\nb\n", "a\\nb", match="2 places")
    refuse(ws, "a = 1\nb = 2\n", "a = 1\\nb = 3", match="not found")
    refuse(ws, "a = 1\nc\nb = 2\n", "a = 1\\nb = 2", match="not found")
    # A file that really holds a backslash-n matches it exactly, and is not unescaped.
    _, data = edit(ws, 'print("a\\n")\n', 'print("a\\n")', 'print("b\\n")')
    assert data == b'print("b\\n")\n'


# -- 9. lines joined into one -----------------------------------------------------------------------
CALC = "def add(a, b):\n    return a - b\n"


def test_two_lines_joined_into_one_match_the_calc_case(ws: Path) -> None:
    out, data = edit(ws, CALC, "def add(a, b): return a - b", "def add(a, b): return a + b")
    assert data == b"def add(a, b): return a + b\n" and "the file has this passage as 2 lines (1-2)" in out
    out, data = edit(ws, "class C:\n    def add(a, b):\n        return a - b\n",
                     "def add(a, b): return a - b", "def add(a, b):\n    return a + b")
    assert data == b"class C:\n    def add(a, b):\n        return a + b\n"


def test_joined_lines_refuse_two_places_a_typo_and_unrelated_lines(ws: Path) -> None:
    refuse(ws, CALC + "\n" + CALC, "def add(a, b): return a - b", match="2 places when line breaks are ignored")
    refuse(ws, CALC, "def add(a, b): return a + b", match="closest passage is at line 1")
    refuse(ws, "def add(a, b):\n\n    return a - b\n", "def add(a, b): return a - b", match="not safe here")
    refuse(ws, "x = f(a,\n      b)\n", "x = f(a,b)", match="not found")  # spacing inside a word is a character


def test_an_edit_repeated_after_it_landed_says_so(ws: Path) -> None:
    (ws / "f.py").write_text("def greeting():\n    return \"Hello\"\n")
    edit_file({"path": "f.py", "old_text": "Hello", "new_text": "你好", "replace_all": True}, ctx(ws))
    for replace_all in (True, False):
        with pytest.raises(ToolError, match="new_text is already in the file at line 2: this edit seems to be done"):
            edit_file({"path": "f.py", "old_text": "Hello", "new_text": "你好", "replace_all": replace_all}, ctx(ws))


# -- what every edit keeps --------------------------------------------------------------------------
def test_crlf_tabs_chinese_and_no_final_newline_survive_a_relaxed_edit(ws: Path) -> None:
    content = "def 问候():\r\n\tif 真:\r\n\t\treturn '你好'\r\n\treturn '再见'".encode()
    out, data = edit(ws, content, "if 真:\n    return '你好'", "if 真:\n    return '您好'")
    assert data == "def 问候():\r\n\tif 真:\r\n\t\treturn '您好'\r\n\treturn '再见'".encode()
    assert "re-indented" in out or "tabs" in out


def test_a_utf8_bom_and_undecodable_bytes_are_kept(ws: Path) -> None:
    content = "\ufeffx = 1  \ny = 2\n".encode() + b"z = '\xe9'\n"
    _, data = edit(ws, content, "x = 1\ny = 2", "x = 3\ny = 2")
    assert data == "\ufeffx = 3\ny = 2\n".encode() + b"z = '\xe9'\n"


def test_replace_all_stays_exact(ws: Path) -> None:
    (ws / "f.py").write_text("x = 1  \nx = 1\n")
    edit_file({"path": "f.py", "old_text": "x = 1", "new_text": "x = 2", "replace_all": True}, ctx(ws))
    assert (ws / "f.py").read_text() == "x = 2  \nx = 2\n"


# -- multi_edit -------------------------------------------------------------------------------------
def test_multi_edit_applies_every_edit_in_order(ws: Path) -> None:
    (ws / "f.py").write_bytes(b"a = 1\r\nb = 2\r\n\tc = 3\r\n")
    out = multi_edit({"path": "f.py", "edits": [{"old_text": "a = 1", "new_text": "a = 10"},
                                                 {"old_text": "a = 10\nb = 2", "new_text": "a = 10\nb = 20"},
                                                 {"old_text": "    c = 3", "new_text": "    c = 30"}]}, ctx(ws)).output
    assert (ws / "f.py").read_bytes() == b"a = 10\r\nb = 20\r\n\tc = 30\r\n"
    assert "edit 3 of 3" in out


def test_multi_edit_is_all_or_nothing(ws: Path) -> None:
    (ws / "f.py").write_text("a = 1\nb = 2\n")
    before = (ws / "f.py").read_bytes()
    with pytest.raises(ToolError, match=r"(?s)edit 2 of 2: in f.py: old_text was not found.*no edit was applied"):
        multi_edit({"path": "f.py", "edits": [{"old_text": "a = 1", "new_text": "a = 5"},
                                               {"old_text": "b = 3", "new_text": "b = 6"}]}, ctx(ws))
    assert (ws / "f.py").read_bytes() == before
    with pytest.raises(ToolError, match="edit 1 must be an object"):
        multi_edit({"path": "f.py", "edits": [{"old_text": "a = 1"}]}, ctx(ws))
    with pytest.raises(ToolError, match="non-empty list"):
        multi_edit({"path": "f.py", "edits": []}, ctx(ws))


def test_undo_restores_the_exact_bytes_of_relaxed_edits(ws: Path, tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    checkpoints = Checkpoints(folder, ws, lambda record: None, lambda event: None)
    original = b"def f():\r\n\tif x:  \r\n\t\treturn 1\r\n"
    (ws / "f.py").write_bytes(original)
    checkpoints.begin_turn("fix it")
    edit_file({"path": "f.py", "old_text": "if x:\n    return 1", "new_text": "if y:\n    return 2"},
              ctx(ws, checkpoints))
    multi_edit({"path": "f.py", "edits": [{"old_text": "def f():", "new_text": "def g():"}]}, ctx(ws, checkpoints))
    assert (ws / "f.py").read_bytes() == b"def g():\r\n\tif y:\r\n\t\treturn 2\r\n"
    assert checkpoints.apply_undo(checkpoints.plan_undo()) == (["f.py"], [])
    assert (ws / "f.py").read_bytes() == original
