"""A command that changes `.git/config` or a hook asks: git runs the programs they name by itself
(fsmonitor at every status, filters, aliases, a hook at the next commit), in later sessions too."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.safety import destructive_reason

CHANGES = [
    "echo '[core] fsmonitor = ./x' >> .git/config", "printf x > .git/config", "tee -a .git/config < snippet",
    "sed -i 's/false/true/' .git/config", "cp evil.cfg .git/config", "mv new.cfg ./.git/config",
    "echo x > sub/../.git/config", "cat x > .git/config.worktree", "echo 'rm -rf ~' > .git/hooks/pre-commit",
    "cp run.sh .git/hooks/post-checkout", "ln -sf ../../run.sh .git/hooks/pre-push", "mv run.sh .git/hooks/commit-msg",
    "install -m 755 run.sh .git/hooks/pre-commit", "dd if=run.sh of=.git/hooks/pre-commit",
    "rm .git/hooks/pre-commit", "cd .git && echo x > config", "cd .git/hooks; cp ../../run.sh post-merge",
    "git config core.fsmonitor ./watch.sh", "git config --local alias.t '!sh run.sh'", "git config set core.pager ./p",
    "git config --add filter.x.clean ./c", "git config --replace-all core.hooksPath h", "git config -e",
    "git config --unset core.fsmonitor", "git -C . config diff.x.textconv ./t", "git config --file .git/config a.b c",
    "git config --global core.editor ./e", "git config --type=bool core.fsmonitor true",
]
ORDINARY = [
    "git config user.name", "git config --get core.fsmonitor", "git config -l", "git config --list --show-origin",
    "git config get user.email", "git config --get-regexp '^filter'", "cat .git/config", "grep url .git/config",
    "ls .git/hooks", "echo x > .git/info/exclude", "echo hi > notes.txt", "cp a.txt b.txt", "git status",
    "git log -1", "echo config > hooks.txt", "mkdir -p hooks && echo x > hooks/pre-commit",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


@pytest.mark.parametrize("command", CHANGES)
def test_a_change_to_gits_programs_asks(command: str, workspace: Path) -> None:
    why = destructive_reason(command, workspace, "posix")
    assert why is not None and ("git's configuration" in why or "git hook" in why), why


@pytest.mark.parametrize("command", ORDINARY)
def test_reading_them_or_ordinary_files_does_not(command: str, workspace: Path) -> None:
    assert destructive_reason(command, workspace, "posix") is None
