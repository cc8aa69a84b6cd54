"""The unit block of docs/measurements.md: the wall time of the quick loop, `python3 -m pytest tests/unit`.

    python3 -m bench.unit_tier        # runs the unit tier, then writes the block (only when it passed)

The time is the run's own, from start to pytest's last line, and the counts are the ones pytest
printed, never typed. It is not a step of .ci/run, so that measuring it does not make CI longer.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/unit_tier.py` and as `python3 -m bench.unit_tier`

from bench.ci_figures import duration, pytest_summary
from bench.measurements import MEASUREMENTS, ROOT, provenance, write_or_explain

COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit"]
REPRODUCE = "python3 -m bench.unit_tier"


def unit_block(log: str, seconds: int) -> str:
    """The block's text for a run of the unit tier that printed `log` and took `seconds`."""
    rows = ["| tier | tests | wall time |", "|---|---|---:|",
            f"| unit (`python3 -m pytest tests/unit`) | {pytest_summary(log)} | {duration(seconds)} |"]
    return f"## The unit tier's own time\n\n{provenance(REPRODUCE)}\n\n" + "\n".join(rows) + "\n"


def run_unit_tier() -> tuple[int, str, int]:
    """(pytest's exit status, what it printed, whole seconds it took), its output shown as it comes."""
    start = time.monotonic()
    lines = []
    with subprocess.Popen(COMMAND, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          encoding="utf-8", errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            lines.append(line)
    return proc.returncode, "".join(lines), round(time.monotonic() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=MEASUREMENTS, help="default: docs/measurements.md")
    args = parser.parse_args(argv)
    status, log, seconds = run_unit_tier()
    if status != 0:
        print(f"unit_tier: the unit tier failed (pytest exit status {status}); the block is left as it was",
              file=sys.stderr)
        return 1
    return write_or_explain("unit_tier", "unit", lambda: unit_block(log, seconds), args.file)


if __name__ == "__main__":
    sys.exit(main())
