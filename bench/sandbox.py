"""Sandbox overhead: a command run confined against the same command run unconfined, in one run.

Run from the repository root: `python3 -m bench.sandbox [--runs 40] [--command "true"]`. Each row is
the median wall time of `--runs` runs of `run_command` (the shell, its pipes and its reaping
included), the runs of every backend interleaved so the machine's load falls on all alike; the
set-up row is building the Landlock ruleset alone (listing the folders around the secret places and
adding a rule per entry), which every confined command pays before its fork.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runs as `python3 bench/sandbox.py` and as `python3 -m bench.sandbox`

from bench.measurements import recorded
from core.cancel import Cancel
from core.config import load_settings
from core.sandbox import Confinement, landlock, probe
from core.tools.shell import run_command


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _build_ruleset(confinement: Confinement) -> None:
    with landlock.ruleset(confinement.policy, confinement.info.abi):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    workspace = Path.cwd()
    rows: dict[str, Confinement | None] = {"unconfined": None}
    for backend in ("landlock", "bwrap"):
        if probe(backend).backend == backend:
            settings = load_settings(environ={"AGENT_SANDBOX": backend})
            rows[backend] = Confinement.for_workspace(workspace, settings)
        else:
            print(f"{backend}: not available here ({probe(backend).describe()})")
    samples: dict[str, list[float]] = {name: [] for name in rows}
    setup: list[float] = []
    for _ in range(args.runs):
        for name, confinement in rows.items():
            samples[name].append(_timed(lambda c=confinement: run_command(args.command, workspace, 30, Cancel(),
                                                                          confinement=c)))
        landlocked = rows.get("landlock")
        if landlocked is not None:
            setup.append(_timed(lambda c=landlocked: _build_ruleset(c)))
    base = _median_ms(samples["unconfined"])
    print(f"`{args.command}` through run_command, median of {args.runs} runs:")
    for name, values in samples.items():
        ms = _median_ms(values)
        print(f"  {name:<11} {ms:7.2f} ms   x{ms / base:5.2f}   (+{ms - base:5.2f} ms)")
    if setup:
        print(f"  Landlock ruleset set-up alone: {_median_ms(setup):.2f} ms")


if __name__ == "__main__":
    with recorded("sandbox", "Sandbox: the set-up cost of a command, confined against unconfined"):
        main()
