"""Every benchmark with a command line starts both ways the docs may show: `python3 bench/x.py` (the
folder of the script first on sys.path) and `python3 -m bench.x` (the repository root first)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_MAIN = re.compile(r"^if __name__ == .__main__.:", re.M)
_PARSER = re.compile(r"^\s+\w+ = argparse\.ArgumentParser", re.M)
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py")
                 if _MAIN.search(text := p.read_text(encoding="utf-8")) and _PARSER.search(text))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_help_runs_as_a_file_and_as_a_module(script: Path) -> None:
    if script.stem == "render" and sys.platform == "win32":
        pytest.skip("the render benchmark drives a POSIX pseudo-terminal (termios)")
    figures = (ROOT / "docs" / "measurements.md").read_bytes()
    for argv in ([sys.executable, str(script.relative_to(ROOT)), "--help"],
                 [sys.executable, "-m", f"bench.{script.stem}", "--help"]):
        run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and "usage:" in run.stdout, (argv, run.stderr[-500:])
    assert (ROOT / "docs" / "measurements.md").read_bytes() == figures, "a usage text replaced measured figures"
