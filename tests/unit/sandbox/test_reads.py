"""Reads by allowlist: in the home folder a confined command reads only what tools need, and
nothing beside the workspace; ordinary work and real builds still run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import load_settings
from core.sandbox.blocked import how_to_allow, sandbox_denial
from core.sandbox.policy import Policy
from core.secrets import spellings, squeeze
from tests.support.ordinary_work import ORDINARY_WORK
from tests.support.sandbox_builds import BUILDS, available
from tests.support.sandbox_corpus import CANARY, ORDINARY, Layout
from tests.support.sandbox_fixtures import confinement, run
from tests.support.sandbox_reads import ONE_FILE, WHOLE_HOME, write_credential_home


def _leaked(output: bytes, credentials: list[str]) -> list[str]:
    text = squeeze(output.decode(errors="replace"))
    return [c for c in credentials if any(form in text for form in spellings(c))]


@pytest.mark.parametrize("command", WHOLE_HOME)
def test_no_credential_in_the_home_folder_can_be_read(layout: Layout, backend: str, command: str) -> None:
    files = write_credential_home(layout.home, layout.workspace)
    every = [c for _, found in files for c in found]
    done = run(command, layout, confinement(layout, backend), timeout=60)
    assert not _leaked(done.output, every)
    assert CANARY not in done.output.decode(errors="replace")
    # the same command unconfined does read them: the test can fail
    assert _leaked(run(command, layout, None, timeout=60).output, every)


def test_each_credential_file_is_unreadable_in_every_spelling(layout: Layout, backend: str) -> None:
    files = write_credential_home(layout.home, layout.workspace)
    confined = confinement(layout, backend)
    for path, credentials in files:
        for spelling in ONE_FILE:
            done = run(spelling.format(f=path), layout, confined)
            assert not _leaked(done.output, credentials), (path, spelling)
    assert (layout.base / "other" / ".env") in [p for p, _ in files]


@pytest.mark.parametrize("command", ["cat ../x/f.txt", "ls ../x && cat ../x/*", "grep -r . .. 2>/dev/null",
                                     "python3 -c \"print(open('../x/f.txt').read())\"", "tar -cf - .. | cat"])
def test_the_workspaces_siblings_are_unreadable(layout: Layout, backend: str, command: str) -> None:
    done = run(command, layout, confinement(layout, backend))
    assert CANARY not in done.output.decode(errors="replace")
    assert CANARY in run(command, layout, None).output.decode(errors="replace")


def test_a_folder_the_user_lists_becomes_readable_and_secrets_stay_denied(layout: Layout, backend: str) -> None:
    files = write_credential_home(layout.home, layout.workspace)
    confined = confinement(layout, backend, AGENT_SANDBOX_READABLE=os.pathsep.join([str(layout.home / "cKEY"),
                                                                                    "~/.config"]))
    assert CANARY in run("cat ~/cKEY/f.txt", layout, confined).output.decode()
    denied = [(p, c) for p, c in files if p.is_relative_to(layout.home / ".config/git")
              or p.is_relative_to(layout.home / ".config/gcloud")]
    assert denied
    for path, credentials in denied:
        assert not _leaked(run(f"cat {path}", layout, confined).output, credentials), path
    assert CANARY not in run("cat ../x/f.txt", layout, confined).output.decode(errors="replace")


def test_plain_git_configuration_is_read_and_its_credential_store_is_not(layout: Layout, backend: str) -> None:
    write_credential_home(layout.home, layout.workspace)
    (layout.home / ".gitconfig").write_text("[alias]\n\tsee = status --short\n")
    done = run("git see && git config --global alias.see && cat ~/.config/git/credentials", layout,
               confinement(layout, backend))
    assert b"status --short" in done.output and b"@github.com" not in done.output


def test_a_workspace_inside_the_home_folder_works_and_its_neighbours_stay_hidden(layout: Layout,
                                                                                 backend: str) -> None:
    files = write_credential_home(layout.home, layout.workspace)
    inner = layout.home / "projects" / "app"
    inner.parent.mkdir(parents=True)
    shutil.move(layout.workspace, inner)
    layout.workspace.symlink_to(inner)  # run() starts commands in layout.workspace
    (inner.parent / "other").mkdir()
    (inner.parent / "other" / "f.txt").write_text(CANARY)
    confined = confinement(layout, backend)
    assert confined.policy.workspace == inner
    for command in [*ORDINARY, *ORDINARY_WORK.values()]:
        done = run(command, layout, confined, timeout=60)
        assert done.exit_code == 0, (command, done.output[-400:])
    every = [c for _, found in files for c in found]
    for command in WHOLE_HOME[:3]:
        assert not _leaked(run(command, layout, confined, timeout=60).output, every), command
    assert CANARY not in run("cat ../other/f.txt ~/cKEY/f.txt", layout, confined).output.decode(errors="replace")


def test_the_agents_own_settings_and_sessions_stay_denied_in_a_readable_home(layout: Layout, backend: str) -> None:
    config = layout.home / ".config" / "deepseek-agent"
    sessions = layout.home / ".local" / "state" / "deepseek-agent" / "sessions"
    for folder, name in ((config, ".env"), (sessions, "s.jsonl")):
        folder.mkdir(parents=True)
        (folder / name).write_text(CANARY)
    confined = confinement(layout, backend, AGENT_SANDBOX_READABLE=str(layout.home))
    assert CANARY in run("cat ~/cKEY/f.txt", layout, confined).output.decode()
    done = run(f"cat {config / '.env'} {sessions / 's.jsonl'}; grep -r . ~/.config ~/.local", layout, confined)
    assert CANARY not in done.output.decode(errors="replace")


@pytest.mark.parametrize("name", list(BUILDS))
def test_real_builds_pass_with_the_users_own_home_folder(backend: str, name: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Not the fake home of the other tests: the toolchains live in the real one."""
    if name not in available():
        pytest.skip(f"{BUILDS[name].tool} is not installed")
    made = Layout.create()
    try:
        confined = confinement(made, backend)
        assert confined.policy.workspace.is_relative_to(Path.home())
        done = run(BUILDS[name].script, made, confined, timeout=300)
        assert done.exit_code == 0, done.output[-1500:]
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(made.base)], check=False)
        made.remove()


def test_a_refused_read_names_the_setting_that_allows_it(layout: Layout, backend: str) -> None:
    confined = confinement(layout, backend)
    done = run("cat ../x/f.txt", layout, confined)
    blocked = sandbox_denial(done.output.decode(errors="replace"), done.exit_code, confined.policy)
    assert blocked is not None and blocked.kept_out == (layout.base / "x" / "f.txt",)
    said = how_to_allow(blocked.kept_out, blocked.actions, confined.policy)
    assert f"AGENT_SANDBOX_READABLE={layout.base / 'x'}" in said


@pytest.mark.parametrize("where", ["home", "temp"])
def test_the_exe_s_own_files_are_readable_and_what_lies_beside_it_is_not(layout: Layout, backend: str, where: str,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    """The one-file exe is its own Python: the network door runs it inside the sandbox, so the file,
    its unpacked runtime and its extracted extensions stay readable, in the hidden home folder or a
    temp folder bubblewrap empties; a file beside the exe does not."""
    app = (layout.home if where == "home" else tmp_path) / "app"
    runtime = layout.home / ".cache" / "deepseek-agent" / "runtime" / ("0" * 32)
    native = layout.home / ".cache" / "deepseek-agent" / "native" / "ab"
    for folder in (app, runtime, native):
        folder.mkdir(parents=True)
    (app / "deepseek-agent").write_text("the exe\n")
    (app / "notes.txt").write_text(CANARY)
    (runtime / "libpython.so").write_text("the runtime\n")
    (native / "_socket.so").write_text("an extension\n")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(app / "deepseek-agent"))
    monkeypatch.setattr(sys, "prefix", str(runtime))
    confined = confinement(layout, backend)
    done = run(f"cat {app}/deepseek-agent {runtime}/libpython.so {native}/_socket.so; cat {app}/notes.txt", layout,
               confined)
    text = done.output.decode(errors="replace")
    assert "the exe" in text and "the runtime" in text and "an extension" in text, text
    if where == "home" or backend == "bwrap":
        assert CANARY not in text


def _policy_in(workspace: Path, layout: Layout, **env: str) -> Policy:
    settings = load_settings(environ={"AGENT_SANDBOX": "bwrap", **env}, env_file=layout.base / "none.env")
    return Policy.for_workspace(workspace, settings)


def test_a_readable_temp_folder_does_not_open_a_hidden_one_inside_it(layout: Layout, tmp_path: Path) -> None:
    """A workspace in /tmp hides its neighbours; listing /tmp as readable (or the agent's files living
    there) must not bring them back."""
    workspace = tmp_path / "projects" / "ws"
    workspace.mkdir(parents=True)
    (tmp_path / "projects" / "other").mkdir()
    policy = _policy_in(workspace, layout, AGENT_SANDBOX_READABLE=f"/tmp{os.pathsep}{tmp_path}")
    assert (tmp_path / "projects").resolve() in policy.hidden
    assert not policy.may_read((tmp_path / "projects" / "other" / ".env").resolve())
    assert not any(Path("/tmp").resolve() == p or tmp_path.resolve() == p for p in policy.readable)


@pytest.mark.parametrize("mode, owner, bound", [(0o700, None, True), (0o777, None, False), (0o1777, None, True),
                                                (0o1777, 4242, False)])
def test_the_exe_in_a_temp_folder_is_bound_back_only_where_no_one_else_can_swap_it(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int, owner: int | None,
        bound: bool) -> None:
    """In a sticky folder another user's file could still be swapped by them for a link."""
    app = tmp_path / "app"
    app.mkdir()
    app.chmod(mode)
    (app / "deepseek-agent").write_text("the exe\n")
    if owner is not None:
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(app / "deepseek-agent", owner, owner)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(app / "deepseek-agent"))
    policy = _policy_in(layout.workspace, layout)
    assert ((app / "deepseek-agent").resolve() in policy.readable) is bound


def test_a_cache_others_can_change_is_not_made_readable(layout: Layout, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    (shared / "cache" / "deepseek-agent" / "native").mkdir(parents=True)
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "cache"))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    policy = _policy_in(layout.workspace, layout)
    assert not any(p.is_relative_to(shared.resolve()) for p in policy.readable)
