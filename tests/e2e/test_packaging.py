"""`pip install .` gives a working package and a `deepseek-agent` command.

Built and installed offline here (the dependencies are the test environment's own); the README's
`python3 -m venv v && v/bin/pip install . && v/bin/deepseek-agent --version` does the same online.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from core import __version__
from tests.support.packaging import build_wheel, install_wheel
from tests.support.paths import ROOT
from tests.support.sse_server import Reply, ScriptedServer, text_events


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory)


def test_the_wheel_holds_every_package_and_the_command(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    packages = {str(p.parent.relative_to(ROOT)).replace(os.sep, "/") for p in (ROOT / "core").rglob("__init__.py")}
    assert packages >= {"core", "core/context", "core/prune", "core/prune/families", "core/tools"}
    for package in packages:
        assert f"{package}/__init__.py" in names, package
    assert "agent.py" in names and not any(n.startswith(("tests/", "devtools/", "bench/")) for n in names)
    assert "core/i18n/locale/zh_CN/LC_MESSAGES/deepseek-agent.mo" in names  # the Chinese interface
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "deepseek-agent = agent:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


posix_venv = pytest.mark.skipif(sys.platform == "win32", reason="the venv layout differs; the exe is Windows' package")


@posix_venv
def test_the_installed_command_runs_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "v"
    python = env_dir / "bin" / "python"
    environ = install_wheel(wheel, env_dir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    version = subprocess.run([str(env_dir / "bin" / "deepseek-agent"), "--version"], capture_output=True,
                             text=True, cwd=elsewhere, env=environ, check=False)
    assert version.returncode == 0 and version.stdout.strip() == f"deepseek-agent {__version__}", version.stderr
    imports = "import core.agent.loop, core.runtime.open, ui.prune_cli, core.tools.search, core.context; print(core.__file__)"
    where = subprocess.run([str(python), "-c", imports], capture_output=True, text=True, cwd=elsewhere,
                           env=environ, check=False)
    assert where.returncode == 0, where.stderr
    assert str(env_dir) in where.stdout  # the installed copy, not the checkout


@posix_venv
def test_the_installed_command_reads_its_env_from_the_user_config_folder(wheel: Path, tmp_path: Path) -> None:
    """Not from site-packages (shared, often read-only, replaced on upgrade), and not from the current
    folder (a cloned repository's .env could send the key to its own server)."""
    env_dir = tmp_path / "v"
    environ = install_wheel(wheel, env_dir)
    config = tmp_path / "config" / "deepseek-agent"
    config.mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("DEEPSEEK_BASE_URL=http://127.0.0.1:9/v1\n")  # the repository's own: ignored
    with ScriptedServer([Reply(text_events("answered from the config folder"))]) as server:
        (config / ".env").write_text(f"DEEPSEEK_BASE_URL={server.url}\nDEEPSEEK_API_KEY=sk-from-config-0123456\n"
                                     f"AGENT_SESSIONS_DIR={tmp_path / 'sessions'}\n")
        done = subprocess.run([str(env_dir / "bin" / "deepseek-agent"), "--one", "hi"], capture_output=True,
                              text=True, cwd=project, env={**environ, "XDG_CONFIG_HOME": str(tmp_path / "config")},
                              check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "answered from the config folder\n"
    assert {k.lower(): v for k, v in server.headers[0].items()}["authorization"] == "Bearer sk-from-config-0123456"
    assert not list((env_dir / "lib").glob("python*/site-packages/.env"))
