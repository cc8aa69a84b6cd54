"""File tools, the workspace guard, argument checking and the safety rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.credentials import is_credential_path
from core.tools.base import Tool, ToolContext, ToolError, params, parse_arguments
from core.tools.files import edit_file, list_files, read_file, write_file
from core.tools.safety import destructive_reason
from core.tools.search import search
from core.tools.workspace import OutsideWorkspace, Workspace
from tests.conftest import require_symlinks
from tests.support.tools import tool_context as ctx


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


# -- the workspace guard ------------------------------------------------------------------------
def test_paths_outside_the_workspace_are_refused(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("outside")
    guard = Workspace(ws)
    for path in ("../secret.txt", str(tmp_path / "secret.txt"), "/etc/passwd", "sub/../../secret.txt", "~/x"):
        with pytest.raises(OutsideWorkspace, match="outside the workspace"):
            guard.resolve(path)
    with pytest.raises(ToolError, match="outside the workspace"):
        read_file({"path": "../secret.txt"}, ctx(ws))
    with pytest.raises(ToolError, match="outside"):
        write_file({"path": str(tmp_path / "evil.txt"), "content": "x"}, ctx(ws))
    assert not (tmp_path / "evil.txt").exists()


def test_symlinks_that_lead_outside_are_refused(ws: Path, tmp_path: Path) -> None:
    require_symlinks(tmp_path)
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", ws / "link.txt")
    os.symlink(tmp_path, ws / "linkdir")
    for path in ("link.txt", "linkdir/secret.txt"):
        with pytest.raises(OutsideWorkspace, match="outside the workspace"):
            Workspace(ws).resolve(path)
    with pytest.raises(ToolError, match="through a symlink"):
        read_file({"path": "link.txt"}, ctx(ws))


def test_paths_inside_are_allowed_even_through_inner_symlinks(ws: Path) -> None:
    require_symlinks(ws)
    (ws / "real").mkdir()
    (ws / "real" / "a.txt").write_text("hi\n")
    os.symlink(ws / "real", ws / "alias")
    assert Workspace(ws).resolve("alias/a.txt") == (ws / "real" / "a.txt")
    assert Workspace(ws).resolve(str(ws / "real")) == ws / "real"


# -- read_file ------------------------------------------------------------------------------------
def test_read_file_numbers_lines_and_pages(ws: Path) -> None:
    (ws / "f.py").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = read_file({"path": "f.py", "offset": 10, "limit": 3}, ctx(ws))
    assert result.output.splitlines()[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "continue with read_file offset=13" in result.output
    assert result.outcome.path == "f.py" and result.outcome.total_lines == 100 and len(result.outcome.sha) == 64
    whole = read_file({"path": "f.py"}, ctx(ws))
    assert "continue" not in whole.output and whole.output.count("\n") == 99


def test_read_file_refuses_binary_and_reports_missing_files(ws: Path) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    with pytest.raises(ToolError, match="binary"):
        read_file({"path": "img.png"}, ctx(ws))
    (ws / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError, match=r"similar: config\.yaml"):
        read_file({"path": "config.yml"}, ctx(ws))
    with pytest.raises(ToolError, match="directory"):
        read_file({"path": "."}, ctx(ws))


def test_read_file_decodes_bad_utf8_and_caps_huge_files(ws: Path) -> None:
    (ws / "latin.txt").write_bytes("café 你好\n".encode() + b"caf\xe9\n")
    out = read_file({"path": "latin.txt"}, ctx(ws)).output
    assert "café 你好" in out and "caf\ufffd" in out
    (ws / "big.log").write_text(("x" * 100 + "\n") * 50_000)
    result = read_file({"path": "big.log"}, ctx(ws))
    assert len(result.output) < 70_000 and "character cap" in result.output and "offset=" in result.output
    (ws / "minified.js").write_text("a" * 1_000_000)
    assert "line cut" in read_file({"path": "minified.js"}, ctx(ws)).output


# -- write_file / edit_file ---------------------------------------------------------------------
def test_write_file_creates_parents_and_guards_credentials(ws: Path) -> None:
    result = write_file({"path": "a/b/c.txt", "content": "你好\n"}, ctx(ws))
    assert (ws / "a/b/c.txt").read_text(encoding="utf-8") == "你好\n" and "created a/b/c.txt" in result.output
    assert "overwrote" in write_file({"path": "a/b/c.txt", "content": "x"}, ctx(ws)).output
    with pytest.raises(ToolError, match="credential"):
        write_file({"path": ".env", "content": "KEY=1"}, ctx(ws))
    assert not (ws / ".env").exists()
    write_file({"path": ".env", "content": "KEY=1"}, ctx(ws, approve=True))
    assert (ws / ".env").read_text() == "KEY=1"


def test_edit_file_needs_exactly_one_match(ws: Path) -> None:
    (ws / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 1\n")
    with pytest.raises(ToolError, match=r"in m.py: old_text matches 2 times \(lines 2, 5\)"):
        edit_file({"path": "m.py", "old_text": "    return 1", "new_text": "    return 2"}, ctx(ws))
    result = edit_file({"path": "m.py", "old_text": "def g():\n    return 1", "new_text": "def g():\n    return 3"},
                       ctx(ws))
    assert "line 4" in result.output and (ws / "m.py").read_text().endswith("return 3\n")
    with pytest.raises(ToolError, match="closest passage is at line 1"):
        edit_file({"path": "m.py", "old_text": "def f(x):\n    return 1", "new_text": "z"}, ctx(ws))
    with pytest.raises(ToolError, match="whitespace"):
        edit_file({"path": "m.py", "old_text": "def f():\n  return 1", "new_text": "z"}, ctx(ws))
    edit_file({"path": "m.py", "old_text": "return", "new_text": "yield", "replace_all": True}, ctx(ws))
    assert (ws / "m.py").read_text().count("yield") == 2


def test_edit_file_keeps_crlf_files_crlf(ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    edit_file({"path": "w.txt", "old_text": "one\ntwo", "new_text": "uno\ndos"}, ctx(ws))
    assert (ws / "w.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


# -- list_files / search ------------------------------------------------------------------------
def test_list_files_skips_noise_and_respects_depth(ws: Path) -> None:
    for rel in ("src/app.py", "src/deep/er/x.py", "node_modules/pkg/index.js", ".git/HEAD", "README.md"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x")
    out = list_files({"max_depth": 2}, ctx(ws)).output
    assert "src/app.py" in out and "src/deep/" in out and "src/deep/er/x.py" not in out
    assert "node_modules/pkg" not in out and "not listed: .git/, node_modules/" in out


def test_list_files_shows_a_symlink_by_its_own_name(ws: Path, tmp_path: Path) -> None:
    require_symlinks(ws)
    (ws / "real.py").write_text("x")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("y")
    os.symlink("real.py", ws / "link.py")
    os.symlink("pkg", ws / "alias")
    (tmp_path / "private.txt").write_text("z")
    os.symlink(tmp_path / "private.txt", ws / "escape.txt")
    lines = list_files({}, ctx(ws)).output.splitlines()
    assert lines == ["alias/ -> pkg/", "escape.txt -> (outside the workspace)", "link.py -> real.py", "pkg/",
                     "pkg/mod.py", "real.py"]
    assert str(tmp_path) not in "\n".join(lines)


def test_edit_file_on_a_folder_never_names_what_is_outside_the_workspace(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "ws2").mkdir()  # a sibling of the workspace whose name is close to it
    (ws / "src").mkdir()
    for path in (".", "src", str(ws)):
        with pytest.raises(ToolError) as info:
            edit_file({"path": path, "old_text": "a", "new_text": "b"}, ctx(ws))
        assert "is a directory" in str(info.value) and str(tmp_path) not in str(info.value)
        assert "ws2" not in str(info.value)
    with pytest.raises(ToolError, match=r"'srd/x.py' does not exist$"):
        edit_file({"path": "srd/x.py", "old_text": "a", "new_text": "b"}, ctx(ws))
    (ws / "src" / "main.py").write_text("a")
    with pytest.raises(ToolError, match=r"similar: src/main\.py"):
        edit_file({"path": "src/mian.py", "old_text": "a", "new_text": "b"}, ctx(ws))


def test_search_finds_matches_and_reports_bad_regex(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("core.tools.helpers.find", lambda name, avoid=(): None)  # the Python fallback
    (ws / "a.py").write_text("import os\nTODO: fix 你好\n", encoding="utf-8")
    (ws / "b.bin").write_bytes(b"TODO\0\0")
    out = search({"pattern": "TODO", "path": "."}, ctx(ws)).output
    assert out == "a.py:2:TODO: fix 你好"
    assert "no matches" in search({"pattern": "absent"}, ctx(ws)).output
    with pytest.raises(ToolError, match="invalid regular expression"):
        search({"pattern": "("}, ctx(ws))


# -- arguments ----------------------------------------------------------------------------------
TOOL = Tool("t", "", params({"path": {"type": "string"}, "n": {"type": "integer"}, "f": {"type": "boolean"}},
                            ["path"]), lambda a, c: None)


def test_argument_errors_are_clear() -> None:
    with pytest.raises(ToolError, match="not valid JSON"):
        parse_arguments('{"path": "x"', TOOL)
    with pytest.raises(ToolError, match=r"missing required argument.*path"):
        parse_arguments("{}", TOOL)
    with pytest.raises(ToolError, match=r"unknown argument.*bogus"):
        parse_arguments('{"path": "x", "bogus": 1}', TOOL)
    with pytest.raises(ToolError, match="must be an integer"):
        parse_arguments('{"path": "x", "n": "ten"}', TOOL)
    assert parse_arguments('{"path": "x", "n": "10", "f": "true"}', TOOL) == {"path": "x", "n": 10, "f": True}


# -- safety -------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["rm -rf /", "rm -rf ~", "sudo rm -fr /usr", "rm -rf .", "rm -r -f *",
                                     "git push --force origin main", "git push -f", "mkfs.ext4 /dev/sdb1",
                                     "dd if=/dev/zero of=/dev/sda", "echo k >> ~/.ssh/authorized_keys",
                                     "cp key ~/.aws/credentials", "git reset --hard", "format c:",
                                     "sudo shutdown -h now", "git checkout -- .", "git restore ."])
def test_destructive_commands_are_flagged(command: str) -> None:
    assert destructive_reason(command)


@pytest.mark.parametrize("command", ["rm -rf build", "rm -rf node_modules dist", "git push origin main",
                                     "ls -la", "cat .env", "npm run format", "pytest -q", "rm file.txt",
                                     "grep -rn shutdown src/", "cat docs/halt.md", "git restore --staged ."])
def test_ordinary_commands_are_not_flagged(command: str) -> None:
    assert destructive_reason(command) is None


def test_credential_paths() -> None:
    assert all(is_credential_path(p) for p in (".env", "app/.env.local", ".ssh/id_rsa", ".npmrc", ".netrc"))
    assert not any(is_credential_path(p) for p in ("src/env.py", "environment.yml", "README.md", ".env.example"))


def test_edit_file_with_mixed_line_endings(ws: Path) -> None:
    (ws / "mixed.py").write_bytes(b"# header\r\n\ndef f():\n    return 1\n")
    edit_file({"path": "mixed.py", "old_text": "def f():\n    return 1", "new_text": "def f():\n    return 2"}, ctx(ws))
    assert (ws / "mixed.py").read_bytes() == b"# header\r\n\ndef f():\n    return 2\n"


def test_search_does_not_follow_links_out_of_the_workspace(ws: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    require_symlinks(ws)
    monkeypatch.setattr("core.tools.helpers.find", lambda name, avoid=(): None)
    (tmp_path / "outside.txt").write_text("root:x:0:0\n")
    os.symlink(tmp_path / "outside.txt", ws / "notes.txt")
    (ws / "inside.txt").write_text("root:inside\n")
    assert search({"pattern": "^root:"}, ctx(ws)).output == "inside.txt:1:root:inside"
    with pytest.raises(ToolError, match="does not exist"):
        search({"pattern": "x", "path": "nope"}, ctx(ws))


def test_read_file_memory_stays_bounded_on_a_giant_line(ws: Path) -> None:
    import tracemalloc

    with (ws / "dump.json").open("wb") as handle:
        for _ in range(50):
            handle.write(b"x" * (1024 * 1024))
        handle.write(b"\nsecond line\n")
    tracemalloc.start()
    result = read_file({"path": "dump.json", "limit": 1}, ctx(ws))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "line cut: 52,428,800 bytes" in result.output and result.outcome.total_lines == 2
    assert peak < 5 * 1024 * 1024


def test_absurd_numbers_are_argument_errors_not_crashes() -> None:
    for raw in ('{"path": "x", "n": 1e400}', '{"path": "x", "n": "nan"}'):
        with pytest.raises(ToolError, match="must be an integer"):
            parse_arguments(raw, TOOL)


# -- the redaction placeholder ------------------------------------------------------------------
SETTINGS_WITH_CREDENTIALS = ('DEBUG = True\nDATABASE_URL = "postgres://app:s3cr3t-Passw0rd-991@db:5432/app"\n'
                             'GITHUB_TOKEN = "ghp_Zq8vN2kLm4Pw7Rt1Yx5Cb9Hj3Fd6Gs0Ae2Ui"\nTIMEOUT = 30\n')


def test_writing_back_the_redacted_view_of_a_file_is_refused_and_loses_nothing(ws: Path) -> None:
    from core.secrets import REDACTED, Redactor

    (ws / "settings.py").write_text(SETTINGS_WITH_CREDENTIALS)
    seen = Redactor()(read_file({"path": "settings.py"}, ctx(ws)).output)  # what the model is shown
    assert REDACTED in seen and "s3cr3t" not in seen and "ghp_" not in seen
    shown = "".join(line.split("\t", 1)[1] + "\n" for line in seen.splitlines() if "\t" in line)
    attempts = [
        lambda: write_file({"path": "settings.py", "content": shown.replace("DEBUG = True", "DEBUG = False")}, ctx(ws)),
        lambda: write_file({"path": "copy_of_settings.py", "content": shown}, ctx(ws)),
        lambda: edit_file({"path": "settings.py", "old_text": "DEBUG = True",
                           "new_text": f'DEBUG = True\nAPI_KEY = "{REDACTED}"'}, ctx(ws)),
        lambda: edit_file({"path": "settings.py", "old_text": shown.splitlines()[2],
                           "new_text": shown.splitlines()[2] + "  # rotated"}, ctx(ws)),
    ]
    for attempt in attempts:
        with pytest.raises(ToolError):
            attempt()
    assert (ws / "settings.py").read_text() == SETTINGS_WITH_CREDENTIALS
    assert not (ws / "copy_of_settings.py").exists()
    edit_file({"path": "settings.py", "old_text": "TIMEOUT = 30", "new_text": "TIMEOUT = 60"}, ctx(ws))
    assert (ws / "settings.py").read_text() == SETTINGS_WITH_CREDENTIALS.replace("TIMEOUT = 30", "TIMEOUT = 60")


def test_a_file_that_already_holds_the_placeholder_can_still_be_edited(ws: Path) -> None:
    from core.secrets import REDACTED

    (ws / "redaction.md").write_text(f"Secrets show as {REDACTED}.\nSee also {REDACTED} in logs.\n")
    edit_file({"path": "redaction.md", "old_text": "in logs", "new_text": "in the journal"}, ctx(ws))
    assert (ws / "redaction.md").read_text().count(REDACTED) == 2
    with pytest.raises(ToolError, match="more time"):
        edit_file({"path": "redaction.md", "old_text": "journal", "new_text": f"journal, and {REDACTED}"}, ctx(ws))


# -- what a model that guesses is shown -----------------------------------------------------------
def _seeing(root: Path, *seen: str) -> ToolContext:
    """The tools' context for a model that was shown only the files `seen`."""
    context = ctx(root)
    context.seen = lambda rel: rel in seen
    return context


@pytest.mark.parametrize(("content", "shown", "not_shown"), [
    (b"def add(a, b):\n    return a - b\n", ["     1\tdef add(a, b):", "     2\t    return a - b", "its 2 lines"], []),
    ("".join(f"line {n}\n" for n in range(1, 101)).encode(), ["    60\tline 60", "40 more lines: read_file"],
     ["line 61"]),
    ("价格 = 1\r\n名称 = '猫'\r\n".encode(), ["     1\t价格 = 1", "     2\t名称 = '猫'"], ["\r"]),
    (bytes(range(256)) * 8, ["binary file (2,048 bytes)"], []),
])
def test_a_write_over_a_file_the_model_never_saw_is_refused_once_with_its_content(
        ws: Path, content: bytes, shown: list[str], not_shown: list[str]) -> None:
    (ws / "calc.py").write_bytes(content)
    refused = write_file({"path": "calc.py", "content": "guessed\n"}, _seeing(ws))
    assert refused.status == "error" and refused.outcome.path == "calc.py"
    assert "was not read in this session" in refused.output and "call write_file again" in refused.output
    assert all(s in refused.output for s in shown) and not any(s in refused.output for s in not_shown)
    assert (ws / "calc.py").read_bytes() == content  # nothing lost
    written = write_file({"path": "calc.py", "content": "replaced\n"}, _seeing(ws, "calc.py"))
    assert written.status == "ok" and (ws / "calc.py").read_text() == "replaced\n"


def test_writes_that_lose_nothing_unseen_are_not_refused(ws: Path) -> None:
    (ws / "empty.txt").write_bytes(b"")
    for path in ("empty.txt", "new.txt", "fresh/dir/new.txt"):
        assert write_file({"path": path, "content": "x\n"}, _seeing(ws)).status == "ok", path


@pytest.mark.parametrize("old, new, gone", [
    ("def add(a, b):\n    return a + b\n", "def multiply(a, b):\n    return a * b\n",
     "2 line(s) of the old file are not in the new one: `def add(a, b):`, `return a + b`."),
    ("一\n二\n三\n四\n五\n", "一\n", "4 line(s) of the old file are not in the new one: `二`, `三`, `四` …."),
    ("[a]\r\nkey=1\r\n", "[a]\nkey=2\n", "1 line(s) of the old file are not in the new one: `key=1`."),
])
def test_a_whole_file_write_names_the_lines_it_left_out(ws: Path, old: str, new: str, gone: str) -> None:
    (ws / "f.txt").write_bytes(old.encode())
    written = write_file({"path": "f.txt", "content": new}, _seeing(ws, "f.txt"))
    assert written.status == "ok" and gone in written.output
    assert written.output.endswith("If they should have stayed, put them back (edit_file adds without rewriting)")


@pytest.mark.parametrize("old, new", [
    ("def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"),
    ("b = 2\na = 1\n", "a = 1\n\nb = 2\n"),  # reordered, blank lines added
    ("\0\1binary", "text\n"),
])
def test_a_write_that_keeps_every_line_says_nothing_more(ws: Path, old: str, new: str) -> None:
    (ws / "f.txt").write_bytes(old.encode())
    written = write_file({"path": "f.txt", "content": new}, _seeing(ws, "f.txt"))
    assert written.status == "ok" and "not in the new one" not in written.output


def test_a_write_that_changes_nothing_says_so(ws: Path) -> None:
    (ws / "banner.py").write_bytes(b'def banner():\n    return "Welcom to the shop"\n')
    with pytest.raises(ToolError, match=r"the content is exactly what banner\.py already holds: banner\.py is unchanged"):
        write_file({"path": "banner.py", "content": 'def banner():\n    return "Welcom to the shop"\n'},
                   _seeing(ws, "banner.py"))
    for same in ('def banner():\n    return "Welcom to the shop"', 'def banner():  \r\n\n    return "Welcom to the shop"\r\n'):
        written = write_file({"path": "banner.py", "content": same}, _seeing(ws, "banner.py"))
        assert written.status == "ok" and written.output.endswith("the text is as it was"), repr(same)
    fixed = write_file({"path": "banner.py", "content": 'def banner():\n    return "Welcome to the shop"\n'},
                       _seeing(ws, "banner.py"))
    assert "whitespace" not in fixed.output


def test_a_missing_path_names_the_file_of_that_name_elsewhere(ws: Path) -> None:
    (ws / "lists.py").write_text("def first(xs):\n    return xs[1]\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "main.py").write_text("import os\n")
    (ws / "node_modules" / "x").mkdir(parents=True)
    (ws / "node_modules" / "x" / "util.js").write_text("")
    for path, named in (("tests/lists.py", "lists.py"), ("src/main.py", "pkg/main.py"), ("lib/lists.py", "lists.py")):
        with pytest.raises(ToolError, match=f"a file of that name is at {named}$"):
            edit_file({"path": path, "old_text": "a", "new_text": "b"}, ctx(ws))
    with pytest.raises(ToolError, match=r"'src/main\.py' does not exist; a file"):
        read_file({"path": "src/main.py"}, ctx(ws))
    with pytest.raises(ToolError, match=r"'lib/util\.js' does not exist$"):  # what SKIP_DIRS hides stays hidden
        read_file({"path": "lib/util.js"}, ctx(ws))
    created = write_file({"path": "tests/lists.py", "content": "x = 1\n"}, ctx(ws))
    assert created.output.endswith("note: its folder is new, and a file of that name is at lists.py")
    assert "note" not in write_file({"path": "tests/other.py", "content": "x\n"}, ctx(ws)).output


def test_an_edit_that_misses_a_small_file_shows_it_whole_and_names_it(ws: Path) -> None:
    (ws / "shop.py").write_text("def total(prices):\n    result = 0\n    for p in prices:\n        result = p\n"
                                "    return result\n")
    with pytest.raises(ToolError) as small:
        edit_file({"path": "shop.py", "old_text": "total = prices[-1]", "new_text": "total = sum(prices)"}, ctx(ws))
    assert small.value.path == "shop.py"
    assert "the whole file (6 lines) is:" in str(small.value) and "     4\t        result = p" in str(small.value)
    lines = [f"x{n} = {n}" for n in range(200)]
    lines[150] = "def compute_totals(prices):"
    (ws / "big.py").write_text("\n".join(lines) + "\n")
    with pytest.raises(ToolError) as big:
        edit_file({"path": "big.py", "old_text": "def compute_total(prices):", "new_text": "def f():"}, ctx(ws))
    assert "closest passage is at line 151" in str(big.value) and "whole file" not in str(big.value)
    assert "x3 = 3" not in str(big.value)
