"""The approval modes: what asks before it runs in auto (confined), ask (no sandbox) and yes; the
read-only table; allow rules kept per workspace; /mode."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from core.agent.rules import AllowRules, rule_for
from core.modes import ASK, AUTO, YES
from core.sandbox import Policy
from core.tools.safety import NOT_KNOWN_READ_ONLY, command_question
from core.tools.safety.readonly import is_read_only

# A workspace outside the temp folders (they are scratch space) wherever the checkout lies: at the
# root of the current drive, not beside the checkout (a clone in /tmp would put it inside one).
WS = Path(Path.cwd().anchor) / "projects" / "app"
def NOTHING_ALLOWED(command: str, dialect: str) -> bool:
    return False

READERS = ["ls -la", "git status", "git log --oneline -5 | head -3", "grep -rn TODO . | wc -l",
           "cat README.md > /dev/null", "find . -name '*.py'", "for f in *.py; do wc -l \"$f\"; done",
           "echo $(pwd)", "python3 --version", "git -C sub diff --stat", "git branch", "pip list",
           "sed -n 1,20p app.py", "cat $FILE"]
WRITERS = ["pytest -x", "python3 app.py", "cat a > b.txt", "find . -name '*.pyc' -delete", "git commit -m x",
           "echo $(rm -rf build)", "sed -i s/a/b/ app.py", "git branch -D old", "npm install", "$TOOL --list",
           "find $DIR", "sort -o out.txt in.txt", "make", "touch x"]


@pytest.mark.parametrize("command", READERS)
def test_known_readers_are_read_only(command: str) -> None:
    assert is_read_only(command, "posix")


@pytest.mark.parametrize("command", WRITERS)
def test_anything_else_is_not(command: str) -> None:
    assert not is_read_only(command, "posix")


@pytest.mark.parametrize("command, dialect", [("Get-ChildItem -Recurse | Select-String TODO", "powershell"),
                                              ("Get-Content a.txt", "powershell"), ("dir /s", "cmd"),
                                              ("type a.txt", "cmd")])
def test_windows_readers(command: str, dialect: str) -> None:
    assert is_read_only(command, dialect)


# The sandbox's policy for WS: it writes the workspace and the system's temp folder.
POLICY = Policy(workspace=WS, writable=(WS, Path(tempfile.gettempdir()).resolve()), denied=())


def _ask(command: str, mode: str, confined: bool, allowed=NOTHING_ALLOWED):
    return command_question(command, WS, mode, policy=POLICY if confined else None, allowed=allowed)


@pytest.mark.parametrize("command", ["pytest -x", "python3 -c \"open('g.txt','w').write('x')\"",
                                     "cp .env.example .env", "chmod -R u+w .", "ls $(mktemp -d)",
                                     "touch a.orig && find . -name '*.orig' | xargs rm -f"])
def test_auto_runs_ordinary_work_unasked(command: str) -> None:
    assert _ask(command, AUTO, confined=True) is None


@pytest.mark.parametrize("command", ["rm -rf .git", "git reset --hard", "git push --force origin main",
                                     "rm -rf .", "git clean -fdx", "ls; git stash clear"])
def test_auto_still_asks_for_what_no_sandbox_stops(command: str) -> None:
    question = _ask(command, AUTO, confined=True)
    assert question is not None and question.kind == "command", command


@pytest.mark.parametrize("command", ["rm -rf ~", "rm -rf /etc/nginx", "cp x /usr/local/bin/x", "ls; rm -rf ~/.ssh",
                                     "mv src ../elsewhere"])
def test_auto_asks_up_front_to_leave_the_sandbox_for_what_it_would_surely_block(command: str) -> None:
    question = _ask(command, AUTO, confined=True)
    assert question is not None and question.kind == "unconfined" and "outside the workspace" in question.reason


def test_ask_mode_asks_for_everything_not_known_to_read() -> None:
    assert _ask("git status", ASK, confined=False) is None
    question = _ask("pytest -x", ASK, confined=False)
    assert question is not None and question.reason == NOT_KNOWN_READ_ONLY
    assert _ask("pytest -x", ASK, confined=False, allowed=lambda c, d: c.startswith("pytest")) is None
    destructive = _ask("rm -rf ~", ASK, confined=False, allowed=lambda c, d: True)
    assert destructive is not None and "outside the workspace" in destructive.reason  # a rule never covers it


def test_without_a_sandbox_auto_and_yes_fall_back_to_the_gate() -> None:
    for mode in (AUTO, YES):
        assert _ask("pytest -x", mode, confined=False) is None
        question = _ask("rm -rf ~", mode, confined=False)
        assert question is not None and question.kind == "command"


def test_every_reason_of_a_line_is_given() -> None:
    question = _ask("rm -rf ~/a; echo ok && git push --force origin main; rm -rf /etc/x", AUTO, confined=False)
    assert question is not None
    assert question.reason.count("outside the workspace") == 2 and "force push" in question.reason


def test_allow_rules_persist_per_workspace_outside_the_repository(tmp_path: Path) -> None:
    data, ws, other = tmp_path / "data", tmp_path / "ws", tmp_path / "other"
    rules = AllowRules(data, ws)
    assert rules.add("pytest") is None and rules.add("npm  run") is None
    again = AllowRules(data, ws)
    assert again.commands == ["pytest", "npm run"]
    assert again.allows("pytest -x tests/", "posix") and again.allows("npm run build && pytest", "posix")
    assert not again.allows("npm install", "posix") and not again.allows("pytest; rm -rf x", "posix")
    assert not AllowRules(data, other).allows("pytest", "posix")
    assert not list(ws.parent.glob("ws/**/*"))  # nothing written into the workspace
    assert AllowRules(data, ws, extra=("make",)).allows("make test", "posix")


def test_an_unwritable_data_folder_keeps_the_rule_for_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")
    rules = AllowRules(blocker, tmp_path / "ws")
    said = rules.add("pytest")
    assert said and "this run only" in said and rules.allows("pytest", "posix")


@pytest.mark.parametrize("command, rule", [("pytest -x", "pytest"), ("npm run build", "npm run"),
                                           ("git commit -m x", "git commit"), ("python3 a.py; python3 b.py", "python3"),
                                           ("cd x && make", None), ("$TOOL run", None), ("cargo --version", "cargo")])
def test_the_rule_offered_names_the_program(command: str, rule: str | None) -> None:
    assert rule_for(command, "posix") == rule


@pytest.mark.parametrize("glue", [" && ", "; ", " || ", " | "])
def test_a_long_line_keeps_each_risky_segment(glue: str) -> None:
    from ui.approval_text import compact_action

    command = glue.join(["echo " + "x" * 300, "rm -rf ~/projects", "echo y " * 60, "git push --force origin main",
                         "echo done"])
    shown = compact_action("run: " + command, command, str(WS), line_chars=120)
    assert "rm -rf ~/projects" in shown and "git push --force origin main" in shown
    assert len(shown) < 300 and "characters…" in shown
