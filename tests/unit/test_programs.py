"""The test helper that skips a command whose programs a fresh machine lacks."""

from __future__ import annotations

import sys

import pytest

from tests.support.programs import missing_programs, programs


@pytest.mark.parametrize(("command", "wanted"), [
    ("ruby -e 'File.delete(\"../x/f.txt\")'", ["ruby"]),
    ("ls -d ../x | parallel rm -rf", ["ls", "parallel", "rm"]),
    ("X=1 env -u A nice -n 5 gdb -batch", ["env", "nice", "gdb"]),
    ("echo $(ruby -v) && cd .. && shopt -s extglob", ["ruby", "echo", "cd", "shopt"]),
    ("timeout 5 perl -e 1; xargs -I{} rm {}", ["timeout", "perl", "xargs", "rm"]),
    ("echo 'unclosed", []),
])
def test_the_programs_a_command_line_starts(command: str, wanted: list[str]) -> None:
    assert programs(command) == wanted


@pytest.mark.skipif(sys.platform == "win32", reason="bash's builtins")
def test_only_programs_neither_installed_nor_builtin_are_missing() -> None:
    assert missing_programs("no-such-program-0xdead --x | sort") == ["no-such-program-0xdead"]
    assert missing_programs("cd .. && shopt -s extglob && [ -e x ] && coproc true; wait") == []
    assert missing_programs("./local-script.sh && /opt/none/bin/tool") == []  # paths are the test's own business
    assert missing_programs("shopt -s expand_aliases\nalias zz='rm -rf ../x'\nzz") == []
    assert missing_programs("f() { rm -rf ../x; }; f") == []
