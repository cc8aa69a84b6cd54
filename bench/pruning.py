#!/usr/bin/env python3
"""Pruning figures, per corpus: our pruner next to the baselines and the oracle, and its throughput.

    python3 bench/pruning.py [--shared DIR] [--mb 10] [--no-throughput] [--write-docs]
    python3 -m bench.pruning ...

Two corpora: the shared one (shared/bench/pruning/cases) and ours (tests/corpus/prune/cases, real
outputs of tools the shared one lacks). Both are scored with the shared score.py (`--json`), for
our pruner and for the clip4000 and headtail baselines. The oracle of a corpus keeps exactly its
must-keep lines (their characters plus a newline each): the reduction no pruner with recall 1.0 can
beat by much, so the distance to it is how much is left on the table. Then our figures per family
(the family prune() picked), and the throughput: about 10 MB of realistic log (the shared outputs,
repeated) pruned in-process, against a floor that does almost nothing (an ANSI regex strip plus
splitlines over the same text). `--write-docs` puts the corpus tables into docs/pruning.md between
its markers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.prune import families as registry  # noqa: E402
from core.prune import prune  # noqa: E402
from core.prune.clean import ANSI_RE, decode  # noqa: E402
from core.prune.rules import is_error_line  # noqa: E402
from core.prune.stacks import is_frame  # noqa: E402
from tests.support import prune_corpus  # noqa: E402
from tests.support.prune_corpus import Case  # noqa: E402

BASELINES = ("clip4000", "headtail")
OUR_CASES = prune_corpus.CORPUS / "cases"
DOCS = ROOT / "docs" / "pruning.md"
BEGIN, END = "<!-- bench/pruning.py: begin -->", "<!-- bench/pruning.py: end -->"
QUOTED_SOURCE_RE = re.compile(r"^\s*\d*\s*[|│]")


def shared_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("DEEPSEEK_AGENT_SHARED") or Path(__file__).resolve().parents[2] / "shared")


def our_command() -> str:
    python = shlex.quote(sys.executable)
    entry = "agent.py prune" if (ROOT / "agent.py").exists() else "-m ui.prune_cli"
    return f'{python} {entry} --stdin --command "$PRUNE_CMD" --exit-code "$PRUNE_EXIT_CODE"'


@contextmanager
def scorer_for(shared_bench: Path, cases: Path) -> Iterator[Path]:
    """The shared score.py, reading `cases`: it scores the folder beside it, so a copy of it goes
    into a temporary folder with the cases (the shared corpus is scored in place)."""
    if cases == shared_bench / "cases":
        yield shared_bench / "score.py"
        return
    with tempfile.TemporaryDirectory(prefix="prune-bench-") as tmp:
        shutil.copy2(shared_bench / "score.py", tmp)
        shutil.copytree(cases, Path(tmp) / "cases")
        yield Path(tmp) / "score.py"


def oracle_reduction(cases: Path, results: list[dict]) -> float:
    """The aggregate reduction of keeping exactly the must-keep lines, one per line."""
    original = sum(r["original_chars"] for r in results)
    kept = 0
    for r in results:
        kept += min(sum(len(line) + 1 for line in Case(cases / r["case"]).must_keep), r["original_chars"])
    return 100 * (1 - kept / original)


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
        groups.setdefault(_family(Case(cases / r["case"])), []).append(r)
    out = ["| family | cases | original chars | pruned chars | reduction | recall 1.0 |", "|---|---:|---:|---:|---:|---:|"]
    for family, rs in sorted(groups.items(), key=lambda kv: -sum(r["original_chars"] for r in kv[1])):
        orig, pruned = sum(r["original_chars"] for r in rs), sum(r["pruned_chars"] for r in rs)
        full = sum(1 for r in rs if r["recall"] >= 1.0)
        out.append(f"| {family} | {len(rs)} | {orig:,} | {pruned:,} | {100 * (1 - pruned / orig):.2f}% | {full}/{len(rs)} |")
    return "\n".join(out)


def table(rows: list[tuple[str, dict]], oracle: float) -> str:
    out = ["| pruner | cases | aggregate reduction | oracle | distance to oracle | mean per-case reduction | mean recall "
           "| cases with recall < 1 |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in rows:
        out.append(f"| `{name}` | {s['cases']} | {s['aggregate_reduction_pct']:.2f}% | {oracle:.2f}% "
                   f"| {oracle - s['aggregate_reduction_pct']:.2f} | {s['mean_reduction_pct']:.2f}% "
                   f"| {s['mean_recall']:.4f} | {s['cases_recall_below_1']} |")
    return "\n".join(out)


def corpus_report(title: str, shared_bench: Path, cases: Path) -> str:
    """One corpus: the pruners' table with the oracle, then ours per family."""
    with scorer_for(shared_bench, cases) as scorer:
        ours = score(scorer, our_command())
        rows = [("ours", ours["summary"])]
        for name in BASELINES:
            baseline = f"{shlex.quote(sys.executable)} {shlex.quote(str(shared_bench / 'baselines' / name))}.py"
            rows.append((name, score(scorer, baseline)["summary"]))
    oracle = oracle_reduction(cases, ours["results"])
    every = prune_corpus.cases(cases)
    return (f"### {title}\n\n{table(rows, oracle)}\n\n{by_family(cases, ours['results'])}\n\n"
            f"Each family on the cases it handles, and the same cases without it (the next best family takes "
            f"them), and left out (the generic layer and the guard alone, as for a tool no family knows):\n\n"
            f"{ablation(every)}")


def _family(case: Case) -> str:
    return prune(case.output, command=case.command, exit_code=case.exit_code).family


def _prune_case(case: Case) -> str:
    return prune(case.output, command=case.command, exit_code=case.exit_code).text


def _recall(case: Case, pruned: str) -> bool:
    """score.py's test: every label a substring of the ANSI-stripped result."""
    hay = ANSI_RE.sub("", pruned)
    return all(line in hay for line in case.must_keep)


def _errors_lost(case: Case, pruned: str) -> bool:
    """Whether an error or failure line of the output is missing from a result the budget did not cut.
    Quoted code is not one: a stack frame (a path may hold `panic.go`), a source line under a
    compiler's finding (`11 |     int errors = 0;`)."""
    head = pruned.split("\n", 2)
    if len(head) > 1 and "-char budget" in head[1]:
        return False
    text = decode(case.output)
    lines = [ANSI_RE.sub("", line) for line in text.split("\n")]
    return any(line.strip() and is_error_line(line) and not is_frame(line) and not QUOTED_SOURCE_RE.match(line)
               and line.strip() not in pruned for line in lines)


def ablation(cases: list[Case]) -> str:
    """What each family earns: the cases it handles, pruned with it, without it (the next best
    family, or the generic rules, takes over) and left out (generic rules and the guard only: what a
    tool no family knows gets). In-process, recall tested as score.py tests it."""
    handled: dict[str, list[Case]] = {}
    for case in cases:
        handled.setdefault(_family(case), []).append(case)
    out = ["| family | cases | reduction with it | without it | left out | cases with recall < 1 with it "
           "| without it | left out | cases losing an error line, left out |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    everyone = registry.FAMILIES
    for family in everyone:
        mine = handled.get(family.name, [])
        if not mine:
            continue
        original = sum(len(c.output.decode("utf-8", errors="replace")) for c in mine)
        figures = []
        for families in (everyone, tuple(f for f in everyone if f is not family), ()):
            registry.FAMILIES = families
            try:
                results = [(c, _prune_case(c)) for c in mine]
            finally:
                registry.FAMILIES = everyone
            pruned = sum(len(text) for _, text in results)
            figures.append((100 * (1 - pruned / original), sum(not _recall(c, text) for c, text in results),
                            sum(_errors_lost(c, text) for c, text in results)))
        (with_it, lost_with, _), (without, lost_without, _), (left_out, lost_left_out, errors_left_out) = figures
        out.append(f"| {family.name} | {len(mine)} | {with_it:.2f}% | {without:.2f}% | {left_out:.2f}% | {lost_with} "
                   f"| {lost_without} | {lost_left_out} | {errors_left_out} |")
    return "\n".join(out)


def write_docs(text: str) -> None:
    """Replace the block between the markers in docs/pruning.md with `text`."""
    doc = DOCS.read_text(encoding="utf-8")
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{DOCS} has no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    DOCS.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")


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
    ap.add_argument("--no-throughput", action="store_true", help="only the corpus tables")
    ap.add_argument("--write-docs", action="store_true", help="also write the corpus tables into docs/pruning.md")
    args = ap.parse_args(argv)
    bench = shared_dir(args.shared) / "bench" / "pruning"
    if not (bench / "score.py").exists():
        sys.exit(f"no scorer at {bench / 'score.py'}; pass --shared DIR")
    reports = [corpus_report("Shared corpus (shared/bench/pruning/cases)", bench, bench / "cases"),
               corpus_report("Our corpus (tests/corpus/prune/cases)", bench, OUR_CASES)]
    text = "\n\n".join(reports)
    print(text)
    if args.write_docs:
        write_docs(text)
    if not args.no_throughput:
        print()
        print(throughput(bench / "cases", args.mb))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
