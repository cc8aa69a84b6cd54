#!/usr/bin/env python3
"""Pruning figures: our pruner next to the corpus baselines, and its throughput.

    python bench/pruning.py [--shared DIR] [--mb 10] [--no-throughput]

Runs shared/bench/pruning/score.py (`--json`) for our pruner and for the clip4000 and headtail
baselines, and prints one markdown table, then our figures per family (the family prune() picked). Then prunes about 10 MB of realistic log (the corpus
outputs, repeated) in-process and compares the time with a floor that does almost nothing:
an ANSI regex strip plus splitlines over the same text.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.prune import prune  # noqa: E402
from core.prune.clean import ANSI_RE  # noqa: E402

BASELINES = ("clip4000", "headtail")


def shared_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("DEEPSEEK_AGENT_SHARED") or Path(__file__).resolve().parents[2] / "shared")


def our_command() -> str:
    python = shlex.quote(sys.executable)
    entry = "agent.py prune" if (ROOT / "agent.py").exists() else "-m ui.prune_cli"
    return f'{python} {entry} --stdin --command "$PRUNE_CMD" --exit-code "$PRUNE_EXIT_CODE"'


def score(scorer: Path, command: str) -> dict:
    """score.py's JSON: a "summary" and per-case "results"."""
    proc = subprocess.run([sys.executable, str(scorer), "--cmd", command, "--json"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"score.py failed for {command!r}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def by_family(cases: Path, results: list[dict]) -> str:
    """Our figures per family that handled the cases (the family prune() picked for each)."""
    groups: dict[str, list[dict]] = {}
    for r in results:
        case = cases / r["case"]
        family = prune((case / "output.txt").read_bytes(), command=(case / "cmd.txt").read_text().strip(),
                       exit_code=int((case / "exit_code.txt").read_text())).family
        groups.setdefault(family, []).append(r)
    out = ["| family | cases | original chars | pruned chars | reduction | recall 1.0 |", "|---|---:|---:|---:|---:|---:|"]
    for family, rs in sorted(groups.items(), key=lambda kv: -sum(r["original_chars"] for r in kv[1])):
        orig, pruned = sum(r["original_chars"] for r in rs), sum(r["pruned_chars"] for r in rs)
        full = sum(1 for r in rs if r["recall"] >= 1.0)
        out.append(f"| {family} | {len(rs)} | {orig:,} | {pruned:,} | {100 * (1 - pruned / orig):.2f}% | {full}/{len(rs)} |")
    return "\n".join(out)


def table(rows: list[tuple[str, dict]]) -> str:
    out = ["| pruner | cases | aggregate reduction | mean per-case reduction | mean recall | cases with recall < 1 |",
           "|---|---:|---:|---:|---:|---:|"]
    for name, s in rows:
        out.append(f"| `{name}` | {s['cases']} | {s['aggregate_reduction_pct']:.2f}% | {s['mean_reduction_pct']:.2f}% "
                   f"| {s['mean_recall']:.4f} | {s['cases_recall_below_1']} |")
    return "\n".join(out)


def corpus_log(cases: Path, size: int) -> str:
    """The corpus outputs concatenated and repeated to about `size` bytes, cut at a line end."""
    parts = [p.read_bytes().decode("utf-8", errors="replace") for p in sorted(cases.glob("*/output.txt"))]
    if not parts:
        sys.exit(f"no cases under {cases}")
    block = "\n".join(parts)
    chars = int(size * len(block) / len(block.encode("utf-8")))  # `size` is in bytes
    text = block * (chars // len(block) + 1)
    return text[:text.rfind("\n", 0, chars) + 1]


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# The same text under each family's rules (the command picks the family): the slowest one counts.
FAMILY_COMMANDS = ("pytest", "python -m unittest", "npx jest", "npx tsc", "npx eslint .", "npx webpack", "npm install",
                   "cargo build", "go test ./...", "make", "git diff", "git status", "git log", "find .", "./tool")


def throughput(cases: Path, megabytes: float) -> str:
    text = corpus_log(cases, int(megabytes * 1_000_000))
    mb = len(text.encode("utf-8")) / 1_000_000
    result = prune(text, command="", exit_code=1)
    ours = best_of(3, lambda: prune(text, command="", exit_code=1))
    floor = best_of(3, lambda: ANSI_RE.sub("", text).splitlines())
    per_family = {}
    for command in FAMILY_COMMANDS:
        family = prune(text[:1000], command=command, exit_code=1).family
        per_family[family] = best_of(1, lambda c=command: prune(text, command=c, exit_code=1))
    slowest = max(per_family, key=per_family.__getitem__)
    return (f"throughput: pruned {mb:.1f} MB ({text.count(chr(10)):,} lines) to {result.pruned_chars:,} chars in "
            f"{ours:.3f} s = {mb / ours:.1f} MB/s (detected family: {result.family}); floor (ANSI regex strip + "
            f"splitlines) {floor:.3f} s; ratio {ours / floor:.1f}x\n"
            f"same text under every family's rules: slowest {slowest} {per_family[slowest]:.3f} s "
            f"({mb / per_family[slowest]:.1f} MB/s), fastest {min(per_family.values()):.3f} s")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", help="the shared folder (default: ../shared, or $DEEPSEEK_AGENT_SHARED)")
    ap.add_argument("--mb", type=float, default=10.0, help="size of the throughput log in MB (default 10)")
    ap.add_argument("--no-throughput", action="store_true", help="only the corpus table")
    args = ap.parse_args(argv)
    bench = shared_dir(args.shared) / "bench" / "pruning"
    scorer = bench / "score.py"
    if not scorer.exists():
        sys.exit(f"no scorer at {scorer}; pass --shared DIR")
    ours = score(scorer, our_command())
    rows = [("ours", ours["summary"])]
    for name in BASELINES:
        baseline = f"{shlex.quote(sys.executable)} {shlex.quote(str(bench / 'baselines' / name))}.py"
        rows.append((name, score(scorer, baseline)["summary"]))
    print(table(rows))
    print()
    print(by_family(bench / "cases", ours["results"]))
    if not args.no_throughput:
        print()
        print(throughput(bench / "cases", args.mb))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
