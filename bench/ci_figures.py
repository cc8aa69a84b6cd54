"""The CI block of docs/measurements.md: what the last green `.ci/run` took, step by step.

.ci/run times each step with bash's SECONDS and keeps the test runs' output (`| tee LOG`), then:

    python3 -m bench.ci_figures --step "Linux exe build" 22 --step "Linux suite" 328 linux.log ... \
                                --step "whole run" 920

A step given a log gets pytest's summary from it (`992 passed, 7 skipped`), so the counts are the
ones pytest printed, never typed.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/ci_figures.py` and as `python3 -m bench.ci_figures`

from bench.measurements import MEASUREMENTS, provenance, write_or_explain

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# pytest's last line, bare (-q) or between '=' rules: "992 passed, 7 skipped, 2 warnings in 328.12s (0:05:28)"
SUMMARY = re.compile(r"^=*\s*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s\b.*?=*\s*$")
# tests/windows.py's line before it runs again the tests wine could not start a process for
RERUN = re.compile(r"^wine could not start a process in \d+ test")


@dataclass(frozen=True)
class Step:
    name: str
    seconds: int
    log: Path | None = None


def pytest_summary(text: str) -> str:
    """The counts of pytest's final summary line in `text` (the last one, if it ran more than once);
    where the Windows tier ran again what wine could not start, the whole run's and the rerun's."""
    lines = [ANSI.sub("", line) for line in text.splitlines()]
    found = [(n, m.group(1).rstrip(", ")) for n, line in enumerate(lines) if (m := SUMMARY.match(line))]
    if not found:
        raise ValueError("no pytest summary line (such as '12 passed in 3.4s') in it")
    rerun = next((n for n, line in enumerate(lines) if RERUN.match(line)), None)
    before = [counts for n, counts in found if rerun is not None and n < rerun]
    after = [counts for n, counts in found if rerun is not None and n > rerun]
    if before and after:
        return f"{before[-1]}; run again, as wine could not start a process: {after[-1]}"
    return found[-1][1]


def duration(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def ci_block(steps: list[Step]) -> str:
    rows = ["| step | tests | wall time |", "|---|---|---:|"]
    for step in steps:
        tests = pytest_summary(step.log.read_text(encoding="utf-8", errors="replace")) if step.log else ""
        rows.append(f"| {step.name} | {tests} | {duration(step.seconds)} |")
    return f"## CI: the last green `.ci/run`\n\n{provenance('CI=true ./.ci/run')}\n\n" + "\n".join(rows) + "\n"


def parse_steps(raw: list[list[str]]) -> list[Step]:
    steps = []
    for values in raw:
        if len(values) not in (2, 3) or not values[1].isdigit():
            raise ValueError(f"--step takes NAME SECONDS [LOG], got: {' '.join(values)}")
        steps.append(Step(values[0], int(values[1]), Path(values[2]) if len(values) == 3 else None))
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", nargs="+", action="append", default=[], metavar="NAME SECONDS [LOG]",
                        help="one row, in the order given; LOG is a pytest run's output")
    parser.add_argument("--file", type=Path, default=MEASUREMENTS, help="default: docs/measurements.md")
    args = parser.parse_args(argv)
    return write_or_explain("ci_figures", "ci", lambda: ci_block(parse_steps(args.step)), args.file)


if __name__ == "__main__":
    sys.exit(main())
