"""The checkout built into a wheel and installed into a fresh venv, offline: what `pip install .`
gives a user."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.support.paths import ROOT


def can_build_offline() -> bool:
    """setuptools builds wheels itself from 70.1 on; before that it needs the `wheel` package."""
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def build_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout built into a wheel (skips where that cannot be done offline)."""
    if not can_build_offline():
        pytest.skip("building offline needs setuptools >= 70.1 (requirements.lock pins it) or wheel")
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(ROOT)], capture_output=True, text=True, check=False,
                          cwd=tmp_path_factory.mktemp("cwd"))
    assert done.returncode == 0, done.stderr
    return next(out.glob("deepseek_agent-*.whl"))


def install_wheel(wheel: Path, env_dir: Path) -> dict[str, str]:
    """The wheel installed in a new venv at `env_dir`; the environment to run it in (no checkout on
    the path, none of this machine's agent settings)."""
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-q", str(wheel)]
    environ = {k: v for k, v in os.environ.items()
               if k != "PYTHONPATH" and not k.startswith(("DEEPSEEK_", "AGENT_"))}
    assert subprocess.run(pip, capture_output=True, env=environ, check=False).returncode == 0
    return environ
