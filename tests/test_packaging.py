"""`pip install .` gives a working package and a `deepseek-agent` command (issue 9 item 8, review C10).

Built and installed offline here (the dependencies are the test environment's own); the README's
`python3 -m venv v && v/bin/pip install . && v/bin/deepseek-agent --version` does the same online.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from core import __version__
from tests.sse_server import Reply, ScriptedServer, text_events

ROOT = Path(__file__).resolve().parent.parent


def _can_build_offline() -> bool:
    """setuptools builds wheels itself from 70.1 on; before that it needs the `wheel` package."""
    import importlib.util

    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _wheel(tmp_path_factory)


def _wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout built into a wheel (skips where that cannot be done offline)."""
    if not _can_build_offline():
        pytest.skip("building offline needs setuptools >= 70.1 (requirements.lock pins it) or wheel")
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(ROOT)], capture_output=True, text=True, check=False,
                          cwd=tmp_path_factory.mktemp("cwd"))
    assert done.returncode == 0, done.stderr
    return next(out.glob("deepseek_agent-*.whl"))


def test_the_wheel_holds_every_package_and_the_command(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    packages = {str(p.parent.relative_to(ROOT)).replace(os.sep, "/") for p in (ROOT / "core").rglob("__init__.py")}
    assert packages >= {"core", "core/context", "core/prune", "core/prune/families", "core/tools"}
    for package in packages:
        assert f"{package}/__init__.py" in names, package
    assert "agent.py" in names and not any(n.startswith("tests/") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "deepseek-agent = agent:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def _install(wheel: Path, env_dir: Path) -> dict[str, str]:
    """The wheel installed in a new venv at `env_dir`; the environment to run it in (no checkout on
    the path, none of this machine's agent settings)."""
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-q", str(wheel)]
    environ = {k: v for k, v in os.environ.items()
               if k != "PYTHONPATH" and not k.startswith(("DEEPSEEK_", "AGENT_"))}
    assert subprocess.run(pip, capture_output=True, env=environ, check=False).returncode == 0
    return environ


posix_venv = pytest.mark.skipif(sys.platform == "win32", reason="the venv layout differs; the exe is Windows' package")


@posix_venv
def test_the_installed_command_runs_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "v"
    python = env_dir / "bin" / "python"
    environ = _install(wheel, env_dir)
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
    environ = _install(wheel, env_dir)
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
