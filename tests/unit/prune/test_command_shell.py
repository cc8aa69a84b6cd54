"""The program that printed the output, found as a shell finds it."""

from __future__ import annotations

import pytest

from core.prune.command import parse_command
from core.prune.views import is_view


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("javac -Xlint:all -d build $(find src -name '*.java' | sort)", ("javac",)),
        ("javac -d build `find src -name '*.java'`", ("javac",)),
        ('gcc -o app "$(ls *.c | head -1)" $(pkg-config --cflags "gtk+-3.0")', ("gcc",)),
        ("diff <(sort a.txt) <(sort b.txt)", ("diff",)),
        ("cmd /c dir /s", ("dir",)),
        ('cmd.exe /C "build.bat release"', ("build",)),
        ("CMD /S /C call build.cmd", ("build",)),
        ('powershell -NoProfile -Command "Get-ChildItem -Recurse | Select-Object Name"', ("select-object",)),
        ("pwsh -c Get-Content app.log", ("get-content",)),
        ("bash -c 'cd app && make -j4 2>&1 | tail -50'", ("make",)),
        ('sh -ec "npm ci && npx jest --ci"', ("jest",)),
        (r"C:\py311\python.exe -m pytest -q", ("pytest",)),
        (r"C:\tools\build.bat", ("build",)),
        (r".\venv\Scripts\pip.exe install numpy", ("pip",)),
        ("cd src && set -e && ls -la", ("ls",)),
        ("time nice -n 5 env FOO=1 npx ruff check .", ("ruff",)),
        ("uvx ruff check", ("ruff",)),
        ("pipx run black --check .", ("black",)),
        ("py -m pip install x", ("pip",)),
        ("make && ./run_tests", ("make", "run_tests")),
        ("export CI=1; prove -v t/", ("prove",)),
        ("set", ("set",)),
    ],
)
def test_the_program_behind_substitutions_shells_and_wrappers(
    command: str, programs: tuple[str, ...]
) -> None:
    assert parse_command(command).programs == programs


@pytest.mark.parametrize(
    "command",
    [
        "cmd /c dir /s",
        "dir /b",
        "type config.ini",
        "cmd /c type README.txt",
        "Get-ChildItem -Recurse",
        'powershell -Command "Get-Content app.log -Tail 50"',
        "findstr /s /n TODO *.c",
        "where python",
        "gci src",
        "ls -la",
        "cd src && cat main.c",
        "git log --oneline -20",
        "git log -n 30",
        "git show HEAD",
        "git branch -a",
        "grep -rn TODO src",
        "bash -c 'grep -rn TODO .'",
    ],
)
def test_queries_of_every_platform_are_views(command: str) -> None:
    assert is_view(parse_command(command))


@pytest.mark.parametrize(
    "command", ["git log", "find . -name '*.py'", "make", "cmd /c build.bat", "javac $(find src)"]
)
def test_logs_and_listings_are_not_views(command: str) -> None:
    assert not is_view(parse_command(command))
